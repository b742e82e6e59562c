// work-stealing across GPUs (kernels/work_stealing_multi_gpu.cuh): every task runs
// exactly once on some GPU, every GPU works, steals across GPUs happen and are marked in the trace,
// the initial tasks and the host's ring reach every GPU, and the spawning scenarios verify. Each
// test runs on every GPU present (2 or more; fewer: skipped with a message), and on 2 where the
// host has more, so a 4-GPU host covers both.
// The static list across GPUs (kernels/detail/multi_gpu_sl_run.cuh; GpuStaticListAcrossGpus, at the
// end): every task once, every GPU works, tasks move between GPUs and the trace shows them, the
// spawning scenarios verify, and its errors name list_capacity, the GPU or the watchdog.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "policy_handles.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/cuda/devices.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/execute.cuh"
#include "gpulb/run.hpp"
#include "spawn_test_bodies.hpp"
#include "test_bodies.hpp"

namespace gpulb {
namespace {

using testing::TreeBody;

int gpu_count() { return static_cast<int>(cuda::list_devices().size()); }

#define SKIP_WITHOUT_TWO_GPUS() \
  if (gpu_count() < 2) GTEST_SKIP() << "fewer than 2 GPUs: multi-GPU test skipped"

// Both ways of taking work from another GPU (--param remote=...).
constexpr const char* kRemotes[] = {"steal", "request"};

// The GPU counts a test runs with: 2, and every GPU present where that is more.
std::vector<std::uint32_t> gpu_settings() {
  std::vector<std::uint32_t> s{2};
  if (gpu_count() > 2) s.push_back(static_cast<std::uint32_t>(std::min(gpu_count(), 8)));
  return s;
}

// Runs `plan` with a TreeBody on each GPU that counts into its own table of `ids` entries in that
// GPU's memory; `counts` gets the tables summed over the GPUs.
ExecOutput run_counting(const ExecPlan& plan, std::uint64_t ids, std::uint32_t fanout,
                        std::uint32_t spin, std::vector<std::uint32_t>& counts) {
  std::vector<std::unique_ptr<cuda::DeviceBuffer<std::uint32_t>>> tables;
  ExecOutput out = kernels::execute(plan, [&](std::uint32_t) {  // called with that GPU current
    tables.push_back(std::make_unique<cuda::DeviceBuffer<std::uint32_t>>(ids));
    return TreeBody{tables.back()->get(), ids, fanout, spin};
  });
  counts.assign(ids, 0);
  std::vector<std::uint32_t> one(ids);
  for (const auto& t : tables) {
    t->download(one.data(), ids);
    for (std::uint64_t i = 0; i < ids; ++i) counts[i] += one[i];
  }
  return out;
}

// A tree of TreeBody tasks from one root, on `gpus` GPUs. Each GPU's body counts into its own table
// in its own memory; ids interleave across GPUs (assign_child_ids_strided), so the tables are
// gpus x the tree size, and exactly `total` ids must have run once, the rest never.
struct MultiTreeRun {
  std::vector<Task> roots;
  ExecPlan plan;
  std::uint64_t total;
  std::uint64_t ids;
  std::uint32_t fanout;
  std::uint32_t spin;
  std::vector<std::uint32_t> counts;  // summed over the GPUs

  MultiTreeRun(std::uint32_t gpus, std::uint32_t fanout_, std::uint32_t levels, std::uint32_t spin_,
               Policy policy = &policies::work_stealing())
      : total(TreeBody::tree_size(fanout_, levels)),
        ids(gpus * total + gpus),
        fanout(fanout_),
        spin(spin_) {
    Task root;
    root.id = 0;
    root.parent = Task::kNoParent;
    root.payload[0] = levels;
    roots = {root};
    plan.policy = policy;
    plan.backend = Backend::Cuda;
    plan.gpus = gpus;
    plan.block_size = 64;
    plan.trace = false;
    plan.tasks = roots;
    plan.id_capacity = ids;
    plan.expected_tasks = total;
  }

  ExecOutput run() { return run_counting(plan, ids, fanout, spin, counts); }

  void expect_each_ran_once(const ExecOutput& out) const {
    EXPECT_EQ(out.tasks_run, total);
    EXPECT_EQ(out.tasks_spawned, total - 1);
    std::uint64_t ran = 0;
    for (std::uint64_t i = 0; i < ids; ++i) {
      ASSERT_LE(counts[i], 1u) << "task " << i << " ran " << counts[i] << " times";
      ran += counts[i];
    }
    EXPECT_EQ(ran, total);
  }
};

std::uint64_t metric(const ExecOutput& out, const std::string& name) {
  const auto it = out.metrics.find(name);
  EXPECT_NE(it, out.metrics.end()) << "no metric " << name;
  return it == out.metrics.end() ? 0 : it->second;
}

TEST(GpuWorkStealingAcrossGpus, EveryTaskRunsOnceAndEveryGpuWorks) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings())
    for (const char* remote : kRemotes) {
      SCOPED_TRACE(std::to_string(gpus) + " GPUs, remote=" + remote);
      // One root on GPU 0: every other GPU lives by stealing across; small deques reset all the time.
      MultiTreeRun run(gpus, 4, 9, 2000);  // 349525 tasks
      run.plan.options.edit<policies::WorkStealingOptions>().deque_capacity = 64;
      run.plan.options.edit<policies::WorkStealingOptions>().remote =
          *choice_named<RemoteMode>(remote);
      const ExecOutput out = run.run();
      run.expect_each_ran_once(out);
      EXPECT_EQ(out.trace.devices.size(), gpus);
      std::uint64_t sum = 0;
      for (std::uint32_t g = 0; g < gpus; ++g) {
        const std::uint64_t n = metric(out, "gpu" + std::to_string(g) + "_tasks");
        EXPECT_GT(n, 0u) << "GPU " << g << " of " << gpus << " ran nothing";
        sum += n;
      }
      EXPECT_EQ(sum, run.total);
      EXPECT_GT(metric(out, "remote_steals"), 0u);
      EXPECT_LE(metric(out, "remote_steals"), metric(out, "steals"));
    }
}

TEST(GpuWorkStealingAcrossGpus, BatchStealsAcrossGpusLoseNothing) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings())
    for (const char* remote : kRemotes) {
      for (const char* chunk : {"4", "32"}) {
        SCOPED_TRACE(std::to_string(gpus) + " GPUs, remote=" + remote + ", remote_chunk=" + chunk);
        MultiTreeRun run(gpus, 4, 9, 500);
        run.plan.options.edit<policies::WorkStealingOptions>().remote =
            *choice_named<RemoteMode>(remote);
        run.plan.options.edit<policies::WorkStealingOptions>().remote_chunk =
            static_cast<std::uint32_t>(std::stoul(chunk));
        run.plan.options.edit<policies::WorkStealingOptions>().deque_capacity = 256;
        const ExecOutput out = run.run();
        run.expect_each_ran_once(out);
        EXPECT_GT(metric(out, "remote_steals"), 0u) << "remote_chunk=" << chunk;
      }
    }
}

TEST(GpuWorkStealingAcrossGpus, FewBlocksAndRoundRobinVictimsOnADeepNarrowTree) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const char* remote : kRemotes) {
    SCOPED_TRACE(std::string("remote=") + remote);
    MultiTreeRun run(2, 2, 14, 200);  // 32767 tasks, deques of one or two tasks
    run.plan.workers = 4;             // per GPU: remote steals are a large share of all steals
    run.plan.options.edit<policies::WorkStealingOptions>().victim = VictimChoice::RoundRobin;
    run.plan.options.edit<policies::WorkStealingOptions>().remote =
        *choice_named<RemoteMode>(remote);
    const ExecOutput out = run.run();
    run.expect_each_ran_once(out);
    EXPECT_GT(metric(out, "gpu1_tasks"), 0u);
  }
}

TEST(GpuWorkStealingAcrossGpus, CrossGpuStealsAreMarkedInTheTrace) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings())
    for (const char* remote : kRemotes) {
      SCOPED_TRACE(std::to_string(gpus) + " GPUs, remote=" + remote);
      MultiTreeRun run(gpus, 4, 7, 2000);  // 21845 tasks
      run.plan.options.edit<policies::WorkStealingOptions>().remote =
          *choice_named<RemoteMode>(remote);
      run.plan.trace = true;
      run.plan.workers = 132;
      run.plan.run_options.trace_capacity = 1u << 16;
      const ExecOutput out = run.run();
      run.expect_each_ran_once(out);
      std::uint64_t begins = 0, steals = 0, across = 0;
      std::vector<std::uint64_t> begins_per_device(gpus, 0);
      for (const trace::Track& t : out.trace.tracks) {
        EXPECT_EQ(t.dropped, 0u) << t.name;
        ASSERT_LT(t.device, gpus) << t.name;
        for (const trace::Event& e : t.events) {
          if (e.kind == trace::EventKind::TaskBegin) {
            ++begins;
            ++begins_per_device[t.device];
          }
          if (e.kind != trace::EventKind::Steal) continue;
          ++steals;
          const std::uint32_t victim_device = trace::steal_victim_device(e, t.device);
          ASSERT_LT(victim_device, gpus) << t.name;
          EXPECT_LT(e.arg, out.trace.devices[victim_device].workers) << t.name;
          if (trace::steal_crosses_devices(e, t.device)) ++across;
        }
      }
      EXPECT_EQ(begins, run.total);
      for (std::uint32_t g = 0; g < gpus; ++g) EXPECT_GT(begins_per_device[g], 0u) << "GPU " << g;
      EXPECT_EQ(steals, metric(out, "steals"));
      EXPECT_EQ(across, metric(out, "remote_steals"));
      EXPECT_GT(across, 0u);
      // Every GPU has its busy time; only their sum must be positive: a GPU that ran a few short
      // tasks (its start delayed by other work on the GPU) can show none, each task beginning and
      // ending within one tick of the GPU's global timer.
      std::uint64_t busy = 0;
      for (std::uint32_t g = 0; g < gpus; ++g) {
        const std::string name = "gpu" + std::to_string(g) + "_busy_ns";
        ASSERT_TRUE(out.metrics.contains(name)) << name;
        busy += metric(out, name);
      }
      EXPECT_GT(busy, 0u);
    }
}

// 20000 initial leaves into sharing queues of 16: dealt round robin to the GPUs (16 each), the rest
// through GPU 0's staging ring, fed by GPU 0's idle blocks and spread by stealing.
TEST(GpuWorkStealingAcrossGpus, InitialTasksBeyondTheSharingQueuesReachEveryGpu) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings())
    for (const char* remote : kRemotes) {
      SCOPED_TRACE(std::to_string(gpus) + " GPUs, remote=" + remote);
      std::vector<Task> tasks(20000);
      for (std::uint32_t i = 0; i < tasks.size(); ++i) tasks[i].id = i;
      ExecPlan plan;
      plan.policy = &policies::work_stealing();
      plan.gpus = gpus;
      plan.tasks = tasks;
      plan.options.edit<policies::WorkStealingOptions>().sharing_capacity = 16;
      plan.options.edit<policies::WorkStealingOptions>().remote = *choice_named<RemoteMode>(remote);
      std::vector<std::uint32_t> counts;
      const ExecOutput out = run_counting(plan, tasks.size(), 0, 200, counts);
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
      for (std::uint32_t g = 0; g < gpus; ++g)
        EXPECT_GT(metric(out, "gpu" + std::to_string(g) + "_tasks"), 0u) << "GPU " << g;
    }
}

constexpr std::uint32_t kLateBase = 1u << 24;

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

// Runs a 15-task tree while the host inserts 3,000 more tasks in three late waves (50 ms apart):
// every task, the tree's and the late ones, must run exactly once.
void expect_late_host_inserts_run_once(MultiTreeRun& run) {
  constexpr std::uint32_t kLate = 3000;
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
  std::vector<std::unique_ptr<cuda::DeviceBuffer<std::uint32_t>>> trees, lates;
  const ExecOutput out = kernels::execute(run.plan, [&](std::uint32_t) {
    trees.push_back(std::make_unique<cuda::DeviceBuffer<std::uint32_t>>(run.ids));
    lates.push_back(std::make_unique<cuda::DeviceBuffer<std::uint32_t>>(kLate));
    return LateBody{TreeBody{trees.back()->get(), run.ids, 2, 0}, lates.back()->get()};
  });
  EXPECT_EQ(out.tasks_run, run.total + kLate);
  std::vector<std::uint32_t> late(kLate, 0), one(kLate);
  for (const auto& l : lates) {
    l->download(one.data(), kLate);
    for (std::uint32_t i = 0; i < kLate; ++i) late[i] += one[i];
  }
  for (std::uint32_t i = 0; i < kLate; ++i) ASSERT_EQ(late[i], 1u) << "late task " << i;
}

// The host keeps inserting after the tree is done: no GPU may stop until GPU 0's ring is closed.
TEST(GpuWorkStealingAcrossGpus, RunWaitsForLateHostInserts) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const char* remote : kRemotes) {
    SCOPED_TRACE(std::string("remote=") + remote);
    MultiTreeRun run(2, 2, 3, 0);  // 15 tasks
    run.plan.options.edit<policies::WorkStealingOptions>().remote =
        *choice_named<RemoteMode>(remote);
    expect_late_host_inserts_run_once(run);
  }
}

// ---------------------------------------------------------------------------------------------
// Through gpulb::run, as the command line does

RunResult run_cuda(const std::string& scenario, std::uint32_t gpus, ParamMap params,
                   const std::string& policy = "work-stealing") {
  RunConfig c;
  c.scenario = scenario;
  c.policy = policy;
  c.backend = Backend::Cuda;
  c.gpus = gpus;
  c.params = std::move(params);
  return run(builtin::registry(), c);
}

TEST(GpuWorkStealingAcrossGpus, UtsT1MatchesThePublishedCountsOnEveryGpuCount) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings())
    for (const char* remote : kRemotes) {
      const RunResult r =
          run_cuda("uts", gpus, {{"tree", "T1"}, {"watchdog_ms", "60000"}, {"remote", remote}});
      EXPECT_TRUE(r.verified) << gpus << " GPUs, remote=" << remote << ": " << r.verification;
      EXPECT_EQ(r.tasks, 4130071u);
      EXPECT_NE(r.result_json.find("gpu1_tasks"), std::string::npos) << r.result_json;
      EXPECT_NE(r.result_json.find("remote_steals"), std::string::npos) << r.result_json;
    }
}

TEST(GpuWorkStealingAcrossGpus, SpawningScenariosVerify) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings()) {
    EXPECT_TRUE(
        run_cuda("uts", gpus,
                 {{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}})
            .verified);
    EXPECT_TRUE(run_cuda("uts", gpus,
                         {{"tree", "custom"},
                          {"t", "1"},
                          {"a", "3"},
                          {"d", "6"},
                          {"b", "4"},
                          {"r", "19"},
                          {"remote", "request"}})
                    .verified);
    EXPECT_TRUE(
        run_cuda(
            "uts", gpus,
            {{"tree", "custom"}, {"t", "0"}, {"b", "300"}, {"q", "0.2"}, {"m", "4"}, {"r", "7"}})
            .verified);
    const RunResult q = run_cuda("nqueens", gpus, {{"n", "13"}, {"cutoff", "3"}});
    EXPECT_TRUE(q.verified) << q.verification;
    const RunResult p =
        run_cuda("patterns", gpus, {{"pattern", "P3"}, {"blocks", "5000"}, {"work", "200"}});
    EXPECT_TRUE(p.verified) << p.verification;
  }
}

// connect4's node table lives in one GPU's memory: across GPUs it is refused instead of a wrong answer.
TEST(GpuWorkStealingAcrossGpus, Connect4AcrossGpusIsRefusedNamingWhy) {
  SKIP_WITHOUT_TWO_GPUS();
  try {
    run_cuda("connect4", 2, {{"lookahead", "4"}});
    FAIL() << "connect4 ran across GPUs";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("table per task id"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use --gpus 1"), std::string::npos) << e.what();
  }
}

TEST(GpuWorkStealingAcrossGpus, PoliciesWithoutARunAcrossGpusRefuseItNamingTheAlternatives) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const char* policy : {"blocking-queue"}) {
    try {
      run_cuda("uts", 2,
               {{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}},
               policy);
      FAIL() << policy << " accepted --gpus 2";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("use --gpus 1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("work-stealing"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("static-list"), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The static list across GPUs

template <class F>
void expect_run_error(F&& run, const std::vector<std::string>& fragments) {
  try {
    run();
    ADD_FAILURE() << "the run should have failed with a message naming " << fragments.front();
  } catch (const RunError& e) {
    for (const std::string& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

// Tasks the host tracks of `out` say arrived from other GPUs (Transfer markers, in bytes), per device.
std::vector<std::uint64_t> transferred_tasks(const ExecOutput& out, std::uint32_t gpus) {
  std::vector<std::uint64_t> tasks(gpus, 0);
  for (const trace::Track& t : out.trace.tracks) {
    if (t.role != trace::TrackRole::Host) continue;
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::Transfer && t.device < gpus)
        tasks[t.device] += e.arg / sizeof(Task);
    }
  }
  return tasks;
}

TEST(GpuStaticListAcrossGpus, EveryTaskRunsOnceEveryGpuWorksAndTasksMove) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings()) {
    SCOPED_TRACE(std::to_string(gpus) + " GPUs");
    // One root on GPU 0: the other GPUs get their first tasks from the split of generation 2.
    MultiTreeRun run(gpus, 4, 9, 500, &policies::static_list());  // 349525 tasks, 10 generations
    run.plan.options.edit<policies::StaticListOptions>().list_capacity = 1u << 20;
    const ExecOutput out = run.run();
    run.expect_each_ran_once(out);
    EXPECT_EQ(out.trace.devices.size(), gpus);
    EXPECT_EQ(metric(out, "gpus"), gpus);
    EXPECT_EQ(metric(out, "generations"), 10u);
    EXPECT_EQ(metric(out, "peak_task_slots"), 262144u);  // 4^9, all GPUs together as on one GPU
    EXPECT_LE(metric(out, "peak_task_slots_per_gpu"), 262144u);
    std::uint64_t sum = 0, moved_in = 0;
    for (std::uint32_t g = 0; g < gpus; ++g) {
      const std::uint64_t n = metric(out, "gpu" + std::to_string(g) + "_tasks");
      EXPECT_GT(n, 0u) << "GPU " << g << " of " << gpus << " ran nothing";
      // Even shares: a GPU runs about 1/N of every generation of more than N tasks.
      EXPECT_GT(n, run.total / gpus / 2) << "GPU " << g;
      sum += n;
      moved_in += metric(out, "gpu" + std::to_string(g) + "_moved_in");
    }
    EXPECT_EQ(sum, run.total);
    EXPECT_GT(metric(out, "tasks_moved"), 0u);
    EXPECT_EQ(moved_in, metric(out, "tasks_moved"));
  }
}

// Several initial tasks, dealt in even contiguous shares; a flat generation moves nothing.
TEST(GpuStaticListAcrossGpus, InitialTasksAreDealtEvenlyAndAFlatRunMovesNothing) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings()) {
    SCOPED_TRACE(std::to_string(gpus) + " GPUs");
    std::vector<Task> tasks(20000);
    for (std::uint32_t i = 0; i < tasks.size(); ++i) tasks[i].id = i;
    ExecPlan plan;
    plan.policy = &policies::static_list();
    plan.gpus = gpus;
    plan.tasks = tasks;
    plan.options.edit<policies::StaticListOptions>().list_capacity = 1u << 16;
    std::vector<std::uint32_t> counts;
    const ExecOutput out = run_counting(plan, tasks.size(), 0, 200, counts);
    EXPECT_EQ(out.tasks_run, tasks.size());
    for (std::size_t i = 0; i < counts.size(); ++i) ASSERT_EQ(counts[i], 1u) << "task " << i;
    EXPECT_EQ(metric(out, "generations"), 1u);
    EXPECT_EQ(metric(out, "tasks_moved"), 0u);
    for (std::uint32_t g = 0; g < gpus; ++g) {
      const std::uint64_t share = tasks.size() / gpus + (g < tasks.size() % gpus ? 1 : 0);
      EXPECT_EQ(metric(out, "gpu" + std::to_string(g) + "_tasks"), share) << "GPU " << g;
    }
  }
}

TEST(GpuStaticListAcrossGpus, TraceShowsEachGpusTasksGenerationsAndTheTasksThatMoved) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings()) {
    SCOPED_TRACE(std::to_string(gpus) + " GPUs");
    MultiTreeRun run(gpus, 4, 7, 500, &policies::static_list());  // 21845 tasks, 8 generations
    run.plan.trace = true;
    run.plan.workers = 132;
    run.plan.run_options.trace_capacity = 1u << 16;
    run.plan.options.edit<policies::StaticListOptions>().list_capacity = 1u << 16;
    const ExecOutput out = run.run();
    run.expect_each_ran_once(out);
    ASSERT_EQ(out.trace.devices.size(), gpus);
    std::uint64_t begins = 0;
    std::vector<std::uint64_t> begins_per_device(gpus, 0), launches(gpus, 0), ends(gpus, 0),
        host_tracks(gpus, 0);
    for (const trace::Track& t : out.trace.tracks) {
      EXPECT_EQ(t.dropped, 0u) << t.name;
      ASSERT_LT(t.device, gpus) << t.name;
      if (t.role == trace::TrackRole::Host) ++host_tracks[t.device];
      for (const trace::Event& e : t.events) {
        if (e.kind == trace::EventKind::TaskBegin) {
          ++begins;
          ++begins_per_device[t.device];
        }
        if (t.role == trace::TrackRole::Host && e.kind == trace::EventKind::KernelLaunch)
          ++launches[t.device];
        if (t.role == trace::TrackRole::Host && e.kind == trace::EventKind::KernelEnd)
          ++ends[t.device];
      }
    }
    EXPECT_EQ(begins, run.total);
    for (std::uint32_t g = 0; g < gpus; ++g) {
      EXPECT_EQ(host_tracks[g], 1u) << "GPU " << g;
      EXPECT_GT(begins_per_device[g], 0u) << "GPU " << g;
      EXPECT_EQ(begins_per_device[g], metric(out, "gpu" + std::to_string(g) + "_tasks"))
          << "GPU " << g;
      // Generation k has 4^k tasks in even shares: GPU g launches in those of more than g tasks.
      std::uint64_t expected = 0;
      for (std::uint64_t k = 0, size = 1; k < 8; ++k, size *= 4) expected += size > g;
      EXPECT_EQ(metric(out, "generations"), 8u);
      EXPECT_EQ(launches[g], expected) << "GPU " << g;
      EXPECT_EQ(ends[g], expected) << "GPU " << g;
    }
    const std::vector<std::uint64_t> moved = transferred_tasks(out, gpus);
    std::uint64_t moved_sum = 0;
    for (std::uint32_t g = 0; g < gpus; ++g) {
      EXPECT_EQ(moved[g], metric(out, "gpu" + std::to_string(g) + "_moved_in")) << "GPU " << g;
      moved_sum += moved[g];
    }
    EXPECT_EQ(moved_sum, metric(out, "tasks_moved"));
    EXPECT_GT(moved_sum, 0u);
  }
}

TEST(GpuStaticListAcrossGpus, SpawningScenariosVerify) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings()) {
    SCOPED_TRACE(std::to_string(gpus) + " GPUs");
    const RunResult t1 =
        run_cuda("uts", gpus, {{"tree", "T1"}, {"watchdog_ms", "60000"}}, "static-list");
    EXPECT_TRUE(t1.verified) << t1.verification;
    EXPECT_EQ(t1.tasks, 4130071u);
    EXPECT_NE(t1.result_json.find("tasks_moved"), std::string::npos) << t1.result_json;
    EXPECT_NE(t1.result_json.find("gpu1_tasks"), std::string::npos) << t1.result_json;
    const RunResult geo =
        run_cuda("uts", gpus,
                 {{"tree", "custom"}, {"t", "1"}, {"a", "3"}, {"d", "6"}, {"b", "4"}, {"r", "19"}},
                 "static-list");
    EXPECT_TRUE(geo.verified) << geo.verification;
    const RunResult bin = run_cuda(
        "uts", gpus,
        {{"tree", "custom"}, {"t", "0"}, {"b", "300"}, {"q", "0.2"}, {"m", "4"}, {"r", "7"}},
        "static-list");
    EXPECT_TRUE(bin.verified) << bin.verification;
    const RunResult q = run_cuda("nqueens", gpus, {{"n", "13"}, {"cutoff", "3"}}, "static-list");
    EXPECT_TRUE(q.verified) << q.verification;
    const RunResult p = run_cuda(
        "patterns", gpus, {{"pattern", "P3"}, {"blocks", "5000"}, {"work", "200"}}, "static-list");
    EXPECT_TRUE(p.verified) << p.verification;
  }
}

TEST(GpuStaticListAcrossGpus, Connect4AcrossGpusIsRefusedNamingWhy) {
  SKIP_WITHOUT_TWO_GPUS();
  try {
    run_cuda("connect4", 2, {{"lookahead", "4"}}, "static-list");
    FAIL() << "connect4 ran across GPUs";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("table per task id"), std::string::npos) << e.what();
  }
}

// A GPU whose generation passes its arrays stops, grows its output array and launches the rest of
// its share while the others run on: every task runs once. The first launch is the one that can
// stop: later ones are sized by the ratio of children to tasks, which a tree of even fan-out keeps
// exact. More initial tasks than list_capacity only make the first arrays larger.
TEST(GpuStaticListAcrossGpus, AGenerationPastOneGpusArraysGrowsThemAndEveryTaskRunsOnce) {
  SKIP_WITHOUT_TWO_GPUS();
  MultiTreeRun run(2, 4, 5, 0,
                   &policies::static_list());  // generation 6: 1024 tasks, about 512 a GPU
  run.plan.options.edit<policies::StaticListOptions>().list_capacity =
      1;  // the root's 4 children pass it
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  EXPECT_GE(metric(out, "list_resumes"), 1u);
  std::vector<Task> tasks(500);
  for (std::uint32_t i = 0; i < tasks.size(); ++i) tasks[i].id = i;
  MultiTreeRun flat(2, 0, 0, 0, &policies::static_list());
  flat.plan.tasks = tasks;
  flat.plan.options.edit<policies::StaticListOptions>().list_capacity = 100;
  const ExecOutput flat_out = flat.run();
  EXPECT_EQ(flat_out.tasks_run, 500u);
}

// A stated widest generation whose even share no GPU can hold is refused before any launch, naming
// the GPU and the numbers; the GPUs are usable again afterwards.
TEST(GpuStaticListAcrossGpus, AWidestGenerationTheGpusCannotHoldIsRefusedNamingTheNumbers) {
  SKIP_WITHOUT_TWO_GPUS();
  MultiTreeRun run(2, 2, 3, 0, &policies::static_list());
  run.plan.widest_generation = std::uint64_t{1} << 41;
  expect_run_error([&] { run.run(); }, {"1099511627776 task slots", "GPU 0", "cudaMemGetInfo"});
  MultiTreeRun again(2, 3, 5, 0, &policies::static_list());
  again.expect_each_ran_once(again.run());
}

// UTS T1L, T2L and T1XL under the static list's defaults on every GPU count: sized from the
// presets' widest levels, each verifies (T1XL's widest, 1.23 G tasks, is held across the GPUs).
TEST(GpuStaticListAcrossGpus, UtsLargePresetsRunUnderTheDefaults) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings()) {
    for (const char* tree : {"T1L", "T2L", "T3L", "T1XL"}) {
      RunConfig c;
      c.scenario = "uts";
      c.policy = "static-list";
      c.backend = Backend::Cuda;
      c.gpus = gpus;
      c.trace = false;
      c.params = {{"tree", tree}, {"watchdog_ms", "60000"}};
      const RunResult r = run(builtin::registry(), c);
      EXPECT_TRUE(r.verified) << tree << " on " << gpus << " GPUs: " << r.verification;
    }
  }
}

TEST(GpuStaticListAcrossGpus, TheWatchdogStopsEveryGpuAndTheNextRunWorks) {
  SKIP_WITHOUT_TWO_GPUS();
  std::vector<Task> tasks(8);
  for (std::uint32_t i = 0; i < tasks.size(); ++i) tasks[i].id = i;
  ExecPlan plan;
  plan.policy = &policies::static_list();
  plan.gpus = 2;
  plan.trace = false;
  plan.tasks = tasks;
  plan.run_options.watchdog_ms = 300;
  plan.options.edit<policies::StaticListOptions>().list_capacity = 1024;
  expect_run_error(
      [&] { kernels::execute(plan, [](std::uint32_t) { return testing::StuckBody{}; }); },
      {"watchdog", "on GPU "});
  MultiTreeRun again(2, 3, 5, 0, &policies::static_list());
  again.expect_each_ran_once(again.run());
}

// Through host memory (--param peer=off, or auto without peer access; work_stealing_multi_gpu.cuh,
// "Two placements"): the same kernel with the words GPUs share in mapped host memory.

// Why this host cannot run the host placement ("" = it can): every GPU's link to the host must do
// the shared words' RMWs as native atomics.
std::string host_placement_unavailable() {
  return kernels::detail::missing_host_atomics(
      static_cast<std::uint32_t>(std::min(gpu_count(), 8)));
}

#define SKIP_WITHOUT_HOST_PLACEMENT() \
  SKIP_WITHOUT_TWO_GPUS();            \
  if (const std::string why = host_placement_unavailable(); !why.empty()) GTEST_SKIP() << why

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

TEST(GpuWorkStealingAcrossGpus, ThroughHostMemoryEveryTaskRunsOnceAndTasksCrossGpus) {
  SKIP_WITHOUT_HOST_PLACEMENT();
  for (const std::uint32_t gpus : gpu_settings())
    for (const char* chunk : {"1", "8"}) {
      SCOPED_TRACE(std::to_string(gpus) + " GPUs, peer=off, remote_chunk=" + chunk);
      MultiTreeRun run(gpus, 4, 8, 2000);  // 87381 tasks from one root on GPU 0
      run.plan.options.edit<policies::WorkStealingOptions>().peer = PeerMemory::Off;
      run.plan.options.edit<policies::WorkStealingOptions>().remote_chunk =
          static_cast<std::uint32_t>(std::stoul(chunk));
      run.plan.options.edit<policies::WorkStealingOptions>().deque_capacity = 128;
      const ExecOutput out = run.run();
      run.expect_each_ran_once(out);
      EXPECT_TRUE(has_note(out.notes, "through host memory (--param peer=off)"))
          << (out.notes.empty() ? "" : out.notes[0]);
      for (std::uint32_t g = 0; g < gpus; ++g)
        EXPECT_GT(metric(out, "gpu" + std::to_string(g) + "_tasks"), 0u) << "GPU " << g;
      EXPECT_GT(metric(out, "remote_steals"), 0u);
    }
}

// The host's feed closes the run through host memory too: host_end is stored there by the host.
TEST(GpuWorkStealingAcrossGpus, ThroughHostMemoryTheRunWaitsForLateHostInserts) {
  SKIP_WITHOUT_HOST_PLACEMENT();
  MultiTreeRun run(2, 2, 3, 0);  // 15 tasks
  run.plan.options.edit<policies::WorkStealingOptions>().peer = PeerMemory::Off;
  expect_late_host_inserts_run_once(run);
}

TEST(GpuWorkStealingAcrossGpus, ThroughHostMemoryUtsT1AndNQueensVerify) {
  SKIP_WITHOUT_HOST_PLACEMENT();
  for (const std::uint32_t gpus : gpu_settings()) {
    SCOPED_TRACE(std::to_string(gpus) + " GPUs, peer=off");
    const RunResult t1 =
        run_cuda("uts", gpus, {{"tree", "T1"}, {"watchdog_ms", "60000"}, {"peer", "off"}});
    EXPECT_TRUE(t1.verified) << t1.verification;
    EXPECT_EQ(t1.tasks, 4130071u);
    // A small tree may end on GPU 0 before another GPU takes anything: it only has to verify.
    const RunResult small = run_cuda("uts", gpus,
                                     {{"tree", "custom"},
                                      {"t", "1"},
                                      {"a", "3"},
                                      {"d", "6"},
                                      {"b", "4"},
                                      {"r", "19"},
                                      {"peer", "off"}});
    EXPECT_TRUE(small.verified) << small.verification;
    EXPECT_TRUE(has_note(small.notes, "through host memory (--param peer=off)"));
    // One root, 38680 tasks (the whole tree): the other GPUs live by taking work from GPU 0
    // through host memory.
    const RunResult q = run_cuda(
        "nqueens", gpus, {{"n", "13"}, {"cutoff", "5"}, {"symmetry", "none"}, {"peer", "off"}});
    EXPECT_TRUE(q.verified) << q.verification;
    EXPECT_EQ(q.tasks, 38680u);
    for (const RunResult* r : {&t1, &q}) {
      EXPECT_TRUE(has_note(r->notes, "through host memory (--param peer=off)"));
      std::uint64_t sum = 0;
      for (std::uint32_t g = 0; g < gpus; ++g) {
        const auto it = r->metrics.find("gpu" + std::to_string(g) + "_tasks");
        ASSERT_NE(it, r->metrics.end()) << "no gpu" << g << "_tasks";
        EXPECT_GT(it->second, 0u) << "GPU " << g << " ran nothing";
        sum += it->second;
      }
      EXPECT_EQ(sum, r->tasks);
      const auto across = r->metrics.find("remote_steals");
      ASSERT_NE(across, r->metrics.end());
      EXPECT_GT(across->second, 0u) << "no task crossed GPUs";
    }
  }
}

// The default (peer=auto) says which path it took.
TEST(GpuWorkStealingAcrossGpus, TheRunSaysWhichPathItTook) {
  SKIP_WITHOUT_TWO_GPUS();
  const std::string no_peer = kernels::detail::missing_peer_path(2);
  if (!no_peer.empty() && !host_placement_unavailable().empty())
    GTEST_SKIP() << "neither peer memory (" << no_peer << ") nor host atomics";
  MultiTreeRun run(2, 4, 6, 100);
  const ExecOutput out = run.run();
  run.expect_each_ran_once(out);
  ASSERT_FALSE(out.notes.empty());
  if (no_peer.empty()) {
    EXPECT_EQ(out.notes[0], "work stealing across GPUs over peer memory (NVLink/PCIe P2P)");
  } else {
    EXPECT_EQ(out.notes[0], "work stealing across GPUs through host memory: " + no_peer);
  }
}

// remote=steal CASes deques in another GPU's memory: with peer=off it is refused, naming the
// option, before any CUDA call (so this runs without a GPU).
TEST(WorkStealingAcrossGpusPlacement, StealWithPeerOffIsRefusedNamingTheOption) {
  ExecPlan plan;
  plan.policy = &policies::work_stealing();
  plan.backend = Backend::Cuda;
  plan.gpus = 2;
  plan.options.edit<policies::WorkStealingOptions>().remote = RemoteMode::Steal;
  plan.options.edit<policies::WorkStealingOptions>().peer = PeerMemory::Off;
  std::vector<Task> tasks(1);
  plan.tasks = tasks;
  try {
    kernels::execute(plan, [&](std::uint32_t) { return TreeBody{nullptr, 0, 0, 0}; });
    FAIL() << "remote=steal ran with peer=off";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("remote=steal"), std::string::npos) << what;
    EXPECT_NE(what.find("peer=off"), std::string::npos) << what;
    EXPECT_NE(what.find("remote=request"), std::string::npos) << what;
  }
}

// The placement's decision table (pure: what the GPUs offer is passed in).
TEST(WorkStealingAcrossGpusPlacement, AutoTakesPeerMemoryWhereEveryPairHasItElseHostMemory) {
  using kernels::detail::choose_ws_placement;
  policies::WorkStealingOptions o;  // peer=auto, remote=request
  const std::string no_peer = "no peer access between GPU 0 and GPU 1";
  const kernels::detail::WsPlacement with_peer = choose_ws_placement(o, "", "");
  EXPECT_FALSE(with_peer.host);
  EXPECT_EQ(with_peer.note, "work stealing across GPUs over peer memory (NVLink/PCIe P2P)");
  const kernels::detail::WsPlacement without = choose_ws_placement(o, no_peer, "");
  EXPECT_TRUE(without.host);
  EXPECT_EQ(without.note, "work stealing across GPUs through host memory: " + no_peer);
  o.peer = PeerMemory::Off;
  const kernels::detail::WsPlacement off = choose_ws_placement(o, "", "");
  EXPECT_TRUE(off.host);
  EXPECT_EQ(off.note, "work stealing across GPUs through host memory (--param peer=off)");
  o.peer = PeerMemory::On;
  EXPECT_FALSE(choose_ws_placement(o, "", "").host);
}

TEST(WorkStealingAcrossGpusPlacement, RefusalsNameTheOptionAndTheMissingLink) {
  using kernels::detail::choose_ws_placement;
  const std::string no_peer = "no peer access between GPU 0 and GPU 1";
  auto refusal = [](const policies::WorkStealingOptions& o, const std::string& peer,
                    const std::string& host) -> std::string {
    try {
      choose_ws_placement(o, peer, host);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  policies::WorkStealingOptions on;
  on.peer = PeerMemory::On;
  const std::string a = refusal(on, no_peer, "");
  EXPECT_NE(a.find("peer=on"), std::string::npos) << a;
  EXPECT_NE(a.find(no_peer), std::string::npos) << a;
  policies::WorkStealingOptions steal;
  steal.remote = RemoteMode::Steal;
  const std::string b = refusal(steal, no_peer, "");  // peer=auto without peer memory
  EXPECT_NE(b.find("remote=steal"), std::string::npos) << b;
  EXPECT_NE(b.find("remote=request"), std::string::npos) << b;
  steal.peer = PeerMemory::Off;
  EXPECT_NE(refusal(steal, "", "").find("peer=off"), std::string::npos);
  policies::WorkStealingOptions off;
  off.peer = PeerMemory::Off;
  const std::string c =
      refusal(off, "", "GPU 1's link to the host has no native 64-bit atomic add");
  EXPECT_NE(c.find("native 64-bit atomic add"), std::string::npos) << c;
  EXPECT_NE(c.find("peer=off"), std::string::npos) << c;
  policies::WorkStealingOptions steal_with_peer;
  steal_with_peer.remote = RemoteMode::Steal;
  EXPECT_TRUE(refusal(steal_with_peer, "", "").empty());  // peer=auto with peer memory: it runs
}

}  // namespace
}  // namespace gpulb
