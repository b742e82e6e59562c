// The host task pool of a distributed task-queue run (TaskPoolPort, cpu/policies/task_queue.hpp):
// what it lends, when it asks, when it is idle, and how it feeds the queues, without MPI.
#include <gtest/gtest.h>

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

TEST(TaskPoolPort, LendsHalfFromTheFarEndAsksBelowARefillAndIsIdleOnlyWhenEmpty) {
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.workers = 1;
  plan.trace = false;
  Runtime rt(plan, 16);
  FakeQueues queues;
  TaskQueueHost<FakePublisher> host(FakePublisher{&queues}, 1, 3);
  const std::vector<Task> initial = numbered(10);
  TaskPoolPort<FakePublisher> pool(rt, host, initial, /*refill*/ 4);
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
  EXPECT_TRUE(pool.idle()) << "everything is in the queues";
  EXPECT_EQ(pool.take(out), 0u);

  pool.insert(numbered(2));
  EXPECT_FALSE(pool.idle());
}

}  // namespace
}  // namespace gpulb::cpu::detail
