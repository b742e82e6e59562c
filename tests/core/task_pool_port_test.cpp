// The host task pool of a distributed task-queue run (TaskPoolPort, cpu/policies/task_queue.hpp):
// what it lends, when it asks, when it is idle, how it feeds the queues, and its watchdog, without MPI.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/cpu/policies/task_queue.hpp"
#include "gpulb/policies/task_queue.hpp"

namespace gpulb::cpu::detail {
namespace {

// Queues that take one batch and then stay busy until the test frees them.
struct FakeQueues {
  bool free = true;
  std::vector<Task> published;
};
struct FakePublisher {
  FakeQueues* q;
  bool ready(std::uint32_t, std::uint32_t) const { return q->free; }
  void publish(std::uint32_t, const Task* tasks, std::uint32_t n, std::uint32_t) const {
    q->published.insert(q->published.end(), tasks, tasks + n);
    q->free = false;
  }
};

std::vector<Task> numbered(std::uint32_t n) {
  std::vector<Task> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i].id = i;
  return v;
}

std::string no_state() { return "test"; }

TEST(TaskPoolPort, LendsHalfFromTheFarEndAsksBelowARefillAndIsIdleOnlyWhenEverythingRan) {
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.workers = 1;
  plan.trace = false;
  Runtime rt(plan, 16);
  FakeQueues queues;
  TaskQueueHost<FakePublisher> host(FakePublisher{&queues}, 1, 3);
  const std::vector<Task> initial = numbered(10);
  TaskPoolPort<FakePublisher> pool(rt, host, initial, /*refill*/ 4, no_state);
  EXPECT_FALSE(pool.idle());
  EXPECT_FALSE(pool.hungry());

  std::vector<Task> out(20);
  ASSERT_EQ(pool.take(out), 5u) << "at most half of the pool";
  EXPECT_EQ(out[0].id, 5u);
  EXPECT_EQ(out[4].id, 9u);

  pool.pump();  // one batch of 3 (the queue's capacity), then the queue is busy
  ASSERT_EQ(queues.published.size(), 3u);
  EXPECT_EQ(queues.published[0].id, 0u);
  EXPECT_TRUE(pool.hungry()) << "2 left, under one refill of 4";
  EXPECT_FALSE(pool.idle());
  EXPECT_EQ(pool.take(out), 1u);
  EXPECT_EQ(out[0].id, 4u);

  queues.free = true;
  pool.pump();
  EXPECT_EQ(queues.published.size(), 4u);
  EXPECT_FALSE(pool.idle()) << "the pool is empty, but 4 tasks in the queues have not run";
  EXPECT_EQ(pool.take(out), 0u) << "what is in the queues is the workers' already";
  rt.slot(0).tasks_done = 4;  // the worker ran them
  EXPECT_TRUE(pool.idle());

  pool.insert(numbered(2));
  EXPECT_FALSE(pool.idle());
}

// A spawning scenario's pool (one host or a rank): fed youngest first, lent oldest first, and idle
// only once every published task has retired and no outbox holds a child (SpawnOutbox's order:
// children before the retirement that counts them).
TEST(TaskPoolPort, ASpawningPoolFeedsTheYoungestLendsTheOldestAndEndsOnlyWithNoChildLeft) {
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.workers = 1;
  plan.trace = false;
  Runtime rt(plan, 16);
  FakeQueues queues;
  TaskQueueHost<FakePublisher> host(FakePublisher{&queues}, 1, 3);
  SpawnOutboxes boxes(1, 16);
  const std::vector<Task> initial = numbered(8);
  TaskPoolPort<FakePublisher> pool(rt, host, initial, /*refill*/ 4, no_state, &boxes);

  std::vector<Task> out(2);
  ASSERT_EQ(pool.take(out), 2u);
  EXPECT_EQ(out[0].id, 0u) << "lent from the old end";
  EXPECT_EQ(out[1].id, 1u);
  pool.pump();
  ASSERT_EQ(queues.published.size(), 3u);
  EXPECT_EQ(queues.published[0].id, 5u) << "fed from the young end";
  EXPECT_EQ(queues.published[2].id, 7u);
  std::vector<Task> rest(8);
  ASSERT_EQ(pool.take(rest), 1u) << "half of the 3 left";
  EXPECT_EQ(rest[0].id, 2u);
  queues.free = true;
  pool.pump();  // 3 and 4
  ASSERT_EQ(queues.published.size(), 5u);

  // The worker runs the 5 published tasks; the last one spawns two children.
  SpawnOutbox& box = boxes[0];
  const std::atomic<bool> stop{false};
  for (int i = 0; i < 4; ++i) box.retire();
  EXPECT_FALSE(pool.idle()) << "a published task has not retired";
  const std::vector<Task> kids = numbered(2);
  ASSERT_TRUE(box.push(kids.data(), 2, stop));
  box.retire();
  EXPECT_FALSE(pool.idle()) << "every task retired, but two children wait in the outbox";
  queues.free = false;
  pool.pump();
  EXPECT_FALSE(pool.idle()) << "the children are in the pool, and no queue is free";
  EXPECT_EQ(pool.peak(), 8u);
  queues.free = true;
  pool.pump();
  ASSERT_EQ(queues.published.size(), 7u);
  EXPECT_FALSE(pool.idle()) << "the children are in a queue, not yet run";
  box.retire();
  box.retire();
  EXPECT_TRUE(pool.idle());
}

// The local watchdog of a distributed run (Runtime::watch through check()): it fires where a task
// in the queues does not finish for watchdog_ms, and never while the rank has nothing to do.
TEST(TaskPoolPort, CheckFiresTheWatchdogOnlyWhileATaskIsOutstanding) {
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.workers = 1;
  plan.trace = false;
  plan.run_options.watchdog_ms = 20;
  Runtime rt(plan, 16);
  FakeQueues queues;
  TaskQueueHost<FakePublisher> host(FakePublisher{&queues}, 1, 3);
  const std::vector<Task> none;
  TaskPoolPort<FakePublisher> pool(rt, host, none, /*refill*/ 4, no_state);

  // Idle for 5 x watchdog_ms: waiting for work is not a fault.
  const auto poll_for = [&](std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
      pool.check();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  ASSERT_TRUE(pool.idle());
  EXPECT_NO_THROW(poll_for(std::chrono::milliseconds(100)));
  EXPECT_FALSE(rt.stop_requested());

  // A task published and never finished: the watchdog fires, names itself, and stops the workers.
  pool.insert(numbered(1));
  pool.pump();
  ASSERT_EQ(queues.published.size(), 1u);
  ASSERT_FALSE(pool.idle());
  try {
    poll_for(std::chrono::milliseconds(2000));
    FAIL() << "the watchdog did not fire within 2 s (watchdog_ms=20)";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "made no progress for 20 ms while this rank had tasks queued or running"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(rt.stop_requested());
}

}  // namespace
}  // namespace gpulb::cpu::detail
