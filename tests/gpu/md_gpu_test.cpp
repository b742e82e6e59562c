// The md scenario (Chen et al. 2010, section 6) on the CUDA backend, mirroring the CPU suite
// (tests/scenarios/md_test.cpp): every solution verifies on one GPU (under both pair searches) and
// on all of them, all give the same forces bit for bit, the GPU's warp samples (__ballot_sync,
// pairs=all) agree with the CPU's emulated warps, and a solution under another policy is refused
// there too.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>
#include <string>
#include <nlohmann/json.hpp>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/cuda/devices.hpp"
#include "gpulb/run.hpp"
#include "gpulb/tracing/statistics.hpp"

namespace gpulb {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda::list_devices().empty()) GTEST_SKIP() << "no CUDA GPU present: GPU tests skipped"

struct Solution {
  const char* name;  // for the test's messages
  const char* solution;
  const char* policy;
  ParamMap options;
  std::uint32_t workers;
};

const Solution kSolutions[] = {
    {"1", "1", "hardware", {}, 0},
    {"2", "2", "hardware", {}, 0},
    {"3", "3", "chunked", {}, 0},
    {"tq paper (120 blocks, 20 a queue)",
     "tq",
     "task-queue",
     {{"variant", "paper"}, {"queue_capacity", "20"}},
     120},
    {"tq modern", "tq", "task-queue", {{"variant", "modern"}}, 0},
};

RunResult run_md(const Solution& s, Backend backend, std::uint32_t atoms, std::uint32_t gpus = 1,
                 const char* pairs = "cells") {
  RunConfig c;
  c.scenario = "md";
  c.policy = s.policy;
  c.backend = backend;
  c.gpus = backend == Backend::Cuda ? gpus : 0;
  c.workers = backend == Backend::Cuda ? s.workers : 2;
  c.params = {{"atoms", std::to_string(atoms)}, {"solution", s.solution}, {"pairs", pairs}};
  for (const auto& [k, v] : s.options) {
    if (backend == Backend::Cuda || k != "variant") c.params[k] = v;
  }
  return run(builtin::registry(), c);
}

nlohmann::json result_of(const RunResult& r) { return nlohmann::json::parse(r.result_json); }

TEST(MdGpu, EverySolutionVerifiesOnOneGpuWithTheSameForces) {
  SKIP_WITHOUT_GPU();
  for (const char* pairs : {"cells", "all"}) {
    SCOPED_TRACE(pairs);
    std::set<std::uint64_t> hashes;
    for (const Solution& s : kSolutions) {
      SCOPED_TRACE(s.name);
      const RunResult r = run_md(s, Backend::Cuda, 32768, 1, pairs);
      EXPECT_TRUE(r.verified) << r.verification;
      EXPECT_EQ(r.tasks, 32768u / 128);
      const auto j = result_of(r);
      if (std::string(pairs) == "all") {
        EXPECT_NE(j.at("warp_efficiency_source").get<std::string>().find("GPU"), std::string::npos);
      }
      hashes.insert(j.at("forces_hash").get<std::uint64_t>());
    }
    EXPECT_EQ(hashes.size(), 1u) << "solutions gave different forces";
  }
}

TEST(MdGpu, EverySolutionVerifiesOnEveryGpuWithTheOneGpuForces) {
  SKIP_WITHOUT_GPU();
  const auto gpus = static_cast<std::uint32_t>(cuda::list_devices().size());
  if (gpus < 2) GTEST_SKIP() << "one GPU present: the multi-GPU case needs two or more";
  for (const Solution& s : kSolutions) {
    SCOPED_TRACE(s.name);
    const RunResult one = run_md(s, Backend::Cuda, 65536, 1),
                    all = run_md(s, Backend::Cuda, 65536, gpus);
    EXPECT_TRUE(all.verified) << all.verification;
    EXPECT_EQ(result_of(one).at("forces_hash"), result_of(all).at("forces_hash"));
    EXPECT_EQ(all.trace.devices.size(), gpus);
  }
}

TEST(MdGpu, WarpSamplesMatchTheCpuEmulationAndThePermutationLowersThem) {
  SKIP_WITHOUT_GPU();
  const auto g1 = result_of(run_md(kSolutions[0], Backend::Cuda, 16384, 1, "all"));
  const auto g2 = result_of(run_md(kSolutions[1], Backend::Cuda, 16384, 1, "all"));
  const auto c1 = result_of(run_md(kSolutions[0], Backend::Cpu, 16384, 1, "all"));
  const auto c2 = result_of(run_md(kSolutions[1], Backend::Cpu, 16384, 1, "all"));
  const double gpu1 = g1.at("warp_efficiency").get<double>(),
               gpu2 = g2.at("warp_efficiency").get<double>();
  const double cpu1 = c1.at("warp_efficiency").get<double>(),
               cpu2 = c2.at("warp_efficiency").get<double>();
  // Equal but for pairs at the cutoff itself, where a fused multiply-add may round r^2 otherwise.
  EXPECT_NEAR(gpu1, cpu1, 1e-3 * cpu1);
  EXPECT_NEAR(gpu2, cpu2, 1e-3 * cpu2);
  EXPECT_GT(gpu1, 1.2 * gpu2) << "sorted " << gpu1 << ", permuted " << gpu2;
  for (const auto& [gpu, cpu] : {std::pair{g1, c1}, std::pair{g2, c2}}) {
    const double d_gpu = gpu.at("divergent_samples").get<double>(),
                 d_cpu = cpu.at("divergent_samples").get<double>();
    EXPECT_NEAR(d_gpu, d_cpu, 1e-3 * d_cpu);
  }
}

TEST(MdGpu, AMillionAtomsVerifyUnderTheTaskQueue) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_md(kSolutions[4], Backend::Cuda, 1 << 20);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, (1u << 20) / 128);
}

// Fewer tasks than resident blocks (a one-wave run): the task queue gives each GPU a grid of its
// even share and the pool no more than that share, so the tasks spread over the SMs as Solution
// 1's launch spreads them. Before, a full grid let the first blocks to poll take every task: up
// to 7 tasks an SM on half of the SMs (md, 64K atoms on 4 H200s).
TEST(MdGpu, AOneWaveTaskQueueRunGivesEachGpuItsShareSpreadOverItsSms) {
  SKIP_WITHOUT_GPU();
  const auto gpus = static_cast<std::uint32_t>(cuda::list_devices().size());
  RunConfig c;
  c.scenario = "md";
  c.policy = "task-queue";
  c.backend = Backend::Cuda;
  c.gpus = gpus;
  c.trace = true;
  // 512 tasks of equal cost (all pairs): each block runs one, so the spread is the grid's. Under the
  // cell list a task takes a few microseconds and an early block takes the next one.
  c.params = {{"atoms", "65536"}, {"solution", "tq"}, {"steps", "0"}, {"pairs", "all"}};
  const RunResult r = run(builtin::registry(), c);
  ASSERT_TRUE(r.verified) << r.verification;
  const std::uint32_t share = (512 + gpus - 1) / gpus;
  std::map<std::uint32_t, std::uint32_t> per_gpu;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> per_sm;
  for (const trace::Track& t : r.trace.tracks) {
    if (t.role != trace::TrackRole::Worker) continue;
    const auto n = static_cast<std::uint32_t>(trace::task_spans(t).size());
    per_gpu[t.device] += n;
    if (n > 0) per_sm[{t.device, t.sm}] += n;
  }
  for (std::uint32_t g = 0; g < gpus; ++g) {
    SCOPED_TRACE("GPU " + std::to_string(g));
    EXPECT_EQ(r.trace.devices[g].workers, share) << "the grid is not the GPU's share of the tasks";
    EXPECT_LE(per_gpu[g], share);
  }
  std::uint32_t most = 0;
  for (const auto& [where, n] : per_sm) most = std::max(most, n);
  // 512 / gpus tasks on an H100's or H200's 132 SMs: the hardware's round-robin puts 1 to 4 on an SM.
  EXPECT_LE(most, (share + 131) / 132 + 1) << "tasks clustered on few SMs";
}

TEST(MdGpu, ASolutionUnderAnotherPolicyIsRefused) {
  SKIP_WITHOUT_GPU();
  try {
    run_md({"3 under hardware", "3", "hardware", {}, 0}, Backend::Cuda, 4096);
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("solution=3 runs under --policy chunked"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpulb
