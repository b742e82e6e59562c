// The `nbody` scenario under the `combining` policy on the CPU backend: every strategy
// and transfer mode verifies (each request ran once over its whole interaction list, forces
// against a direct sum, momentum), the modes agree on the forces, the trace holds the combining
// decisions, and wrong pairings of scenario and policy are refused.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/run.hpp"

namespace gpulb {
namespace {

RunResult run_nbody(const std::string& strategy, const std::string& transfer, ParamMap extra = {}) {
  RunConfig c;
  c.scenario = "nbody";
  c.policy = "combining";
  c.backend = Backend::Cpu;
  c.workers = 3;
  c.params = {{"particles", "3000"}, {"steps", "2"},         {"walkers", "2"},
              {"sample", "64"},      {"strategy", strategy}, {"transfer", transfer}};
  for (auto& [k, v] : extra) c.params[k] = v;
  return run(builtin::registry(), c);
}

struct Mode {
  const char* strategy;
  const char* transfer;
};
class NBodyCombining : public ::testing::TestWithParam<Mode> {};

TEST_P(NBodyCombining, VerifiesAndEveryRequestRunsOnce) {
  const RunResult r = run_nbody(GetParam().strategy, GetParam().transfer);
  ASSERT_TRUE(r.verified) << r.verification;
  const auto result = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(result.at("wrong_counts").get<std::uint64_t>(), 0u);
  EXPECT_EQ(r.tasks, result.at("requests").get<std::uint64_t>());
  EXPECT_EQ(r.metrics.at("requests"), r.tasks);
  // The launches by reason add up to all launches, and the strategy's own reason is among them.
  std::uint64_t by_reason = 0;
  for (const char* reason : {"full", "timeout", "static", "eager", "drain"})
    by_reason += r.metrics.at(std::string("launches_") + reason);
  EXPECT_EQ(by_reason, r.metrics.at("launches"));
  const std::string strategy = GetParam().strategy;
  if (strategy == "eager") {
    EXPECT_EQ(r.metrics.at("launches_eager"), r.tasks);
  }
  if (strategy == "static") {
    EXPECT_GT(r.metrics.at("launches_static"), 0u);
  }
  if (strategy == "adaptive") {
    EXPECT_GT(r.metrics.at("launches_full") + r.metrics.at("launches_timeout"), 0u);
  }
  // Reuse copies each item once per step at most; redundant copies every item every time.
  if (std::string(GetParam().transfer) == "redundant") {
    EXPECT_EQ(r.metrics.at("items_copied"), r.metrics.at("items_read"));
  } else {
    EXPECT_LT(r.metrics.at("items_copied") * 10, r.metrics.at("items_read"));
  }
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndTransfers, NBodyCombining,
                         ::testing::Values(Mode{"adaptive", "redundant"}, Mode{"adaptive", "reuse"},
                                           Mode{"adaptive", "reuse-sorted"},
                                           Mode{"static", "reuse-sorted"}, Mode{"eager", "reuse"},
                                           Mode{"static", "redundant"}),
                         [](const auto& info) {
                           std::string n =
                               std::string(info.param.strategy) + "_" + info.param.transfer;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(NBody, TransferModesGiveTheSameForces) {
  const auto a = nlohmann::json::parse(run_nbody("static", "redundant").result_json);
  const auto b = nlohmann::json::parse(run_nbody("adaptive", "reuse-sorted").result_json);
  // Sorting changes the order of the sums only: the errors against the direct sum agree closely.
  EXPECT_NEAR(a.at("force_error_rms").get<double>(), b.at("force_error_rms").get<double>(), 1e-5);
  EXPECT_NEAR(a.at("momentum_drift").get<double>(), b.at("momentum_drift").get<double>(), 1e-6);
  EXPECT_EQ(a.at("interactions"), b.at("interactions"));
}

TEST(NBody, TheTraceHoldsEachLaunchWithItsReasonAndTheWorkGroupListLevel) {
  const RunResult r = run_nbody("static", "reuse", {{"static_k", "50"}});
  ASSERT_TRUE(r.verified) << r.verification;
  std::uint64_t launched = 0, launches = 0, levels = 0, transfers = 0;
  std::map<std::uint16_t, std::uint64_t> reasons;
  for (const trace::Track& t : r.trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::KernelLaunch) launched += e.arg, ++launches, ++reasons[e.aux];
      if (e.kind == trace::EventKind::QueueLevel) ++levels;
      if (e.kind == trace::EventKind::Transfer) ++transfers;
    }
  }
  EXPECT_EQ(launched, r.tasks);
  EXPECT_EQ(launches, r.metrics.at("launches"));
  EXPECT_GT(reasons[3], 0u);  // LaunchReason::Static
  EXPECT_GT(levels, 0u);
  EXPECT_EQ(transfers, 2 * launches);  // one each way per launch
}

TEST(NBody, IsRefusedUnderAPolicyThatRunsNoRequestsAndTheReverse) {
  RunConfig c;
  c.scenario = "nbody";
  c.policy = "task-queue";
  c.backend = Backend::Cpu;
  try {
    (void)run(builtin::registry(), c);
    FAIL() << "nbody under task-queue ran";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("use combining"), std::string::npos) << e.what();
  }
  c.scenario = "patterns";
  c.policy = "combining";
  try {
    (void)run(builtin::registry(), c);
    FAIL() << "patterns under combining ran";
  } catch (const ConfigError& e) {
    // The message names the scenarios that make requests ("use md2d, nbody").
    EXPECT_NE(std::string(e.what()).find("use "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nbody"), std::string::npos) << e.what();
  }
}

TEST(NBody, BadParametersAreRefusedByName) {
  for (const auto& [name, value] : std::map<std::string, std::string>{{"theta", "2"},
                                                                      {"theta", "x"},
                                                                      {"bucket", "17"},
                                                                      {"particles", "10"},
                                                                      {"dt", "-1"},
                                                                      {"strategy", "lazy"},
                                                                      {"transfer", "all"}}) {
    try {
      (void)run_nbody("adaptive", "reuse", {{name, value}});
      FAIL() << name << "=" << value << " ran";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  try {
    (void)run_nbody("adaptive", "reuse", {{"particles", "64"}, {"spheres", "65"}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("spheres"), std::string::npos) << e.what();
  }
}

TEST(NBody, ACacheTooSmallForOneCombinedRequestFailsNamingTheOption) {
  try {
    (void)run_nbody("static", "reuse", {{"cache_items", "1024"}, {"static_k", "1000"}});
    FAIL() << "ran with a cache smaller than a combined request";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("cache_items"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpulb

namespace gpulb {
namespace {

RunResult run_nbody_hybrid(const std::string& strategy, ParamMap extra = {}) {
  RunConfig c;
  c.scenario = "nbody";
  c.policy = "hybrid";
  c.backend = Backend::Cpu;
  c.workers = 4;
  c.params = {{"particles", "3000"}, {"steps", "2"},         {"walkers", "2"},
              {"sample", "64"},      {"strategy", strategy}, {"max_size", "16"}};
  for (auto& [k, v] : extra) c.params[k] = v;
  return run(builtin::registry(), c);
}

// The hybrid policy's CPU and GPU shares sum to every request exactly once.
TEST(NBodyHybrid, TheTwoSidesShareEveryRequestExactlyOnce) {
  for (const char* strategy : {"adaptive", "static"}) {
    const RunResult r = run_nbody_hybrid(strategy);
    ASSERT_TRUE(r.verified) << strategy << ": " << r.verification;
    EXPECT_EQ(r.metrics.at("cpu_requests") + r.metrics.at("gpu_requests"), r.tasks) << strategy;
    EXPECT_EQ(r.metrics.at("requests"), r.tasks);
    EXPECT_EQ(r.metrics.at("cpu_items_copied"), 0u);  // the CPU side reads the table in place
    // Every split is a host event; its CPU requests add up to the CPU side's.
    std::uint64_t splits = 0, to_cpu = 0;
    for (const trace::Track& t : r.trace.tracks) {
      for (const trace::Event& e : t.events) {
        if (e.kind == trace::EventKind::RequestSplit) ++splits, to_cpu += e.arg;
      }
    }
    EXPECT_EQ(splits, r.metrics.at("launches")) << strategy;
    EXPECT_EQ(to_cpu, r.metrics.at("cpu_requests")) << strategy;
  }
}

TEST(NBodyHybrid, StaticSharesFollowCpuShare) {
  const RunResult none = run_nbody_hybrid("static", {{"cpu_share", "0"}});
  ASSERT_TRUE(none.verified) << none.verification;
  EXPECT_EQ(none.metrics.at("cpu_requests"), 0u);
  EXPECT_EQ(none.metrics.at("gpu_requests"), none.tasks);
  const RunResult all = run_nbody_hybrid("static", {{"cpu_share", "1"}});
  ASSERT_TRUE(all.verified) << all.verification;
  EXPECT_EQ(all.metrics.at("cpu_requests"), all.tasks);
  EXPECT_THROW((void)run_nbody_hybrid("static", {{"cpu_share", "1.5"}}), ConfigError);
  EXPECT_THROW((void)run_nbody_hybrid("eager"), ConfigError);  // combining's strategy, not hybrid's
}

}  // namespace
}  // namespace gpulb
