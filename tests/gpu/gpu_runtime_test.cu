// The CUDA backend: the same behaviours the CPU backend is held to, on real GPUs.
#include <gtest/gtest.h>

#include <algorithm>

#include "policy_handles.hpp"
#include "gpulb/cpu/execute.hpp"
#include "gpulb/cuda/devices.hpp"
#include "gpulb/kernels/execute.cuh"
#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "test_bodies.hpp"

namespace gpulb {
namespace {

int gpu_count() { return static_cast<int>(cuda::list_devices().size()); }

#define SKIP_WITHOUT_GPU() \
  if (gpu_count() == 0) GTEST_SKIP() << "no CUDA GPU present: GPU tests skipped"

std::vector<Task> numbered_tasks(std::uint32_t n) {
  std::vector<Task> tasks(n);
  for (std::uint32_t i = 0; i < n; ++i) tasks[i].id = i;
  return tasks;
}

// One body for both backends: count runs per task id on the backend given, return the counts.
std::vector<std::uint32_t> count_runs(Backend backend, ExecPlan plan,
                                      ExecOutput* output = nullptr) {
  const std::size_t n = plan.tasks.size();
  std::vector<std::uint32_t> counts(n, 0);
  ExecOutput out;
  if (backend == Backend::Cpu) {
    out = cpu::execute(plan, testing::CountingBody{counts.data()});
  } else {
    std::vector<cuda::DeviceBuffer<std::uint32_t>> per_gpu;
    out = kernels::execute(plan, [&](std::uint32_t) {
      per_gpu.emplace_back(n);
      return testing::CountingBody{per_gpu.back().get()};
    });
    std::vector<std::uint32_t> part(n);
    for (auto& b : per_gpu) {
      b.download(part.data(), n);
      for (std::size_t i = 0; i < n; ++i) counts[i] += part[i];
    }
  }
  if (output) *output = std::move(out);
  return counts;
}

void expect_each_ran_once(const std::vector<std::uint32_t>& counts) {
  const auto bad =
      std::find_if(counts.begin(), counts.end(), [](std::uint32_t c) { return c != 1; });
  EXPECT_TRUE(bad == counts.end())
      << "task " << (bad - counts.begin()) << " ran " << *bad << " times";
}

struct Shape {
  Policy policy;
  std::uint32_t queues;
  std::uint32_t capacity;
  std::uint32_t tasks;
  const char* variant = "paper";
  std::uint32_t claim = 8;
};

class ExactlyOnce : public ::testing::TestWithParam<Shape> {};

TEST_P(ExactlyOnce, OnEveryBackendPresent) {
  const Shape s = GetParam();
  const auto tasks = numbered_tasks(s.tasks);
  ExecPlan plan;
  plan.policy = s.policy;
  plan.block_size = 64;
  plan.trace = false;
  plan.tasks = tasks;
  if (s.policy == &policies::task_queue()) {  // the shape is the task queue's; the others' defaults
    auto& o = plan.options.edit<policies::TaskQueueOptions>();
    o.queues = s.queues;
    o.queue_capacity = s.capacity;
    o.variant = *choice_named<QueueVariant>(s.variant);
    o.claim = s.claim;
  }
  plan.gpus = 1;
  for (Backend b : {Backend::Cpu, Backend::Cuda}) {
    if (b == Backend::Cuda && gpu_count() == 0) continue;
    plan.workers = b == Backend::Cpu ? 8 : 0;
    SCOPED_TRACE(to_string(b));
    expect_each_ran_once(count_runs(b, plan));
  }
  SKIP_WITHOUT_GPU();
}

// --gpus above the GPUs present is a ConfigError naming both numbers under every policy,
// from the CUDA frames themselves and from gpulb::run (which refuses it from the registry's list).
TEST(GpuFaults, MoreGpusThanPresentIsAConfigErrorUnderEveryPolicy) {
  SKIP_WITHOUT_GPU();
  const auto tasks = numbered_tasks(64);
  const std::uint32_t asked = static_cast<std::uint32_t>(gpu_count()) + 1;
  const std::string expected = "--gpus " + std::to_string(asked) + ": this host has " +
                               std::to_string(gpu_count()) + " CUDA GPU";
  for (Policy p :
       {&policies::task_queue(), &policies::hardware(), &policies::chunked(),
        &policies::work_stealing(), &policies::static_list(), &policies::blocking_queue()}) {
    SCOPED_TRACE(p->name);
    ExecPlan plan;
    plan.policy = p;
    plan.block_size = 64;
    plan.trace = false;
    plan.tasks = tasks;
    plan.gpus = asked;
    try {
      count_runs(Backend::Cuda, plan);
      ADD_FAILURE() << "ran on " << asked << " GPUs";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    RunConfig c;
    c.scenario = "patterns";
    c.policy = std::string(p->name);
    c.backend = Backend::Cuda;
    c.gpus = asked;
    c.params = {{"blocks", "64"}};
    try {
      run(builtin::registry(), c);
      ADD_FAILURE() << "gpulb::run ran on " << asked << " GPUs";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, ExactlyOnce,
    ::testing::Values(Shape{&policies::task_queue(), 2, 128, 1'000'000},
                      Shape{&policies::task_queue(), 8, 4096, 1'000'000},
                      Shape{&policies::task_queue(), 1, 7, 100'000},
                      Shape{&policies::hardware(), 0, 0, 1'000'000},
                      Shape{&policies::chunked(), 0, 0, 200'000},
                      Shape{&policies::task_queue(), 2, 4096, 1'000'000, "modern", 8},
                      Shape{&policies::task_queue(), 4, 100, 300'000, "modern", 32},
                      Shape{&policies::task_queue(), 1, 3, 30'000, "modern", 1}),
    [](const auto& info) {
      std::string name(info.param.policy->name);
      std::replace(name.begin(), name.end(), '-', '_');
      return name + "_" + info.param.variant + "_q" + std::to_string(info.param.queues) + "_claim" +
             std::to_string(info.param.claim) + "_cap" + std::to_string(info.param.capacity);
    });

TEST(GpuTaskQueue, HaltStopsEveryBlockExactlyOnce) {
  SKIP_WITHOUT_GPU();
  const auto tasks = numbered_tasks(20000);
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.gpus = 1;
  plan.tasks = tasks;
  plan.options.edit<policies::TaskQueueOptions>().queue_capacity =
      64;  // fewer slots than blocks: HALTs go out in many batches
  ExecOutput out;
  expect_each_ran_once(count_runs(Backend::Cuda, plan, &out));
  std::uint32_t blocks = 0;
  for (const trace::Track& tr : out.trace.tracks) {
    if (tr.role != trace::TrackRole::Worker) continue;
    ++blocks;
    ASSERT_EQ(tr.dropped, 0u) << tr.name;
    EXPECT_EQ(std::count_if(tr.events.begin(), tr.events.end(),
                            [](const trace::Event& e) { return e.kind == trace::EventKind::Halt; }),
              1)
        << tr.name;
    EXPECT_NE(tr.sm, trace::Track::kNoSm) << tr.name << " has no SM id";
  }
  EXPECT_EQ(blocks, out.workers);
}

TEST(GpuTaskQueue, ModernVariantStopsEveryBlockAndTracesIt) {
  SKIP_WITHOUT_GPU();
  const auto tasks = numbered_tasks(20000);
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.gpus = 1;
  plan.tasks = tasks;
  plan.options.edit<policies::TaskQueueOptions>().variant = QueueVariant::Modern;
  plan.options.edit<policies::TaskQueueOptions>().queue_capacity = 256;
  ExecOutput out;
  expect_each_ran_once(count_runs(Backend::Cuda, plan, &out));
  std::uint64_t begins = 0;
  for (const trace::Track& tr : out.trace.tracks) {
    if (tr.role != trace::TrackRole::Worker) continue;
    ASSERT_EQ(tr.dropped, 0u) << tr.name;
    EXPECT_EQ(tr.events.front().kind, trace::EventKind::WorkerStart) << tr.name;
    EXPECT_EQ(tr.events.back().kind, trace::EventKind::WorkerEnd) << tr.name;
    begins += std::count_if(tr.events.begin(), tr.events.end(), [](const trace::Event& e) {
      return e.kind == trace::EventKind::TaskBegin;
    });
  }
  EXPECT_EQ(begins, tasks.size());
}

// The copy feed's batches: ranges where the pool's tasks are one run of ids, whole batches where
// no two neighbours are alike, and some queues left empty where the tasks are fewer than them.
TEST(GpuTaskQueue, ModernCopyFeedRangesWholeBatchesAndEmptyQueuesRunEachTaskOnce) {
  SKIP_WITHOUT_GPU();
  for (const std::uint32_t n : {3u, 40'000u}) {
    for (const bool runs : {true, false}) {
      auto tasks = numbered_tasks(n);
      if (!runs) {
        for (Task& t : tasks)
          t.payload[0] = 7u * t.id + 1;  // no two neighbours alike: no range batch
      }
      ExecPlan plan;
      plan.policy = &policies::task_queue();
      plan.gpus = 1;
      plan.block_size = 64;
      plan.tasks = tasks;
      plan.options.edit<policies::TaskQueueOptions>().variant = QueueVariant::Modern;
      plan.options.edit<policies::TaskQueueOptions>().queues = 8;
      plan.options.edit<policies::TaskQueueOptions>().queue_capacity = 1024;
      SCOPED_TRACE(std::to_string(n) + (runs ? " tasks in one run" : " tasks in no run"));
      expect_each_ran_once(count_runs(Backend::Cuda, plan));
    }
  }
}

TEST(GpuTaskQueue, OversizedGridIsClampedAndSaysSo) {
  SKIP_WITHOUT_GPU();
  const auto tasks = numbered_tasks(1000);
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.gpus = 1;
  plan.workers = 1'000'000;
  plan.trace = false;
  plan.tasks = tasks;
  ExecOutput out;
  expect_each_ran_once(count_runs(Backend::Cuda, plan, &out));
  EXPECT_LT(out.workers, 1'000'000u);
  EXPECT_TRUE(std::any_of(out.notes.begin(), out.notes.end(), [](const std::string& n) {
    return n.find("clamped") != std::string::npos;
  })) << ::testing::PrintToString(out.notes);
}

TEST(GpuTaskQueue, WatchdogStopsAStuckRunWithAClearError) {
  SKIP_WITHOUT_GPU();
  const auto tasks = numbered_tasks(5000);
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.gpus = 1;
  plan.tasks = tasks;
  plan.trace = false;
  plan.run_options.watchdog_ms = 300;
  try {
    kernels::execute(plan, [](std::uint32_t) { return testing::StuckBody{}; });
    FAIL() << "a stuck run returned";
  } catch (const RunError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("watchdog"), std::string::npos) << msg;
    EXPECT_NE(msg.find("task-queue"), std::string::npos) << msg;
    EXPECT_NE(msg.find("300 ms"), std::string::npos) << msg;
    EXPECT_NE(msg.find("d_consumed/d_written/d_n"), std::string::npos) << msg;
  }
  // The GPU is usable again afterwards.
  plan.run_options.watchdog_ms = 10000;
  expect_each_ran_once(count_runs(Backend::Cuda, plan));
}

TEST(GpuTrace, DrainedCompletelyWithoutOverflowAndCountedWithIt) {
  SKIP_WITHOUT_GPU();
  const auto tasks = numbered_tasks(50000);
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.gpus = 1;
  plan.tasks = tasks;
  // a queue level per claim: with claims of one, one per task (counted below)
  plan.options.edit<policies::TaskQueueOptions>().claim = 1;
  ExecOutput out;
  count_runs(Backend::Cuda, plan, &out);
  std::uint64_t begins = 0, dropped = 0;
  for (const trace::Track& tr : out.trace.tracks) {
    dropped += tr.dropped;
    begins += std::count_if(tr.events.begin(), tr.events.end(), [](const trace::Event& e) {
      return e.kind == trace::EventKind::TaskBegin;
    });
  }
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(begins, tasks.size());

  plan.run_options.trace_capacity = 16;  // far too small: every block overflows
  count_runs(Backend::Cuda, plan, &out);
  std::uint64_t kept = 0;
  dropped = 0;
  for (const trace::Track& tr : out.trace.tracks) {
    if (tr.role != trace::TrackRole::Worker) continue;
    EXPECT_LE(tr.events.size(), 16u);
    kept += tr.events.size();
    dropped += tr.dropped;
  }
  EXPECT_GT(dropped, 0u);
  // Every task writes a queue level, a begin and an end: at least 3 per task were offered.
  EXPECT_GE(kept + dropped, 3 * tasks.size());
}

TEST(GpuHardware, BlocksLandOnSmLanes) {
  SKIP_WITHOUT_GPU();
  const auto tasks = numbered_tasks(10000);
  ExecPlan plan;
  plan.policy = &policies::hardware();
  plan.gpus = 1;
  plan.tasks = tasks;
  ExecOutput out;
  expect_each_ran_once(count_runs(Backend::Cuda, plan, &out));
  std::uint64_t begins = 0;
  for (const trace::Track& tr : out.trace.tracks) {
    if (tr.role != trace::TrackRole::SmLane) continue;
    EXPECT_NE(tr.sm, trace::Track::kNoSm);
    for (std::size_t i = 1; i < tr.events.size(); ++i)
      EXPECT_LE(tr.events[i - 1].time_ns, tr.events[i].time_ns) << tr.name;
    begins += std::count_if(tr.events.begin(), tr.events.end(), [](const trace::Event& e) {
      return e.kind == trace::EventKind::TaskBegin;
    });
  }
  EXPECT_EQ(begins, tasks.size());
}

TEST(MultiGpu, TaskQueueSplitsThePoolAcrossEveryGpu) {
  if (gpu_count() < 2) GTEST_SKIP() << "fewer than 2 GPUs: multi-GPU test skipped";
  const auto tasks = numbered_tasks(200000);
  ExecPlan plan;
  plan.policy = &policies::task_queue();
  plan.tasks = tasks;
  plan.gpus = 0;  // all
  ExecOutput out;
  expect_each_ran_once(count_runs(Backend::Cuda, plan, &out));
  EXPECT_EQ(out.trace.devices.size(), static_cast<std::size_t>(gpu_count()));
  std::vector<std::uint64_t> per_device(out.trace.devices.size(), 0);
  for (const trace::Track& tr : out.trace.tracks) {
    per_device[tr.device] +=
        std::count_if(tr.events.begin(), tr.events.end(),
                      [](const trace::Event& e) { return e.kind == trace::EventKind::TaskBegin; });
  }
  for (std::size_t d = 0; d < per_device.size(); ++d)
    EXPECT_GT(per_device[d], 0u) << "GPU " << d << " ran nothing";
}

TEST(GpuPatterns, EveryPatternVerifiesUnderEveryGpuPolicy) {
  SKIP_WITHOUT_GPU();
  for (const char* policy : {"task-queue", "hardware", "chunked"}) {
    for (const char* pattern : {"P0", "P1", "P2", "P3", "P4"}) {
      RunConfig c;
      c.scenario = "patterns";
      c.policy = policy;
      c.backend = Backend::Cuda;
      c.gpus = 1;
      c.params = {{"pattern", pattern}, {"blocks", "5000"}, {"work", "200"}};
      const RunResult r = run(builtin::registry(), c);
      EXPECT_TRUE(r.verified) << policy << " " << pattern << ": " << r.verification;
    }
  }
}

}  // namespace
}  // namespace gpulb
