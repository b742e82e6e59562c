// G-Charm on the GPU: the `combining` policy runs the `nbody` scenario's work requests
// on one GPU under every strategy and transfer mode and verifies; the trace holds the launches
// with their reasons and the blocks on SM lanes; the device times kernels and transfers apart.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/cuda/devices.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/run.hpp"

namespace gpulb {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda::list_devices().empty()) GTEST_SKIP() << "no CUDA GPU present: GPU tests skipped"

RunResult run_nbody_gpu(const std::string& strategy, const std::string& transfer,
                        ParamMap extra = {}) {
  RunConfig c;
  c.scenario = "nbody";
  c.policy = "combining";
  c.backend = Backend::Cuda;
  c.gpus = 1;
  c.params = {{"particles", "20000"},
              {"steps", "2"},
              {"sample", "64"},
              {"strategy", strategy},
              {"transfer", transfer}};
  for (auto& [k, v] : extra) c.params[k] = v;
  return run(builtin::registry(), c);
}

struct Mode {
  const char* strategy;
  const char* transfer;
};
class GpuCombining : public ::testing::TestWithParam<Mode> {};

TEST_P(GpuCombining, NBodyVerifiesAndTheDeviceTimesKernelsAndTransfersApart) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_nbody_gpu(GetParam().strategy, GetParam().transfer);
  ASSERT_TRUE(r.verified) << r.verification;
  const auto result = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(r.tasks, result.at("requests").get<std::uint64_t>());
  EXPECT_EQ(r.metrics.at("requests"), r.tasks);
  EXPECT_GT(r.metrics.at("kernel_ns"), 0u);
  EXPECT_GT(r.metrics.at("transfer_ns"), 0u);
  EXPECT_GT(r.metrics.at("max_size"), 100u);  // the occupancy API's resident blocks, not a guess
  if (std::string(GetParam().transfer) == "redundant") {
    EXPECT_EQ(r.metrics.at("items_copied"), r.metrics.at("items_read"));
  } else {
    EXPECT_LT(r.metrics.at("items_copied") * 10, r.metrics.at("items_read"));
  }
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndTransfers, GpuCombining,
                         ::testing::Values(Mode{"adaptive", "redundant"}, Mode{"adaptive", "reuse"},
                                           Mode{"adaptive", "reuse-sorted"},
                                           Mode{"static", "reuse-sorted"}, Mode{"eager", "reuse"}),
                         [](const auto& info) {
                           std::string n =
                               std::string(info.param.strategy) + "_" + info.param.transfer;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(GpuCombiningTrace, LaunchesCarryTheirReasonAndBlocksLieOnSmLanes) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_nbody_gpu("static", "reuse", {{"static_k", "100"}});
  ASSERT_TRUE(r.verified) << r.verification;
  std::uint64_t launched = 0, static_launches = 0, begins = 0, sm_lane_tracks = 0;
  for (const trace::Track& t : r.trace.tracks) {
    if (t.role == trace::TrackRole::SmLane) ++sm_lane_tracks;
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::KernelLaunch)
        launched += e.arg, static_launches += e.aux == 3;
      if (e.kind == trace::EventKind::TaskBegin) ++begins;
    }
  }
  EXPECT_EQ(launched, r.tasks);
  EXPECT_GT(static_launches, 0u);
  EXPECT_EQ(begins, r.tasks);  // every request's block traced
  EXPECT_GT(sm_lane_tracks, 0u);
}

TEST(GpuCombiningTrace, SeveralGpusAreRefusedWithTheReason) {
  SKIP_WITHOUT_GPU();
  if (cuda::list_devices().size() < 2) GTEST_SKIP() << "fewer than 2 GPUs";
  RunConfig c;
  c.scenario = "nbody";
  c.policy = "combining";
  c.backend = Backend::Cuda;
  c.gpus = 2;
  try {
    (void)run(builtin::registry(), c);
    FAIL() << "combining ran on 2 GPUs";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("one GPU"), std::string::npos) << e.what();
  }
}

// The hybrid policy: CPU threads and the GPU in one run, one trace, one time axis.
TEST(GpuHybrid, TheCpuAndTheGpuShareEveryRequestExactlyOnceInOneTrace) {
  SKIP_WITHOUT_GPU();
  for (const char* strategy : {"adaptive", "static"}) {
    RunConfig c;
    c.scenario = "nbody";
    c.policy = "hybrid";
    c.backend = Backend::Cuda;
    c.gpus = 1;
    c.workers = 4;
    c.params = {{"particles", "20000"},
                {"steps", "2"},
                {"sample", "64"},
                {"strategy", strategy},
                {"cpu_share", "0.2"}};
    const RunResult r = run(builtin::registry(), c);
    ASSERT_TRUE(r.verified) << strategy << ": " << r.verification;
    EXPECT_EQ(r.metrics.at("cpu_requests") + r.metrics.at("gpu_requests"), r.tasks) << strategy;
    EXPECT_GT(r.metrics.at("gpu_requests"), 0u) << strategy;
    ASSERT_EQ(r.trace.devices.size(), 2u);
    EXPECT_EQ(r.trace.devices[0].kind, trace::DeviceKind::Cpu);
    EXPECT_EQ(r.trace.devices[1].kind, trace::DeviceKind::Gpu);
    std::uint64_t cpu_tasks = 0, gpu_tasks = 0, splits = 0;
    for (const trace::Track& t : r.trace.tracks) {
      for (const trace::Event& e : t.events) {
        if (e.kind == trace::EventKind::TaskBegin) (t.device == 0 ? cpu_tasks : gpu_tasks)++;
        if (e.kind == trace::EventKind::RequestSplit) ++splits;
      }
    }
    EXPECT_EQ(cpu_tasks, r.metrics.at("cpu_requests")) << strategy;
    EXPECT_EQ(gpu_tasks, r.metrics.at("gpu_requests")) << strategy;
    EXPECT_EQ(splits, r.metrics.at("launches")) << strategy;
  }
}

}  // namespace
}  // namespace gpulb
