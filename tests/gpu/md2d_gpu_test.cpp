// G-Charm's 2D molecular dynamics on the GPU: the `combining` policy runs the
// `md2d` scenario's compute objects on one GPU under every strategy and transfer mode and
// verifies against the double-precision reference; the GPU and the CPU backends agree on what was
// computed; the trace holds every request's block.
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

constexpr std::uint64_t kParticles = 50000, kSteps = 4;

RunResult run_md2d(Backend backend, const std::string& strategy, const std::string& transfer,
                   ParamMap extra = {}) {
  RunConfig c;
  c.scenario = "md2d";
  c.policy = "combining";
  c.backend = backend;
  c.gpus = 1;
  c.params = {{"particles", std::to_string(kParticles)},
              {"steps", std::to_string(kSteps)},
              {"strategy", strategy},
              {"transfer", transfer}};
  for (auto& [k, v] : extra) c.params[k] = v;
  return run(builtin::registry(), c);
}

struct Mode {
  const char* strategy;
  const char* transfer;
};
class GpuMd2d : public ::testing::TestWithParam<Mode> {};

TEST_P(GpuMd2d, VerifiesAgainstTheReferenceAndEveryComputeObjectRunsOnce) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_md2d(Backend::Cuda, GetParam().strategy, GetParam().transfer);
  ASSERT_TRUE(r.verified) << r.verification;
  const auto result = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(result.at("wrong_counts").get<std::uint64_t>(), 0u);
  EXPECT_EQ(r.tasks, result.at("requests").get<std::uint64_t>());
  EXPECT_EQ(r.metrics.at("requests"), r.tasks);
  EXPECT_GT(r.metrics.at("kernel_ns"), 0u);
  EXPECT_GT(r.metrics.at("transfer_ns"), 0u);
  EXPECT_GT(r.metrics.at("max_size"), 100u);  // the occupancy API's resident blocks, not a guess
  if (std::string(GetParam().transfer) == "redundant") {
    EXPECT_EQ(r.metrics.at("items_copied"), r.metrics.at("items_read"));
  } else {
    EXPECT_EQ(r.metrics.at("items_copied"), kParticles * kSteps);  // each particle once a step
  }
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndTransfers, GpuMd2d,
                         ::testing::Values(Mode{"adaptive", "redundant"}, Mode{"adaptive", "reuse"},
                                           Mode{"adaptive", "reuse-sorted"},
                                           Mode{"static", "reuse-sorted"}, Mode{"eager", "reuse"}),
                         [](const auto& info) {
                           std::string n =
                               std::string(info.param.strategy) + "_" + info.param.transfer;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(GpuMd2dBackends, TheGpuAndTheCpuComputeTheSameObjects) {
  SKIP_WITHOUT_GPU();
  const RunResult g = run_md2d(Backend::Cuda, "adaptive", "reuse-sorted");
  const RunResult c = run_md2d(Backend::Cpu, "adaptive", "reuse-sorted");
  ASSERT_TRUE(g.verified) << g.verification;
  ASSERT_TRUE(c.verified) << c.verification;
  const auto a = nlohmann::json::parse(g.result_json), b = nlohmann::json::parse(c.result_json);
  EXPECT_EQ(a.at("requests"), b.at("requests"));
  EXPECT_EQ(a.at("tests"), b.at("tests"));
  EXPECT_EQ(a.at("migrated"), b.at("migrated"));
  // Both are float forces against the same double reference: within the tolerance of each other.
  EXPECT_NEAR(a.at("max_position_error").get<double>(), b.at("max_position_error").get<double>(),
              1e-4);
}

TEST(GpuMd2dTrace, EveryRequestsBlockIsTracedWithItsKind) {
  SKIP_WITHOUT_GPU();
  const RunResult r = run_md2d(Backend::Cuda, "static", "reuse",
                               {{"static_k", "100"}, {"particles", "20000"}, {"steps", "2"}});
  ASSERT_TRUE(r.verified) << r.verification;
  std::uint64_t launched = 0, selfs = 0, pairs = 0, sm_lane_tracks = 0;
  for (const trace::Track& t : r.trace.tracks) {
    if (t.role == trace::TrackRole::SmLane) ++sm_lane_tracks;
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::KernelLaunch) launched += e.arg;
      if (e.kind == trace::EventKind::TaskBegin) (e.aux == 0 ? selfs : pairs) += 1;
    }
  }
  EXPECT_EQ(launched, r.tasks);
  EXPECT_EQ(selfs + pairs, r.tasks);
  EXPECT_GT(pairs, 3 * selfs);
  EXPECT_GT(sm_lane_tracks, 0u);
}

}  // namespace
}  // namespace gpulb
