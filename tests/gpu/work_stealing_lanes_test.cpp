// work-stealing with a task per thread (--param task_per=lane, kernels/work_stealing_lanes.cuh):
// UTS trees verify against the host search at every block size and steal chunk, including a
// binomial root wider than a block and deques small enough to spill; a full deque without
// spilling fails naming its capacity; the trace holds one task zone per node; the settings with
// no lane form are refused before anything runs; across GPUs (where 2 are present) the same trees
// and T1 verify, the trace holds each node once and the steals across, and remote=steal is
// refused. Small trees except T1 (4 million nodes), which compute-sanitizer runs skip
// (--gtest_filter=-*T1*).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/cuda/devices.hpp"
#include "gpulb/run.hpp"
#include "gpulb/tracing/event.hpp"

namespace gpulb {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda::list_devices().empty()) GTEST_SKIP() << "no CUDA GPU present: GPU tests skipped"
#define SKIP_WITHOUT_TWO_GPUS() \
  if (cuda::list_devices().size() < 2) GTEST_SKIP() << "fewer than 2 GPUs: multi-GPU test skipped"

// The GPU counts a test across GPUs runs with: 2, and every GPU present where that is more.
std::vector<std::uint32_t> gpu_settings() {
  const auto present = static_cast<std::uint32_t>(cuda::list_devices().size());
  std::vector<std::uint32_t> s{2};
  if (present > 2) s.push_back(std::min(present, 8u));
  return s;
}

const ParamMap kGeometric = {{"tree", "custom"}, {"t", "1"}, {"a", "3"},
                             {"d", "6"},         {"b", "4"}, {"r", "19"}};
// A binomial root of 300 children (more than a block's threads), then q * m = 0.8 below it.
const ParamMap kWideBinomial = {{"tree", "custom"}, {"t", "0"}, {"b", "300"},
                                {"q", "0.2"},       {"m", "4"}, {"r", "7"}};

RunResult run_lanes(ParamMap params, std::uint32_t block_size = 32, bool trace = false,
                    Backend backend = Backend::Cuda, std::uint32_t gpus = 1) {
  RunConfig c;
  c.scenario = "uts";
  c.policy = "work-stealing";
  c.backend = backend;
  c.gpus = gpus;
  c.block_size = block_size;
  c.trace = trace;
  params["task_per"] = "lane";
  c.params = std::move(params);
  return run(builtin::registry(), c);
}

std::uint64_t result_nodes(const RunResult& r) {
  const std::size_t at = r.result_json.find("\"nodes\":");
  if (at == std::string::npos) return 0;
  return std::stoull(r.result_json.substr(at + 8));
}

TEST(GpuWorkStealingLanes, SmallTreesVerifyAtEveryBlockSizeAndStealChunk) {
  SKIP_WITHOUT_GPU();
  for (const ParamMap& tree : {kGeometric, kWideBinomial}) {
    for (std::uint32_t block : {32u, 64u, 256u}) {
      for (const char* chunk : {"1", "20"}) {
        ParamMap p = tree;
        p["steal_chunk"] = chunk;
        const RunResult r = run_lanes(p, block);
        EXPECT_TRUE(r.verified) << "block " << block << ", steal_chunk " << chunk << ": "
                                << r.verification;
        // A task a node: as many tasks ran as the search counted nodes.
        EXPECT_EQ(r.tasks, result_nodes(r)) << r.result_json;
        EXPECT_GT(r.tasks, 1u);
      }
    }
  }
}

// Deques of 8 slots: a batch's children spill to the overflow queue, and none is lost.
TEST(GpuWorkStealingLanes, SmallDequesSpillAndLoseNothing) {
  SKIP_WITHOUT_GPU();
  ParamMap p = kWideBinomial;
  p["deque_capacity"] = "8";
  const RunResult r = run_lanes(p);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_GT(r.metrics.at("spilled"), 0u) << "the root's 300 children should not fit 8 slots";
}

TEST(GpuWorkStealingLanes, FullDequeWithoutSpillingFailsNamingTheCapacity) {
  SKIP_WITHOUT_GPU();
  ParamMap p = kWideBinomial;
  p["deque_capacity"] = "8";
  p["deque_overflow"] = "fail";
  try {
    run_lanes(p);
    FAIL() << "300 children cannot fit a deque of 8 without spilling";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("deque_capacity=8"), std::string::npos) << e.what();
  }
}

// The spill of one batch passes the block's spawn slots: the run fails naming both capacities.
TEST(GpuWorkStealingLanes, SpillPastTheSpawnSlotsFailsNamingThem) {
  SKIP_WITHOUT_GPU();
  ParamMap p = kWideBinomial;
  p["deque_capacity"] = "8";
  p["spawn_capacity"] = "16";
  try {
    run_lanes(p);
    FAIL() << "292 spilled children cannot fit 16 spawn slots";
  } catch (const RunError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("spawn_capacity=16"), std::string::npos) << m;
    EXPECT_NE(m.find("deque_capacity=8"), std::string::npos) << m;
  }
}

// One TaskBegin/TaskEnd pair per node, on the block tracks; the edges inside a batch are placed
// (kTimeInterpolated), the batch's outer edges read from the clock.
TEST(GpuWorkStealingLanes, TraceHasAZonePerNodeAndMarksPlacedTimes) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_lanes(kGeometric, 32, true);
  ASSERT_TRUE(r.verified) << r.verification;
  std::uint64_t begins = 0, ends = 0, placed = 0, timed = 0;
  std::set<std::uint32_t> ids;  // the device writes a batch's ids packed, the host expands them
  for (const trace::Track& t : r.trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind != trace::EventKind::TaskBegin && e.kind != trace::EventKind::TaskEnd) continue;
      if (e.kind == trace::EventKind::TaskBegin) ids.insert(e.arg);
      (e.kind == trace::EventKind::TaskBegin ? begins : ends) += 1;
      ((e.flags & trace::kTimeInterpolated) ? placed : timed) += 1;
    }
  }
  EXPECT_EQ(begins, r.tasks);
  EXPECT_EQ(ends, r.tasks);
  EXPECT_EQ(ids.size(), r.tasks) << "every node's id once";
  EXPECT_EQ(r.stats.tasks, r.tasks) << "every zone pairs up";
  EXPECT_GT(placed, 0u) << "no batch held more than one task";
  EXPECT_GT(timed, 0u);
}

// Segments far too small for the run: what fits is whole task pairs, what does not is counted as
// dropped events (each node's TaskBegin and TaskEnd, at most a few slots a block short).
TEST(GpuWorkStealingLanes, AFullTraceKeepsWholeZonesAndCountsTheDroppedEvents) {
  SKIP_WITHOUT_GPU();
  // 4 slots a block: at most two ranges of 32 tasks (lane_trace_records.hpp), far from T1's nodes.
  const RunResult r =
      run_lanes({{"tree", "T1"}, {"watchdog_ms", "60000"}, {"trace_capacity", "4"}}, 32, true);
  ASSERT_TRUE(r.verified) << r.verification;
  std::uint64_t begins = 0, ends = 0, recorded = 0, dropped = 0;
  for (const trace::Track& t : r.trace.tracks) {
    dropped += t.dropped;
    recorded += t.events.size();
    for (const trace::Event& e : t.events) {
      begins += e.kind == trace::EventKind::TaskBegin;
      ends += e.kind == trace::EventKind::TaskEnd;
    }
  }
  EXPECT_EQ(begins, ends) << "a zone cut in half";
  EXPECT_LT(begins, r.tasks / 10) << "4 slots a block cannot hold T1's 4.1 M nodes";
  // Every node's two events were kept or counted as dropped (a block may leave up to 3 slots of
  // its segment unused: that much short). Counted in slots, a batch of k would count 1 + k/2.
  const std::uint64_t blocks = r.trace.tracks.size();
  EXPECT_GE(recorded + dropped + 4 * blocks, 2 * r.tasks) << "dropped counts slots, not events";
  EXPECT_LE(recorded + dropped, 4 * r.tasks)
      << "a batch counted more than its events and a few others";
}

TEST(GpuWorkStealingLanes, UtsT1MatchesThePublishedCounts) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_lanes({{"tree", "T1"}, {"watchdog_ms", "60000"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, 4130071u);
}

TEST(GpuWorkStealingLanes, SettingsWithoutALaneFormAreRefused) {
  SKIP_WITHOUT_GPU();
  auto expect_config_error = [](auto&& f, const std::string& fragment) {
    try {
      f();
      FAIL() << "should have been refused naming " << fragment;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_config_error(
      [] {
        run_lanes({{"tree", "custom"},
                   {"t", "1"},
                   {"a", "3"},
                   {"d", "4"},
                   {"b", "4"},
                   {"leaves", "inline"}});
      },
      "leaves=task");
  expect_config_error([] { run_lanes(kGeometric, 48); }, "multiple of 32");
  expect_config_error(
      [] {
        RunConfig c;
        c.scenario = "nqueens";
        c.policy = "work-stealing";
        c.backend = Backend::Cuda;
        c.gpus = 1;
        c.params = {{"n", "6"}, {"cutoff", "2"}, {"task_per", "lane"}};
        run(builtin::registry(), c);
      },
      "lane form");
}

// Across GPUs (work_stealing_lanes_multi_gpu.cuh): one root on GPU 0, so every other GPU's
// blocks live on batches asked from another GPU; at two block sizes and two answer sizes. (Small
// trees: GPU 0 may run all of one before another GPU asks, so only the result is checked.)
TEST(GpuWorkStealingLanesAcrossGpus, SmallTreesVerify) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings()) {
    for (const ParamMap& tree : {kGeometric, kWideBinomial}) {
      for (const std::uint32_t block_size : {32u, 128u}) {
        for (const char* chunk : {"4", "32"}) {
          SCOPED_TRACE(std::to_string(gpus) + " GPUs, block " + std::to_string(block_size) +
                       ", remote_chunk=" + chunk + ", b=" + tree.at("b"));
          ParamMap p = tree;
          p["remote_chunk"] = chunk;
          const RunResult r = run_lanes(p, block_size, false, Backend::Cuda, gpus);
          EXPECT_TRUE(r.verified) << r.verification;
          EXPECT_EQ(r.tasks, result_nodes(r));
        }
      }
    }
  }
}

// T1 (4 million nodes) is long enough for every GPU to take part. An answer of remote_chunk=256
// to a block of 32 is cut to the block size (it lands in the batch array).
TEST(GpuWorkStealingLanesAcrossGpus, UtsT1MatchesThePublishedCountsAndEveryGpuWorks) {
  SKIP_WITHOUT_TWO_GPUS();
  for (const std::uint32_t gpus : gpu_settings())
    for (const auto& [block_size, chunk] : {std::pair{128u, "0"}, std::pair{32u, "256"}}) {
      SCOPED_TRACE(std::to_string(gpus) + " GPUs, block " + std::to_string(block_size) +
                   ", remote_chunk=" + chunk);
      const RunResult r =
          run_lanes({{"tree", "T1"}, {"watchdog_ms", "60000"}, {"remote_chunk", chunk}}, block_size,
                    false, Backend::Cuda, gpus);
      EXPECT_TRUE(r.verified) << r.verification;
      EXPECT_EQ(r.tasks, 4130071u);
      for (std::uint32_t g = 1; g < gpus; ++g)
        EXPECT_GT(r.metrics.at("gpu" + std::to_string(g) + "_tasks"), 0u) << "GPU " << g;
      EXPECT_GT(r.metrics.at("remote_steals"), 0u);
    }
}

// Each node's zone once, on the GPU that ran it (children's ids interleave across GPUs, so a
// batch of children is not a range of consecutive ids), and the batches asked from another GPU
// marked as steals across. T1, long enough for GPU 1 to ask.
TEST(GpuWorkStealingLanesAcrossGpus, TraceHasAZonePerNodeAndStealsAcrossGpus) {
  SKIP_WITHOUT_TWO_GPUS();
  const RunResult r =
      run_lanes({{"tree", "T1"}, {"watchdog_ms", "60000"}}, 128, true, Backend::Cuda, 2);
  ASSERT_TRUE(r.verified) << r.verification;
  std::uint64_t begins = 0, across = 0;
  std::set<std::uint32_t> ids;
  for (const trace::Track& t : r.trace.tracks) {
    EXPECT_EQ(t.dropped, 0u) << t.name;
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::TaskBegin) {
        ++begins;
        ids.insert(e.arg);
      }
      if (e.kind == trace::EventKind::Steal && trace::steal_crosses_devices(e, t.device)) ++across;
    }
  }
  EXPECT_EQ(begins, r.tasks);
  EXPECT_EQ(ids.size(), r.tasks) << "every node's id once";
  EXPECT_EQ(across, r.metrics.at("remote_steals"));
  EXPECT_GT(across, 0u);
}

TEST(GpuWorkStealingLanesAcrossGpus, RemoteStealIsRefusedNamingRequest) {
  SKIP_WITHOUT_TWO_GPUS();
  try {
    run_lanes({{"tree", "T1"}, {"remote", "steal"}}, 128, false, Backend::Cuda, 2);
    FAIL() << "task_per=lane with remote=steal across GPUs should be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("task_per=lane across GPUs"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpulb
