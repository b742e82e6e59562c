#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "deadline.hpp"
#include "gpulb/distributed/mpi_distribution.hpp"
#include "mpi_check.hpp"
#include "rank_wait.hpp"

namespace gpulb::distributed {
namespace {

// Point-to-point tags on MPI_COMM_WORLD, which nothing else sends on (the run's messages go on
// MpiDistribution's own communicators).
constexpr int kTagCommandLength = 101;
constexpr int kTagCommand = 102;
constexpr int kTagVerdictLength = 103;
constexpr int kTagVerdict = 104;
constexpr int kTagExitCode = 105;
constexpr int kTagEndSeen = 106;
constexpr int kExitWaitFailed = 1;  // the CLI's exit codes (tools/src/main.cpp)
constexpr int kExitBadJob = 2;

// MPI_Init_thread and MPI_Finalize wait for every rank inside the library, which cannot say which
// rank it waits for; what can be said comes from Open MPI's launcher: the ranks of each program
// of an MPMD command line (`mpirun -np 1 A : -np 1 B`).
struct Launch {
  std::string rank = "?";
  std::vector<std::pair<int, int>> programs;  // first rank and rank count of each program
  int own_program = -1;
};

Launch launch_from_environment() {
  Launch l;
  if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK")) l.rank = r;
  const char* counts = std::getenv("OMPI_APP_CTX_NUM_PROCS");
  const char* own = std::getenv("OMPI_MCA_orte_app_num");
  if (counts == nullptr || own == nullptr) return l;
  std::istringstream in(counts);
  int first = 0;
  for (int n = 0; in >> n;) {
    l.programs.emplace_back(first, n);
    first += n;
  }
  l.own_program = std::atoi(own);
  return l;
}

std::string rank_range(std::pair<int, int> p) {
  return p.second == 1
             ? "rank " + std::to_string(p.first)
             : "ranks " + std::to_string(p.first) + ".." + std::to_string(p.first + p.second - 1);
}

// Why MPI's start may wait: the ranks of the other programs where the job has several, which do
// not run gpulb's start (they may never call MPI at all).
std::string start_wait_reason(const Launch& l) {
  std::string others;
  for (std::size_t i = 0; i < l.programs.size(); ++i) {
    if (static_cast<int>(i) != l.own_program)
      others += (others.empty() ? "" : ", ") + rank_range(l.programs[i]);
  }
  if (others.empty()) return "a rank is stopped, or died before it started MPI";
  return others +
         " of this job run another program of mpirun's command line (after ':'), which has not "
         "started MPI; every rank of "
         "a --distributed job must be `gpulb run ... --distributed` with the same arguments";
}

int start_wait_exit_code(const Launch& l) {
  return l.programs.size() > 1 ? kExitBadJob : kExitWaitFailed;
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv, std::uint32_t rank_timeout_ms)
    : rank_timeout_ms_(rank_timeout_ms) {
  // FUNNELED: only the thread that called MPI_Init_thread calls MPI (the local run's host thread
  // is the main thread; workers never touch MPI).
  int provided = 0;
  {
    const Launch launch = launch_from_environment();
    detail::Deadline deadline(
        "rank " + launch.rank + ": starting MPI (which waits for every rank of the job)",
        start_wait_reason(launch), library_wait_limit(), start_wait_exit_code(launch));
    GPULB_MPI_TRY(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  }
  if (provided < MPI_THREAD_FUNNELED) {
    finalize();  // on the way to the error below, which says what matters
    throw RunError("this MPI library does not support MPI_THREAD_FUNNELED (it gave level " +
                   std::to_string(provided) + ")");
  }
  // Errors come back as return codes (GPULB_MPI_TRY throws them) instead of aborting in the library
  // with its own message: the caller names the rank and what it was doing.
  GPULB_MPI_TRY(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int r = 0, n = 1;
  GPULB_MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &r));
  GPULB_MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &n));
  rank_ = static_cast<std::uint32_t>(r);
  ranks_ = static_cast<std::uint32_t>(n);
}

MpiSession::~MpiSession() { finalize(); }

void MpiSession::finalize() {
  // Open MPI's MPI_Finalize waits for every rank: one that stopped after end_run heard from it
  // would hold this one here.
  detail::Deadline deadline(who() + ": ending MPI (which waits for every rank)",
                            run_ended_ ? "a rank stopped or hung after it answered at the end of "
                                         "the run (rank 0 had its results by then)"
                                       : "a rank is stopped or hung",
                            library_wait_limit());
  if (MPI_Finalize() != MPI_SUCCESS)
    std::fprintf(stderr, "gpulb: warning: %s: MPI_Finalize failed\n", who().c_str());
}

std::string MpiSession::who() const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(ranks_);
}

void MpiSession::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  (void)MPI_Abort(MPI_COMM_WORLD, code);  // returns only if it failed, and then _Exit follows
  std::_Exit(code);  // MPI_Abort does not return; if it did, the process still must end
}

void MpiSession::fail(const std::string& text, int code) {
  const std::string line = "gpulb: error: " + who() + ": " + text + "\n";
  (void)!std::fwrite(line.data(), 1, line.size(),
                     stderr);  // one write: mpirun interleaves the ranks' output
  abort(code);
}

MpiSession::Agreement MpiSession::agree_with_root(const std::string& command) {
  try {
    return rank_ == 0 ? agree_as_root(command) : agree_as_other(command);
  } catch (const std::exception& e) {
    fail(e.what(), kExitBadJob);
  }
}

// Rank 0 hears every rank's command, then tells each rank which ranks differ and its own command.
MpiSession::Agreement MpiSession::agree_as_root(const std::string& command) {
  detail::Patience patience{std::chrono::milliseconds(rank_timeout_ms_)};
  const std::string doing = "the ranks compared their arguments with rank 0's, before any work";
  std::vector<int> others;
  for (std::uint32_t r = 1; r < ranks_; ++r) others.push_back(static_cast<int>(r));
  std::vector<int> lengths(others.size());
  std::vector<MPI_Request> requests(others.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < others.size(); ++i) {
    GPULB_MPI_TRY(MPI_Irecv(&lengths[i], 1, MPI_INT, others[i], kTagCommandLength, MPI_COMM_WORLD,
                            &requests[i]));
  }
  detail::wait_for_ranks(requests, others, patience, doing);
  std::vector<std::string> commands(others.size());
  for (std::size_t i = 0; i < others.size(); ++i) {
    commands[i].resize(static_cast<std::size_t>(lengths[i]));
    GPULB_MPI_TRY(MPI_Irecv(commands[i].data(), lengths[i], MPI_CHAR, others[i], kTagCommand,
                            MPI_COMM_WORLD, &requests[i]));
  }
  detail::wait_for_ranks(requests, others, patience, doing);

  Agreement a;
  a.root_command = command;
  for (std::size_t i = 0; i < others.size(); ++i) {
    if (commands[i] != command) a.differing.push_back(static_cast<std::uint32_t>(others[i]));
  }
  // The verdict: the differing ranks, then rank 0's command.
  std::string verdict(sizeof(std::uint32_t) * (a.differing.size() + 1), '\0');
  const auto count = static_cast<std::uint32_t>(a.differing.size());
  std::memcpy(verdict.data(), &count, sizeof count);
  if (count > 0)
    std::memcpy(verdict.data() + sizeof count, a.differing.data(), sizeof(std::uint32_t) * count);
  verdict += command;
  const int length = static_cast<int>(verdict.size());
  for (int r : others)
    detail::send_to_rank(&length, 1, MPI_INT, r, kTagVerdictLength, MPI_COMM_WORLD, patience,
                         doing);
  for (int r : others)
    detail::send_to_rank(verdict.data(), length, MPI_CHAR, r, kTagVerdict, MPI_COMM_WORLD, patience,
                         doing);
  return a;
}

MpiSession::Agreement MpiSession::agree_as_other(const std::string& command) {
  detail::Patience patience{std::chrono::milliseconds(rank_timeout_ms_)};
  const std::string doing = "this rank sent its arguments to rank 0 to compare, before any work";
  const int length = static_cast<int>(command.size());
  detail::send_to_rank(&length, 1, MPI_INT, 0, kTagCommandLength, MPI_COMM_WORLD, patience, doing);
  detail::send_to_rank(command.data(), length, MPI_CHAR, 0, kTagCommand, MPI_COMM_WORLD, patience,
                       doing);
  int verdict_length = 0;
  detail::receive_from_rank(&verdict_length, 1, MPI_INT, 0, kTagVerdictLength, MPI_COMM_WORLD,
                            patience, doing);
  std::string verdict(static_cast<std::size_t>(verdict_length), '\0');
  detail::receive_from_rank(verdict.data(), verdict_length, MPI_CHAR, 0, kTagVerdict,
                            MPI_COMM_WORLD, patience, doing);
  std::uint32_t count = 0;
  if (verdict.size() < sizeof count)
    throw RunError("rank 0 sent a verdict of " + std::to_string(verdict.size()) + " bytes");
  std::memcpy(&count, verdict.data(), sizeof count);
  const std::size_t header = sizeof(std::uint32_t) * (std::size_t{count} + 1);
  if (count >= ranks_ || verdict.size() < header) throw RunError("rank 0 sent a damaged verdict");
  Agreement a;
  a.differing.resize(count);
  if (count > 0)
    std::memcpy(a.differing.data(), verdict.data() + sizeof count, sizeof(std::uint32_t) * count);
  a.root_command = verdict.substr(header);
  return a;
}

int MpiSession::end_run(int code, const std::string& outcome,
                        std::chrono::milliseconds root_work_limit) {
  try {
    if (rank_ != 0) {
      // Rank 0 verifies and writes the trace before it answers: the limit allows for that work.
      detail::Patience patience(root_work_limit);
      const std::string doing = "this rank waited for rank 0 to verify the results and end the run";
      detail::receive_from_rank(&code, 1, MPI_INT, 0, kTagExitCode, MPI_COMM_WORLD, patience,
                                doing);
      detail::send_to_rank(&code, 1, MPI_INT, 0, kTagEndSeen, MPI_COMM_WORLD, patience, doing);
      run_ended_ = true;
      return code;
    }
    detail::Patience patience{std::chrono::milliseconds(rank_timeout_ms_)};
    std::vector<int> others;
    for (std::uint32_t r = 1; r < ranks_; ++r) others.push_back(static_cast<int>(r));
    std::vector<MPI_Request> sends(others.size(), MPI_REQUEST_NULL),
        seen(others.size(), MPI_REQUEST_NULL);
    std::vector<int> echoes(others.size());
    for (std::size_t i = 0; i < others.size(); ++i) {
      GPULB_MPI_TRY(
          MPI_Isend(&code, 1, MPI_INT, others[i], kTagExitCode, MPI_COMM_WORLD, &sends[i]));
      GPULB_MPI_TRY(
          MPI_Irecv(&echoes[i], 1, MPI_INT, others[i], kTagEndSeen, MPI_COMM_WORLD, &seen[i]));
    }
    const std::string doing = "rank 0 told every rank that the run is over (" + outcome + ")";
    detail::wait_for_ranks(sends, others, patience, doing);
    detail::wait_for_ranks(seen, others, patience, doing);
    run_ended_ = true;
    return code;
  } catch (const std::exception& e) {
    fail(e.what(), kExitWaitFailed);
  }
}

}  // namespace gpulb::distributed
