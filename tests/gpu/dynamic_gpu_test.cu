// The spawning policies on the CUDA backend (work-stealing, static-list, blocking-queue): every
// spawned task runs exactly once, full capacities fail the run naming the parameter to raise,
// termination waits for late host inserts, the watchdog stops a stuck run, and the scenarios that
// spawn (uts, nqueens, connect4) verify under every GPU policy. Small instances throughout, so the
// suite also runs under compute-sanitizer (except the *_T1 cases: 4 million tasks each).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "policy_handles.hpp"
#include "gpulb/cuda/devices.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/execute.cuh"
#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "spawn_batch_checks.hpp"
#include "spawn_test_bodies.hpp"
#include "test_bodies.hpp"

namespace gpulb {
namespace {

using testing::TreeBody;

int gpu_count() { return static_cast<int>(cuda::list_devices().size()); }

#define SKIP_WITHOUT_GPU() \
  if (gpu_count() == 0) GTEST_SKIP() << "no CUDA GPU present: GPU tests skipped"

std::string policy_name(Policy p) {
  std::string n(p->name);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

// A complete tree of TreeBody tasks from one root on the GPU; counts per task id come back.
struct GpuTreeRun {
  // Two arrays of 64 MiB (static-list), not the default 2 x 512 MiB; the blocking queue alike.
  inline static const ParamMap kSmallArrays = {{"list_capacity", "1048576"},
                                               {"blocking_capacity", "1048576"}};
  std::vector<Task> roots;
  ExecPlan plan;
  std::uint64_t total;
  std::uint32_t fanout;
  std::uint32_t spin;
  std::vector<std::uint32_t> counts;

  GpuTreeRun(Policy policy, std::uint32_t fanout_, std::uint32_t levels, std::uint32_t spin_ = 0)
      : total(TreeBody::tree_size(fanout_, levels)), fanout(fanout_), spin(spin_) {
    Task root;
    root.id = 0;
    root.parent = Task::kNoParent;
    root.payload[0] = levels;
    roots = {root};
    plan.policy = policy;
    plan.backend = Backend::Cuda;
    plan.gpus = 1;
    plan.workers = 0;  // the occupancy bound
    plan.block_size = 64;
    plan.trace = false;
    plan.tasks = roots;
    plan.id_capacity = total;
    plan.expected_tasks = total;
    plan.options = parse_policy_options(*policy, kSmallArrays);
  }

  // Through kernels::execute (a factory of one argument), as a non-spawning scenario would.
  ExecOutput run() {
    cuda::DeviceBuffer<std::uint32_t> d(total);
    const TreeBody body{d.get(), total, fanout, spin};
    ExecOutput out = kernels::execute(plan, [&](std::uint32_t) { return body; });
    counts.assign(total, 0);
    d.download(counts.data(), total);
    return out;
  }

  void expect_each_ran_once(const ExecOutput& out) const {
    EXPECT_EQ(out.tasks_run, total);
    EXPECT_EQ(out.tasks_spawned, total - 1);
    const auto bad =
        std::find_if(counts.begin(), counts.end(), [](std::uint32_t c) { return c != 1; });
    EXPECT_TRUE(bad == counts.end())
        << "task " << (bad - counts.begin()) << " ran " << *bad << " times";
  }
};

// Runs `run` expecting a RunError whose message contains `fragment`.
template <class F>
void expect_run_error(F&& run, const std::string& fragment) {
  try {
    run();
    FAIL() << "the run should have failed with a message naming " << fragment;
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Every spawning policy

class GpuSpawning : public ::testing::TestWithParam<Policy> {};

TEST_P(GpuSpawning, EverySpawnedTaskRunsExactlyOnce) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(GetParam(), 4, 8, 200);  // 87381 tasks
  run.expect_each_ran_once(run.run());
}

TEST_P(GpuSpawning, ChildrenBeyondTheBlockSizeAreAllSpawned) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(GetParam(), 300, 2);  // 300 children a task from blocks of 64 threads: 90301 tasks
  run.expect_each_ran_once(run.run());
}

TEST_P(GpuSpawning, FewWorkersRunEveryTaskOnce) {
  SKIP_WITHOUT_GPU();
  for (std::uint32_t workers : {1u, 2u, 5u}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    GpuTreeRun run(GetParam(), 3, 7);
    run.plan.workers = workers;
    const ExecOutput out = run.run();
    run.expect_each_ran_once(out);
    EXPECT_EQ(out.workers, workers);
  }
}

TEST_P(GpuSpawning, TooManyChildrenFailTheRunNamingSpawnCapacity) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(GetParam(), 40, 1);
  ParamMap options = GpuTreeRun::kSmallArrays;
  options["spawn_capacity"] = "16";
  run.plan.options = parse_policy_options(*run.plan.policy, options);
  expect_run_error([&] { run.run(); }, "spawn_capacity=16");
  // The GPU is usable again afterwards.
  GpuTreeRun again(GetParam(), 3, 5);
  again.expect_each_ran_once(again.run());
}

TEST_P(GpuSpawning, IdsPastTheScenarioTableFailTheRun) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(GetParam(), 4, 4);
  run.plan.id_capacity = 50;  // the tree has 341 tasks
  expect_run_error([&] { run.run(); }, "table size (50 ids)");
}

TEST_P(GpuSpawning, WatchdogStopsAStuckRunWithAClearError) {
  SKIP_WITHOUT_GPU();
  std::vector<Task> tasks(100);
  for (std::uint32_t i = 0; i < tasks.size(); ++i) tasks[i].id = i;
  ExecPlan plan;
  plan.policy = GetParam();
  plan.gpus = 1;
  plan.trace = false;
  plan.tasks = tasks;
  plan.run_options.watchdog_ms = 300;
  plan.options = parse_policy_options(*plan.policy,
                                      {{"list_capacity", "1024"}, {"blocking_capacity", "1024"}});
  expect_run_error(
      [&] { kernels::execute(plan, [](std::uint32_t) { return testing::StuckBody{}; }); },
      "watchdog");
  GpuTreeRun again(GetParam(), 3, 5);
  again.expect_each_ran_once(again.run());
}

TEST_P(GpuSpawning, TraceHasEveryTaskAndAWorkerStartAndEndPerBlock) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(GetParam(), 4, 6, 500);  // 5461 tasks
  run.plan.trace = true;
  run.plan.workers = 264;
  run.plan.run_options.trace_capacity = 1u << 16;  // no block can drop an event, however unbalanced
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  std::map<trace::EventKind, std::uint64_t> kinds;
  std::uint32_t workers = 0;
  for (const trace::Track& t : out.trace.tracks) {
    EXPECT_EQ(t.dropped, 0u) << t.name;
    for (const trace::Event& e : t.events) ++kinds[e.kind];
    if (t.role != trace::TrackRole::Worker) continue;
    ++workers;
    if (t.events.empty()) continue;  // a static-list block of no launch (fewer tasks than blocks)
    EXPECT_EQ(t.events.front().kind, trace::EventKind::WorkerStart) << t.name;
    EXPECT_EQ(t.events.back().kind, trace::EventKind::WorkerEnd) << t.name;
    EXPECT_NE(t.sm, trace::Track::kNoSm) << t.name;
  }
  EXPECT_EQ(workers, out.workers);
  EXPECT_EQ(kinds[trace::EventKind::TaskBegin], run.total);
  EXPECT_EQ(kinds[trace::EventKind::TaskEnd], run.total);
  EXPECT_GT(kinds[trace::EventKind::SpawnBatch], 0u);
  testing::expect_batches_name_every_child_once(out.trace, run.total);
  EXPECT_GT(kinds[trace::EventKind::KernelLaunch], 0u);
}

// tasks_per_sm_max/min (the bench's load balance) agree with the trace's tasks per SM lane.
TEST_P(GpuSpawning, TasksPerSmMatchTheTrace) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(GetParam(), 4, 6, 500);  // 5461 tasks
  run.plan.trace = true;
  run.plan.run_options.trace_capacity = 1u << 16;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  if (GetParam() == &policies::static_list()) {
    EXPECT_EQ(out.metrics.count("tasks_per_sm_max"), 0u)
        << "a static-list rank moves between SMs: no per-SM figure";
    return;
  }
  std::map<std::uint32_t, std::uint64_t> per_sm;
  for (const trace::Track& t : out.trace.tracks) {
    if (t.role != trace::TrackRole::Worker) continue;
    for (const trace::Event& e : t.events) per_sm[t.sm] += e.kind == trace::EventKind::TaskBegin;
  }
  std::uint64_t most = 0, least = ~std::uint64_t{0};
  for (const auto& [sm, n] : per_sm) {
    most = std::max(most, n);
    least = std::min(least, n);
  }
  EXPECT_EQ(out.metrics.at("tasks_per_sm_max"), most);
  EXPECT_EQ(out.metrics.at("tasks_per_sm_min"), least);
}

// A segment too small for the run keeps its first events, whole, and counts the rest. Capacities
// of 6 and 7 slots: a block's events come one and two at a time (BlockContext::record_two), so
// some block meets a pair with room for its first event alone, which it keeps; a slot the block
// never wrote would come back as an event of kind None.
TEST_P(GpuSpawning, AFullTraceKeepsItsFirstEventsAndCountsTheRest) {
  SKIP_WITHOUT_GPU();
  for (const std::uint32_t capacity : {6u, 7u}) {
    GpuTreeRun run(GetParam(), 4, 6, 500);  // 5461 tasks
    run.plan.trace = true;
    run.plan.workers = 64;
    run.plan.run_options.trace_capacity = capacity;
    const ExecOutput out = run.run();
    run.expect_each_ran_once(out);
    std::uint64_t kept = 0, dropped = 0;
    for (const trace::Track& t : out.trace.tracks) {
      if (t.role != trace::TrackRole::Worker) continue;
      EXPECT_LE(t.events.size(), capacity) << t.name;
      for (const trace::Event& e : t.events) EXPECT_NE(e.kind, trace::EventKind::None) << t.name;
      for (std::size_t i = 1; i < t.events.size(); ++i)
        EXPECT_LE(t.events[i - 1].time_ns, t.events[i].time_ns) << t.name;
      if (!t.events.empty()) {
        EXPECT_EQ(t.events.front().kind, trace::EventKind::WorkerStart) << t.name;
      }
      kept += t.events.size();
      dropped += t.dropped;
    }
    // Every task offered at least its begin and end.
    EXPECT_GE(kept + dropped, 2 * run.total) << "capacity " << capacity;
    EXPECT_GT(dropped, 0u) << "capacity " << capacity;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, GpuSpawning,
                         ::testing::Values(&policies::work_stealing(), &policies::static_list(),
                                           &policies::blocking_queue()),
                         [](const auto& info) { return policy_name(info.param); });

// ---------------------------------------------------------------------------------------------
// work-stealing

TEST(GpuWorkStealing, EveryTaskRunsOnceUnderHeavyStealing) {
  SKIP_WITHOUT_GPU();
  // One root: all work starts in one block's deque, every other block lives by stealing; small
  // deques so that they also empty, reset (a new ABA tag) and refill all the time.
  GpuTreeRun run(&policies::work_stealing(), 4, 9, 2000);  // 349525 tasks
  run.plan.options.edit<policies::WorkStealingOptions>().deque_capacity = 64;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_GT(out.metrics.at("steals"), 0u);
}

TEST(GpuWorkStealing, RoundRobinVictimsOnADeepNarrowTree) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::work_stealing(), 2, 16,
                 100);  // 131071 tasks, deques of one or two tasks
  run.plan.options.edit<policies::WorkStealingOptions>().victim = VictimChoice::RoundRobin;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_GT(out.metrics.at("steals"), 0u);
}

TEST(GpuWorkStealing, SingleBlockNeedsNoThief) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::work_stealing(), 2, 10);
  run.plan.workers = 1;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_EQ(out.metrics.at("steals"), 0u);
}

TEST(GpuWorkStealing, FullDequeSpillsToTheOverflowQueueAndLosesNothing) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::work_stealing(), 8, 5);  // 37449 tasks
  run.plan.options.edit<policies::WorkStealingOptions>().deque_capacity =
      4;  // a task's 8 children never fit
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_GT(out.metrics.at("spilled"), 0u);
  EXPECT_LE(out.metrics.at("peak_deque_level"), 4u);
}

TEST(GpuWorkStealing, FullDequeFailsTheRunNamingTheCapacityWhenSpillingIsOff) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::work_stealing(), 8, 4);
  run.plan.options.edit<policies::WorkStealingOptions>().deque_capacity = 4;
  run.plan.options.edit<policies::WorkStealingOptions>().deque_overflow = DequeOverflow::Fail;
  expect_run_error([&] { run.run(); }, "deque_capacity=4");
}

TEST(GpuWorkStealing, FullOverflowQueueFailsTheRunNamingItsCapacity) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::work_stealing(), 8, 5);
  run.plan.options.edit<policies::WorkStealingOptions>().deque_capacity = 2;
  run.plan.options.edit<policies::WorkStealingOptions>().overflow_capacity = 4;
  expect_run_error([&] { run.run(); }, "overflow_capacity=4");
}

// The hang on the CUDA backend's copy of the queue: one slot is refused; two-slot sharing
// and overflow queues (the smallest that work) either finish with every task run once or fail
// naming the full queue -- never spin.
TEST(GpuWorkStealing, OneSlotQueuesAreRefusedAndTwoSlotQueuesFinish) {
  SKIP_WITHOUT_GPU();
  EXPECT_THROW(kernels::detail::DeviceSharingQueue(1), std::invalid_argument);
  GpuTreeRun run(&policies::work_stealing(), 4, 5);
  run.plan.options.edit<policies::WorkStealingOptions>().sharing_capacity = 2;
  run.plan.options.edit<policies::WorkStealingOptions>().overflow_capacity = 2;
  run.plan.run_options.watchdog_ms = 5000;
  try {
    run.expect_each_ran_once(run.run());
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("overflow_capacity=2"), std::string::npos) << e.what();
  }
}

TEST(GpuWorkStealing, InitialTasksBeyondTheSharingQueueAreFedAsItDrains) {
  SKIP_WITHOUT_GPU();
  std::vector<Task> tasks(20000);
  for (std::uint32_t i = 0; i < tasks.size(); ++i) tasks[i].id = i;
  ExecPlan plan;
  plan.policy = &policies::work_stealing();
  plan.gpus = 1;
  plan.tasks = tasks;
  plan.options.edit<policies::WorkStealingOptions>().sharing_capacity = 16;
  cuda::DeviceBuffer<std::uint32_t> d(tasks.size());
  const ExecOutput out = kernels::execute(plan, [&](std::uint32_t) {
    return TreeBody{d.get(), tasks.size(), 0};
  });
  std::vector<std::uint32_t> counts(tasks.size());
  d.download(counts.data(), counts.size());
  EXPECT_EQ(out.tasks_run, tasks.size());
  for (std::size_t i = 0; i < counts.size(); ++i) ASSERT_EQ(counts[i], 1u) << "task " << i;
  std::uint64_t inserted = 0;
  for (const trace::Track& t : out.trace.tracks) {
    if (t.role != trace::TrackRole::Host) continue;
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::HostEnqueue) inserted += e.arg;
    }
  }
  EXPECT_EQ(inserted, tasks.size());
}

constexpr std::uint32_t kLateBase = 1u << 20;

// Host-inserted tasks (ids from kLateBase) are counted apart; the rest is a TreeBody.
struct LateBody {
  TreeBody tree;
  std::uint32_t* late;
  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& t) const {
    if (t.id >= kLateBase) {
      ctx.once([&] {
        device_atomic_ref<std::uint32_t>(late[t.id - kLateBase]).fetch_add(1, mo::relaxed);
      });
    } else {
      tree(ctx, t);
    }
  }
};

// The host keeps inserting (host_feed) long after the initial tree is done: the blocks sit idle
// with nothing outstanding and must not stop until the host says it is finished.
TEST(GpuWorkStealing, RunWaitsForLateHostInserts) {
  SKIP_WITHOUT_GPU();
  constexpr std::uint32_t kLate = 3000;
  GpuTreeRun run(&policies::work_stealing(), 2, 3);  // 15 tasks, ids 0..14
  run.plan.spawn_id_base = 1;
  run.plan.host_feed = [&](HostInserter& host) {
    for (std::uint32_t wave = 0; wave < 3; ++wave) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::vector<Task> tasks(kLate / 3);
      for (std::uint32_t i = 0; i < tasks.size(); ++i)
        tasks[i].id = kLateBase + wave * (kLate / 3) + i;
      host.insert(tasks);
    }
  };
  cuda::DeviceBuffer<std::uint32_t> tree_counts(run.total), late_counts(kLate);
  const ExecOutput out = kernels::execute(run.plan, [&](std::uint32_t) {
    return LateBody{TreeBody{tree_counts.get(), run.total, 2, 0}, late_counts.get()};
  });
  EXPECT_EQ(out.tasks_run, run.total + kLate);
  std::vector<std::uint32_t> late(kLate), tree(run.total);
  late_counts.download(late.data(), kLate);
  tree_counts.download(tree.data(), run.total);
  for (std::uint32_t i = 0; i < kLate; ++i) ASSERT_EQ(late[i], 1u) << "late task " << i;
  for (std::uint64_t i = 0; i < run.total; ++i) ASSERT_EQ(tree[i], 1u) << "task " << i;
}

TEST(GpuWorkStealing, HostFeedIsRefusedByTheOtherPolicies) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::static_list(), 2, 3);
  run.plan.host_feed = [](HostInserter&) {};
  EXPECT_THROW(run.run(), ConfigError);
}

TEST(GpuWorkStealing, TraceShowsStealsSpawnsAndDequeLevels) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::work_stealing(), 4, 7, 2000);  // 21845 tasks
  run.plan.trace = true;
  run.plan.workers = 264;
  run.plan.run_options.trace_capacity = 1u << 17;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  std::map<trace::EventKind, std::uint64_t> kinds;
  for (const trace::Track& t : out.trace.tracks) {
    EXPECT_EQ(t.dropped, 0u) << t.name;
    for (const trace::Event& e : t.events) ++kinds[e.kind];
  }
  EXPECT_EQ(kinds[trace::EventKind::TaskBegin], run.total);
  EXPECT_EQ(kinds[trace::EventKind::SpawnBatch], TreeBody::tree_size(4, 6));  // every inner node
  testing::expect_batches_name_every_child_once(out.trace, run.total);
  EXPECT_GT(kinds[trace::EventKind::DequeLevel], 0u);
  EXPECT_EQ(kinds[trace::EventKind::Steal], out.metrics.at("steals"));
  EXPECT_GT(kinds[trace::EventKind::Steal], 0u);
}

// ---------------------------------------------------------------------------------------------
// static-list and blocking-queue

TEST(GpuStaticList, ReportsGenerationsAndPeakSlots) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::static_list(), 3,
                 6);  // levels 0..6: the widest generation has 3^6 tasks
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_EQ(out.metrics.at("generations"), 7u);
  EXPECT_EQ(out.metrics.at("peak_task_slots"), 729u);
}

// A generation past its arrays (list_capacity=1: one slot to start) stops its launch; the host
// grows the output array, places the blocks' held children and launches the rest: every task runs
// once (gpulb/static_list_sizing.hpp).
TEST(GpuStaticList, AGenerationPastItsArraysGrowsThemAndEveryTaskRunsOnce) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::static_list(), 4, 6);
  run.plan.options.edit<policies::StaticListOptions>().list_capacity = 1;
  run.plan.trace = true;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  // Children held back by a full array and placed after it grew are named once, by their parent.
  testing::expect_batches_name_every_child_once(out.trace, run.total);
  EXPECT_EQ(out.metrics.at("generations"), 7u);
  EXPECT_EQ(out.metrics.at("peak_task_slots"), 4096u);
  EXPECT_GE(out.metrics.at("list_resumes"), 1u);
  EXPECT_GE(out.metrics.at("list_slots"), 4096u);
}

// An understated widest generation caps every prediction, so every generation from the third on
// fills its array in the middle of a launch: many blocks hold children at once, and every task
// still runs once.
TEST(GpuStaticList, AnUnderstatedWidestGenerationCostsResumesNotTasks) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::static_list(), 8, 5);  // 32768 tasks in the last generation
  run.plan.options.edit<policies::StaticListOptions>().list_capacity = 0;
  run.plan.widest_generation = 2;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_EQ(out.metrics.at("peak_task_slots"), 32768u);
  EXPECT_GE(out.metrics.at("list_resumes"), 3u);
}

// A stated widest generation the GPU cannot hold is refused before any launch, naming the numbers.
TEST(GpuStaticList, AWidestGenerationTheGpuCannotHoldIsRefusedNamingTheNumbers) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::static_list(), 2, 3);
  run.plan.widest_generation = std::uint64_t{1} << 40;
  expect_run_error([&] { run.run(); }, "1099511627776 task slots");
  expect_run_error([&] { run.run(); }, "cudaMemGetInfo");
  GpuTreeRun again(&policies::static_list(), 3, 5);  // the GPU is usable afterwards
  again.expect_each_ran_once(again.run());
}

// Without blocking_capacity the queue is sized from the widest generation the scenario states.
TEST(GpuBlockingQueue, ItsDefaultSizeHoldsTheStatedWidestGeneration) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::blocking_queue(), 10, 3);
  run.plan.options.edit<policies::BlockingQueueOptions>().blocking_capacity = 0;
  run.plan.widest_generation = 1000;
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_EQ(out.metrics.at("queue_slots"), 1000u + 125u + 65536u);
}

// UTS T1L under the static list's defaults: sized from the preset's widest level (76.6 M tasks),
// it runs without a resume and verifies.
TEST(GpuStaticList, UtsT1LRunsUnderTheDefaults) {
  SKIP_WITHOUT_GPU();
  RunConfig c;
  c.scenario = "uts";
  c.policy = "static-list";
  c.backend = Backend::Cuda;
  c.gpus = 1;
  c.trace = false;
  c.params = {{"tree", "T1L"}};
  const RunResult r = run(builtin::registry(), c);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.metrics.at("list_resumes"), 0u);
  EXPECT_EQ(r.metrics.at("peak_task_slots"), 76635666u);
}

TEST(GpuBlockingQueue, FullQueueFailsNamingItsCapacity) {
  SKIP_WITHOUT_GPU();
  // The root's 100 children arrive in one enqueue: more than 50 whatever the timing (a deeper tree
  // of 10 children a task overflowed or not depending on how fast the blocks drained it, and
  // under compute-sanitizer it did not).
  GpuTreeRun run(&policies::blocking_queue(), 100, 1);
  run.plan.options.edit<policies::BlockingQueueOptions>().blocking_capacity = 50;
  expect_run_error([&] { run.run(); }, "blocking_capacity=50");
}

TEST(GpuBlockingQueue, ReportsThePeakOfTheQueue) {
  SKIP_WITHOUT_GPU();
  GpuTreeRun run(&policies::blocking_queue(), 3, 6);
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_GE(out.metrics.at("peak_task_slots"), 3u);
  EXPECT_LE(out.metrics.at("peak_task_slots"), run.total);
}

// ---------------------------------------------------------------------------------------------
// Scenarios that spawn, through gpulb::run as the CLI does

RunResult run_cuda(const std::string& scenario, Policy policy, ParamMap params,
                   std::uint32_t workers = 0) {
  RunConfig c;
  c.scenario = scenario;
  c.policy = std::string(policy->name);
  c.backend = Backend::Cuda;
  c.gpus = 1;
  c.workers = workers;
  c.params = std::move(params);
  if (policy == &policies::static_list() && !c.params.count("list_capacity"))
    c.params["list_capacity"] = std::to_string(1u << 22);
  return run(builtin::registry(), c);
}

class GpuSpawningScenarios : public ::testing::TestWithParam<Policy> {};

TEST_P(GpuSpawningScenarios, UtsSmallGeometricTreeVerifies) {
  SKIP_WITHOUT_GPU();
  const RunResult r =
      run_cuda("uts", GetParam(),
               {{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}});
  EXPECT_TRUE(r.verified) << r.verification;
}

TEST_P(GpuSpawningScenarios, UtsSmallBinomialTreeWithAWideRootVerifies) {
  SKIP_WITHOUT_GPU();
  // A binomial root of 300 children (more than a block's threads), then q * m = 0.8 below it.
  const RunResult r = run_cuda(
      "uts", GetParam(),
      {{"tree", "custom"}, {"t", "0"}, {"b", "300"}, {"q", "0.2"}, {"m", "4"}, {"r", "7"}});
  EXPECT_TRUE(r.verified) << r.verification;
}

// leaves=inline: a leaf child is counted by its parent's task (thread i tests child i); a wide
// binomial root and a geometric tree, each with the node, leaf and depth counts of the host search.
TEST_P(GpuSpawningScenarios, UtsWithInlineLeavesVerifiesWithFewerTasks) {
  SKIP_WITHOUT_GPU();
  for (const ParamMap& tree :
       {ParamMap{{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}},
        ParamMap{
            {"tree", "custom"}, {"t", "0"}, {"b", "300"}, {"q", "0.2"}, {"m", "4"}, {"r", "7"}}}) {
    ParamMap params = tree;
    params["leaves"] = "inline";
    const RunResult r = run_cuda("uts", GetParam(), params);
    EXPECT_TRUE(r.verified) << r.verification;
    EXPECT_NE(r.result_json.find("\"inline_leaves\":true"), std::string::npos) << r.result_json;
    // "nodes":N in the result: more nodes than tasks ran.
    const std::size_t at = r.result_json.find("\"nodes\":");
    ASSERT_NE(at, std::string::npos) << r.result_json;
    EXPECT_LT(r.tasks, std::stoull(r.result_json.substr(at + 8))) << r.result_json;
  }
}

TEST_P(GpuSpawningScenarios, NQueensVerifies) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_cuda("nqueens", GetParam(), {{"n", "10"}, {"cutoff", "4"}});
  EXPECT_TRUE(r.verified) << r.verification;
}

// Deep sequential parts (10 rows below the cutoff): n = 14, cutoff = 5 once lost solutions on the
// GPU without an error (nqueens_body.hpp, count_completions).
TEST_P(GpuSpawningScenarios, NQueensWithADeepSequentialPartVerifies) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_cuda("nqueens", GetParam(), {{"n", "13"}, {"cutoff", "3"}});
  EXPECT_TRUE(r.verified) << r.verification;
}

TEST_P(GpuSpawningScenarios, Connect4Verifies) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_cuda("connect4", GetParam(), {{"lookahead", "4"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_NE(r.result_json.find("peak_task_slots"), std::string::npos) << r.result_json;
}

// The sample tree T1 (4,130,071 nodes): the published counts, under every policy. Too large for
// compute-sanitizer: filter it out there (--gtest_filter=-*T1*).
TEST_P(GpuSpawningScenarios, UtsT1MatchesThePublishedCounts) {
  SKIP_WITHOUT_GPU();
  // The blocking queue serialises every task through one lock: fewer blocks contend less for it.
  const std::uint32_t workers = GetParam() == &policies::blocking_queue() ? 264 : 0;
  ParamMap params = {{"tree", "T1"}, {"watchdog_ms", "60000"}};
  if (GetParam() == &policies::static_list())
    params["list_capacity"] = std::to_string(1u << 23);  // its option alone
  const RunResult r = run_cuda("uts", GetParam(), params, workers);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, 4130071u);
}

INSTANTIATE_TEST_SUITE_P(Policies, GpuSpawningScenarios,
                         ::testing::Values(&policies::work_stealing(), &policies::static_list(),
                                           &policies::blocking_queue()),
                         [](const auto& info) { return policy_name(info.param); });

TEST(GpuSpawningScenarios, NonSpawningPoliciesAreRefusedWithAClearError) {
  SKIP_WITHOUT_GPU();
  for (Policy p : {&policies::task_queue(), &policies::hardware(), &policies::chunked()}) {
    try {
      run_cuda("nqueens", p, {{"n", "6"}, {"cutoff", "2"}});
      FAIL() << p->name << " ran a spawning scenario";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("spawns child tasks"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpulb
