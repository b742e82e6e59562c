// The limits of waits between ranks count only the time this process ran: a rank that was itself
// stopped (SIGSTOP) and resumed must not blame the rank it waits for. Each test runs the wait in
// a child process, which the test stops and resumes as a user or a hung node would.
#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "deadline.hpp"
#include "patience.hpp"

namespace gpulb::distributed::detail {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Runs `child` in a child process; `stop_for` > 0: the child is stopped 100 ms in for that long,
// then resumed. Returns the child's exit code (-1: it did not exit normally).
int exit_code_of(const std::function<int()>& child, std::chrono::milliseconds stop_for) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  if (stop_for > 0ms) {
    std::this_thread::sleep_for(100ms);
    ::kill(pid, SIGSTOP);
    std::this_thread::sleep_for(stop_for);
    ::kill(pid, SIGCONT);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Waits `wall` of wall-clock time, polling as the waits between ranks do; 1 where the patience
// of `limit` ran out first.
int poll_for(std::chrono::milliseconds wall, std::chrono::milliseconds limit) {
  Patience patience(limit);
  const auto start = Clock::now();
  while (Clock::now() - start < wall) {
    if (patience.run_out()) return 1;
    std::this_thread::sleep_for(1ms);
  }
  return 0;
}

TEST(RankWaitLimits, AStopOfTheWaitingRankItselfDoesNotCountAgainstTheOtherRank) {
  // 1.9 s of wall time against a 1 s limit, 1.5 s of it stopped: about 0.65 s counted.
  EXPECT_EQ(exit_code_of([] { return poll_for(1900ms, 1000ms); }, 1500ms), 0);
  // Without the stop the same wait runs out: the limit does hold.
  EXPECT_EQ(exit_code_of([] { return poll_for(1900ms, 1000ms); }, 0ms), 1);
}

// A Deadline watches a wait inside MPI (its start and end); it ends the process with its exit
// code when the wait outlives the limit.
int wait_under_deadline(std::chrono::milliseconds wait) {
  Deadline deadline("a test wait", "the test waited too long", 1000ms, 7);
  std::this_thread::sleep_for(200ms);  // the stop comes in here
  std::this_thread::sleep_for(wait);   // after the resume: 200 ms more of running time
  return 0;
}

TEST(RankWaitLimits, ADeadlineCountsOnlyTheTimeItsProcessRan) {
  EXPECT_EQ(exit_code_of([] { return wait_under_deadline(200ms); }, 1500ms), 0);
  EXPECT_EQ(exit_code_of([] { return wait_under_deadline(1500ms); }, 0ms), 7);
}

}  // namespace
}  // namespace gpulb::distributed::detail
