// The `md2d` scenario (G-Charm section 4.2) under the `combining` policy on the CPU backend
// (issue 10, item 5): every strategy and transfer mode verifies (each compute object ran once,
// positions against the double-precision reference), the order in which requests arrive does not
// change the trajectory, particles migrate, the patches differ in cost, the trace holds self and
// pair requests, and bad parameters and wrong policies are refused by name.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/run.hpp"

namespace gpulb {
namespace {

constexpr std::uint64_t kParticles = 3000, kSteps = 5;

RunResult run_md2d(const std::string& strategy, const std::string& transfer, ParamMap extra = {}) {
  RunConfig c;
  c.scenario = "md2d";
  c.policy = "combining";
  c.backend = Backend::Cpu;
  c.workers = 3;
  c.params = {{"particles", std::to_string(kParticles)}, {"steps", std::to_string(kSteps)}, {"producers", "2"},
              {"strategy", strategy},                    {"transfer", transfer}};
  for (auto& [k, v] : extra) c.params[k] = v;
  return run(builtin::registry(), c);
}

struct Mode {
  const char* strategy;
  const char* transfer;
};
class Md2dCombining : public ::testing::TestWithParam<Mode> {};

TEST_P(Md2dCombining, VerifiesAndEveryComputeObjectRunsOnce) {
  const RunResult r = run_md2d(GetParam().strategy, GetParam().transfer);
  ASSERT_TRUE(r.verified) << r.verification;
  const auto result = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(result.at("wrong_counts").get<std::uint64_t>(), 0u);
  EXPECT_EQ(result.at("steps").get<std::uint64_t>(), kSteps);
  EXPECT_EQ(r.tasks, result.at("requests").get<std::uint64_t>());
  EXPECT_EQ(r.metrics.at("requests"), r.tasks);
  EXPECT_LE(result.at("max_position_error").get<double>(), 1e-4);
  // At most 5 compute objects a patch a step (empty ones are not emitted).
  const auto patches = result.at("patches").get<std::uint64_t>();
  EXPECT_LE(r.tasks, 5 * patches * patches * kSteps);
  EXPECT_GT(r.tasks, 4 * patches * patches * kSteps);
  const std::string strategy = GetParam().strategy;
  if (strategy == "eager") {
    EXPECT_EQ(r.metrics.at("launches_eager"), r.tasks);
  } else if (strategy == "static") {
    EXPECT_GT(r.metrics.at("launches_static"), 0u);
  } else {
    EXPECT_GT(r.metrics.at("launches_full") + r.metrics.at("launches_timeout"), 0u);
  }
  // Every particle is an item of its self object and of its patch's 8 pairs: read about 9 times a
  // step. Reuse copies each once a step (a step publishes a new table).
  EXPECT_LE(r.metrics.at("items_read"), 9 * kParticles * kSteps);
  EXPECT_GT(r.metrics.at("items_read"), 8 * kParticles * kSteps);
  if (std::string(GetParam().transfer) == "redundant") {
    EXPECT_EQ(r.metrics.at("items_copied"), r.metrics.at("items_read"));
  } else {
    EXPECT_EQ(r.metrics.at("items_copied"), kParticles * kSteps);
  }
}

INSTANTIATE_TEST_SUITE_P(StrategiesAndTransfers, Md2dCombining,
                         ::testing::Values(Mode{"adaptive", "redundant"}, Mode{"adaptive", "reuse"}, Mode{"adaptive", "reuse-sorted"},
                                           Mode{"static", "redundant"}, Mode{"static", "reuse-sorted"}, Mode{"eager", "reuse"}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.strategy) + "_" + info.param.transfer;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(Md2d, TheArrivalOrderDoesNotChangeTheTrajectory) {
  // Each output has one writer and the host sums them in a fixed order: however the producers and
  // the combining interleave, the forces are the same bits (redundant: the items' order is fixed).
  const auto a = nlohmann::json::parse(run_md2d("adaptive", "redundant", {{"producers", "1"}}).result_json);
  const auto b = nlohmann::json::parse(run_md2d("static", "redundant", {{"producers", "3"}, {"static_k", "7"}}).result_json);
  EXPECT_EQ(a.at("max_position_error").get<double>(), b.at("max_position_error").get<double>());
  EXPECT_EQ(a.at("energy_drift").get<double>(), b.at("energy_drift").get<double>());
  EXPECT_EQ(a.at("tests"), b.at("tests"));
}

TEST(Md2d, SortingTheItemsChangesOnlyTheOrderOfTheSums) {
  const auto a = nlohmann::json::parse(run_md2d("static", "redundant").result_json);
  const auto b = nlohmann::json::parse(run_md2d("adaptive", "reuse-sorted").result_json);
  EXPECT_NEAR(a.at("max_position_error").get<double>(), b.at("max_position_error").get<double>(), 1e-6);
  EXPECT_EQ(a.at("tests"), b.at("tests"));
  EXPECT_EQ(a.at("migrated"), b.at("migrated"));
}

TEST(Md2d, ParticlesMigrateAndPatchesDifferInCost) {
  const RunResult r = run_md2d("adaptive", "reuse", {{"steps", "20"}, {"temperature", "2"}});
  ASSERT_TRUE(r.verified) << r.verification;
  const auto result = nlohmann::json::parse(r.result_json);
  EXPECT_GT(result.at("migrated").get<std::uint64_t>(), 0u);
  EXPECT_EQ(result.at("migrated"), result.at("reference_migrated"));
  // The clusters: the fullest patch holds several times the emptiest (a self object costs n^2).
  EXPECT_GT(result.at("patch_particles_max").get<std::uint64_t>(), 4 * std::max<std::uint64_t>(1, result.at("patch_particles_min")));
  EXPECT_GT(result.at("interactions").get<std::uint64_t>(), 0u);
  EXPECT_GT(result.at("tests").get<std::uint64_t>(), 2 * result.at("interactions").get<std::uint64_t>());
}

TEST(Md2d, AToleranceTighterThanFloatFailsTheVerification) {
  const RunResult r = run_md2d("adaptive", "reuse", {{"tolerance", "0.000000001"}});
  EXPECT_FALSE(r.verified);
  EXPECT_NE(r.verification.find("max error"), std::string::npos) << r.verification;
}

TEST(Md2d, TheTraceHoldsSelfAndPairRequests) {
  const RunResult r = run_md2d("static", "reuse", {{"static_k", "50"}});
  ASSERT_TRUE(r.verified) << r.verification;
  std::map<std::uint16_t, std::uint64_t> kinds;
  std::uint64_t launched = 0;
  for (const trace::Track& t : r.trace.tracks) {
    for (const trace::Event& e : t.events) {
      if (e.kind == trace::EventKind::TaskBegin) ++kinds[e.aux];
      if (e.kind == trace::EventKind::KernelLaunch) launched += e.arg;
    }
  }
  EXPECT_EQ(launched, r.tasks);
  EXPECT_GT(kinds[0], 0u);             // self
  EXPECT_GT(kinds[1], 3 * kinds[0]);   // pair: four a patch
  EXPECT_EQ(kinds[0] + kinds[1], r.tasks);
}

TEST(Md2d, IsNamedWhereAScenarioWithoutRequestsIsRefusedUnderCombining) {
  RunConfig c;
  c.scenario = "patterns";
  c.policy = "combining";
  c.backend = Backend::Cpu;
  try {
    (void)run(builtin::registry(), c);
    FAIL() << "patterns under combining ran";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("md2d"), std::string::npos) << e.what();
  }
}

TEST(Md2d, IsRefusedUnderAPolicyThatRunsNoRequests) {
  RunConfig c;
  c.scenario = "md2d";
  c.policy = "task-queue";
  c.backend = Backend::Cpu;
  try {
    (void)run(builtin::registry(), c);
    FAIL() << "md2d under task-queue ran";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("use combining"), std::string::npos) << e.what();
  }
}

TEST(Md2d, BadParametersAreRefusedByName) {
  for (const auto& [name, value] : std::multimap<std::string, std::string>{{"patches", "2"},
                                                                           {"patches", "200"},
                                                                           {"density", "0.9"},
                                                                           {"density", "x"},
                                                                           {"cutoff", "1"},
                                                                           {"steps", "0"},
                                                                           {"dt", "1"},
                                                                           {"contrast", "1"},
                                                                           {"clusters", "0"},
                                                                           {"particles", "10"},
                                                                           {"tolerance", "0"},
                                                                           {"strategy", "lazy"},
                                                                           {"transfer", "all"}}) {
    try {
      (void)run_md2d("adaptive", "reuse", {{name, value}});
      FAIL() << name << "=" << value << " ran";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << name << "=" << value << ": " << e.what();
    }
  }
  // A box too small for 3 patches of the cutoff's side names the cutoff.
  try {
    (void)run_md2d("adaptive", "reuse", {{"particles", "64"}, {"density", "0.5"}, {"cutoff", "4.5"}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cutoff"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpulb
