// The Chen et al. task queue and the hardware baseline on the CPU backend, under contention.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "policy_handles.hpp"
#include "gpulb/cpu/execute.hpp"
#include "gpulb/task_queue.hpp"
#include "test_bodies.hpp"

namespace gpulb {
namespace {

using testing::CountingBody;
using testing::kContentionTasks;

std::vector<Task> numbered_tasks(std::uint32_t n) {
  std::vector<Task> tasks(n);
  for (std::uint32_t i = 0; i < n; ++i) tasks[i].id = i;
  return tasks;
}

ExecPlan plan_for(Policy policy, const std::vector<Task>& tasks, std::uint32_t workers) {
  ExecPlan plan;
  plan.policy = policy;
  plan.workers = workers;
  plan.block_size = 1;
  plan.trace = false;
  plan.tasks = tasks;
  return plan;
}

void expect_each_ran_once(const std::vector<std::uint32_t>& counts) {
  const auto bad =
      std::find_if(counts.begin(), counts.end(), [](std::uint32_t c) { return c != 1; });
  EXPECT_TRUE(bad == counts.end())
      << "task " << (bad - counts.begin()) << " ran " << *bad << " times";
}

struct QueueShape {
  std::uint32_t queues;
  std::uint32_t capacity;
  std::uint32_t workers;
  std::uint32_t tasks;
};

class TaskQueueContention : public ::testing::TestWithParam<QueueShape> {};

TEST_P(TaskQueueContention, EveryTaskRunsExactlyOnce) {
  const QueueShape s = GetParam();
  const auto tasks = numbered_tasks(s.tasks);
  std::vector<std::uint32_t> counts(s.tasks, 0);
  ExecPlan plan = plan_for(&policies::task_queue(), tasks, s.workers);
  plan.options.edit<policies::TaskQueueOptions>().queues = s.queues;
  plan.options.edit<policies::TaskQueueOptions>().queue_capacity = s.capacity;
  const ExecOutput out = cpu::execute(plan, CountingBody{counts.data()});
  EXPECT_EQ(out.tasks_run, s.tasks);
  expect_each_ran_once(counts);
}

INSTANTIATE_TEST_SUITE_P(QueuesAndBatches, TaskQueueContention,
                         ::testing::Values(QueueShape{1, 256, 8, kContentionTasks},
                                           QueueShape{2, 32, 8, kContentionTasks},
                                           QueueShape{4, 1024, 16, kContentionTasks},
                                           QueueShape{3, 7, 6, kContentionTasks / 10},
                                           QueueShape{1, 1, 4, 20'000},
                                           QueueShape{8, 3, 12, 50'000}),
                         [](const auto& info) {
                           const QueueShape& s = info.param;
                           return "q" + std::to_string(s.queues) + "_cap" +
                                  std::to_string(s.capacity) + "_w" + std::to_string(s.workers) +
                                  "_n" + std::to_string(s.tasks);
                         });

TEST(TaskQueue, HaltStopsEveryWorkerExactlyOnce) {
  const auto tasks = numbered_tasks(5000);
  std::vector<std::uint32_t> counts(tasks.size(), 0);
  ExecPlan plan = plan_for(&policies::task_queue(), tasks, 7);
  plan.trace = true;
  plan.options.edit<policies::TaskQueueOptions>().queue_capacity =
      5;  // fewer slots than workers: the HALTs take several batches
  const ExecOutput out = cpu::execute(plan, CountingBody{counts.data()});
  expect_each_ran_once(counts);
  std::uint32_t worker_tracks = 0;
  for (const trace::Track& tr : out.trace.tracks) {
    if (tr.role != trace::TrackRole::Worker) continue;
    ++worker_tracks;
    ASSERT_EQ(tr.dropped, 0u) << tr.name;
    const auto halts = std::count_if(tr.events.begin(), tr.events.end(), [](const trace::Event& e) {
      return e.kind == trace::EventKind::Halt;
    });
    EXPECT_EQ(halts, 1) << tr.name;
    ASSERT_GE(tr.events.size(), 2u);
    EXPECT_EQ(tr.events.back().kind, trace::EventKind::WorkerEnd) << tr.name;
    EXPECT_EQ(tr.events[tr.events.size() - 2].kind, trace::EventKind::Halt)
        << tr.name << ": HALT is its last task";
  }
  EXPECT_EQ(worker_tracks, 7u);
}

TEST(TaskQueue, HostEnqueuesOnItsOwnTrackInBatchesOfTheQueueCapacity) {
  const auto tasks = numbered_tasks(1000);
  std::vector<std::uint32_t> counts(tasks.size(), 0);
  ExecPlan plan = plan_for(&policies::task_queue(), tasks, 3);
  plan.trace = true;
  plan.options.edit<policies::TaskQueueOptions>().queue_capacity = 64;
  const ExecOutput out = cpu::execute(plan, CountingBody{counts.data()});
  const trace::Track& host = out.trace.tracks.back();
  ASSERT_EQ(host.role, trace::TrackRole::Host);
  std::uint64_t enqueued = 0;
  for (const trace::Event& e : host.events) {
    if (e.kind != trace::EventKind::HostEnqueue) continue;
    EXPECT_LE(e.arg, 64u);
    enqueued += e.arg;
  }
  EXPECT_EQ(enqueued, 1000u + 3u);  // every task and one HALT per worker
}

TEST(TaskQueue, WatchdogStopsARunThatMakesNoProgress) {
  const auto tasks = numbered_tasks(64);
  ExecPlan plan = plan_for(&policies::task_queue(), tasks, 2);
  plan.run_options.watchdog_ms = 200;
  try {
    cpu::execute(plan, testing::StuckBody{});
    FAIL() << "a stuck run returned";
  } catch (const RunError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("watchdog"), std::string::npos) << msg;
    EXPECT_NE(msg.find("task-queue"), std::string::npos) << msg;
    EXPECT_NE(msg.find("200 ms"), std::string::npos) << msg;
    EXPECT_NE(msg.find("h_consumed/h_written"), std::string::npos) << msg;
  }
}

TEST(Hardware, EveryBlockRunsExactlyOnce) {
  const auto tasks = numbered_tasks(kContentionTasks);
  std::vector<std::uint32_t> counts(tasks.size(), 0);
  const ExecOutput out =
      cpu::execute(plan_for(&policies::hardware(), tasks, 8), CountingBody{counts.data()});
  EXPECT_EQ(out.tasks_run, tasks.size());
  expect_each_ran_once(counts);
}

// Chen et al. Solution 3 on host threads: launches of `chunk` tasks, each ending before the next
// starts (a barrier), every task once, one KernelLaunch/KernelEnd pair a chunk on the host track.
TEST(Chunked, EveryTaskRunsOnceInLaunchesOfTheChunkSize) {
  const auto tasks = numbered_tasks(1000);
  std::vector<std::uint32_t> counts(tasks.size(), 0);
  ExecPlan plan = plan_for(&policies::chunked(), tasks, 4);
  plan.trace = true;
  plan.options.edit<policies::ChunkedOptions>().chunk = 120;
  const ExecOutput out = cpu::execute(plan, CountingBody{counts.data()});
  EXPECT_EQ(out.tasks_run, tasks.size());
  expect_each_ran_once(counts);
  const trace::Track& host = out.trace.tracks.back();
  ASSERT_EQ(host.role, trace::TrackRole::Host);
  std::vector<std::uint32_t> launches, ends;
  for (const trace::Event& e : host.events) {
    if (e.kind == trace::EventKind::KernelLaunch) launches.push_back(e.arg);
    if (e.kind == trace::EventKind::KernelEnd) ends.push_back(e.arg);
  }
  const std::vector<std::uint32_t> expected = {120, 120, 120, 120, 120, 120, 120, 120, 40};
  EXPECT_EQ(launches, expected);
  EXPECT_EQ(ends, expected);
  // No task of a launch begins before the previous launch's last task has ended.
  std::vector<std::uint64_t> begin(tasks.size()), end(tasks.size());
  for (const trace::Track& t : out.trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::TaskBegin) begin[e.arg] = e.time_ns;
      if (e.kind == trace::EventKind::TaskEnd) end[e.arg] = e.time_ns;
    }
  }
  for (std::uint32_t c = 1; c * 120 < tasks.size(); ++c) {
    const std::uint64_t last_end =
        *std::max_element(end.begin() + (c - 1) * 120, end.begin() + c * 120);
    const std::uint64_t first_begin =
        *std::min_element(begin.begin() + c * 120,
                          begin.begin() + std::min<std::size_t>(tasks.size(), (c + 1) * 120));
    EXPECT_LE(last_end, first_begin) << "launch " << c;
  }
}

TEST(Chunked, EveryTaskRunsOnceUnderContention) {
  const auto tasks = numbered_tasks(kContentionTasks / 10);
  std::vector<std::uint32_t> counts(tasks.size(), 0);
  const ExecOutput out =
      cpu::execute(plan_for(&policies::chunked(), tasks, 8), CountingBody{counts.data()});
  EXPECT_EQ(out.tasks_run, tasks.size());
  expect_each_ran_once(counts);
}

TEST(Tracing, FullSegmentsCountWhatTheyDrop) {
  const auto tasks = numbered_tasks(1000);
  std::vector<std::uint32_t> counts(tasks.size(), 0);
  ExecPlan plan = plan_for(&policies::hardware(), tasks, 2);
  plan.trace = true;
  plan.run_options.trace_capacity = 50;
  const ExecOutput out = cpu::execute(plan, CountingBody{counts.data()});
  std::uint64_t kept = 0, dropped = 0;
  for (const trace::Track& tr : out.trace.tracks) {
    if (tr.role != trace::TrackRole::Worker) continue;
    // 50 events' memory (800 bytes): a timed event takes 16 of them, an untimed one 8 and a whole
    // untimed task 8 (cpu/trace_stream.hpp), so at most 4 x 50 events.
    EXPECT_LE(tr.events.size(), 4u * 50u);
    kept += tr.events.size();
    dropped += tr.dropped;
  }
  // Each worker writes start, begin/end per task, end: 2 + 2 x 1000 in all.
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(kept + dropped, 2u * 2u + 2u * 1000u);
  expect_each_ran_once(counts);
}

// A publisher whose queues are drained when the test says so: TaskQueueHost::queued counts the
// batches not yet consumed to their last task (a distributed GPU run's hunger counts them).
struct DrainedWhenTold {
  std::uint32_t* consumed;
  bool ready(std::uint32_t q, std::uint32_t h_written) const { return consumed[q] == h_written; }
  void publish(std::uint32_t, const Task*, std::uint32_t, std::uint32_t) const {}
};

TEST(TaskQueueHost, QueuedCountsTheBatchesNotYetConsumed) {
  std::uint32_t consumed[3] = {0, 0, 0};
  TaskQueueHost host(DrainedWhenTold{consumed}, 3, 4);
  const auto tasks = numbered_tasks(10);
  std::uint32_t q = 0;
  EXPECT_EQ(host.queued(), 0u);
  EXPECT_EQ(host.try_enqueue(tasks.data(), 4, q), 4u);
  EXPECT_EQ(host.try_enqueue(tasks.data() + 4, 3, q), 3u);
  EXPECT_EQ(host.queued(), 7u);
  consumed[0] = 4;  // queue 0's batch taken to its end
  EXPECT_EQ(host.queued(), 3u);
  EXPECT_EQ(host.try_enqueue(tasks.data() + 7, 2, q), 2u);  // queue 2
  EXPECT_EQ(host.queued(), 5u);
  consumed[1] = 3;
  consumed[2] = 2;
  EXPECT_EQ(host.queued(), 0u);
  EXPECT_TRUE(host.all_empty());
}

}  // namespace
}  // namespace gpulb
