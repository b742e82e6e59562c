#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "policy_handles.hpp"
#include "gpulb/cpu/execute.hpp"
#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "patterns/patterns.hpp"

namespace gpulb::scenarios::patterns {
namespace {

const Registry& registry() { return builtin::registry(); }

struct Case {
  const char* pattern;
  const char* policy;
};

class PatternsOnCpu : public ::testing::TestWithParam<Case> {};

TEST_P(PatternsOnCpu, VerifiesAndRemovesTheDocumentedWork) {
  RunConfig c;
  c.scenario = "patterns";
  c.policy = GetParam().policy;
  c.backend = Backend::Cpu;
  c.workers = 4;
  c.block_size = 32;
  c.params = {{"pattern", GetParam().pattern}, {"blocks", "400"}, {"work", "50"}};
  const RunResult r = run(registry(), c);
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, 400u);
  const auto result = nlohmann::json::parse(r.result_json);
  const double expected_fraction = std::string(GetParam().pattern) == "P0"   ? 1.0
                                   : std::string(GetParam().pattern) == "P4" ? 0.25
                                                                             : 0.5;
  EXPECT_NEAR(result.at("work_fraction").get<double>(), expected_fraction, 0.06);
}

INSTANTIATE_TEST_SUITE_P(AllPatternsBothPolicies, PatternsOnCpu,
                         ::testing::Values(Case{"P0", "task-queue"}, Case{"P1", "task-queue"},
                                           Case{"P2", "task-queue"}, Case{"P3", "task-queue"},
                                           Case{"P4", "task-queue"}, Case{"P0", "hardware"},
                                           Case{"P1", "hardware"}, Case{"P2", "hardware"},
                                           Case{"P3", "hardware"}, Case{"P4", "hardware"}),
                         [](const auto& info) {
                           return std::string(info.param.pattern) + "_" +
                                  (info.param.policy[0] == 't' ? "task_queue" : "hardware");
                         });

TEST(Patterns, NullifiedBlocksFollowTheDocumentedRules) {
  EXPECT_FALSE(is_nullified(0, 5, 8));
  EXPECT_TRUE(is_nullified(1, 5, 8));
  EXPECT_FALSE(is_nullified(1, 4, 8));
  EXPECT_FALSE(is_nullified(2, 3, 8));
  EXPECT_TRUE(is_nullified(2, 4, 8));
  EXPECT_FALSE(is_nullified(4, 8, 16));
  EXPECT_TRUE(is_nullified(4, 9, 16));
  int p3 = 0;
  for (std::uint32_t b = 0; b < 10000; ++b) p3 += is_nullified(3, b, 10000);
  EXPECT_NEAR(p3, 5000, 200);
}

// Through the Workload interface a backend uses: the body writes the records, collect() keeps
// them; a damaged record must fail verify().
TEST(Patterns, AWrongResultFailsVerification) {
  PatternsInstance inst(0, 16, 5);
  ExecPlan plan;
  plan.policy = &policies::hardware();
  plan.workers = 2;
  plan.block_size = 4;
  plan.trace = false;
  const auto tasks = inst.initial_tasks();
  plan.tasks = tasks;
  std::vector<PatternsRecord> records(inst.record_count(plan.workers));
  const ExecOutput out = cpu::execute(plan, inst.body(records.data()));
  inst.collect({records}, plan, out);
  EXPECT_TRUE(inst.verify().ok);

  std::vector<PatternsRecord> wrong_sum = records;
  wrong_sum[3].checksum ^= 1;
  inst.collect({wrong_sum}, plan, out);
  EXPECT_FALSE(inst.verify().ok);

  std::vector<PatternsRecord> ran_twice = records;
  ran_twice[7].run_count = 2;
  inst.collect({ran_twice}, plan, out);
  const Verification v = inst.verify();
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.message.find("block 7 ran 2 times"), std::string::npos) << v.message;
}

// Two GPUs each ran some of the blocks: collect() sums their records.
TEST(Patterns, RecordsOfSeveralDevicesAreSummed) {
  PatternsInstance inst(0, 8, 3);
  ExecPlan plan;
  plan.policy = &policies::hardware();
  plan.workers = 2;
  plan.block_size = 2;
  plan.trace = false;
  const auto tasks = inst.initial_tasks();
  plan.tasks = tasks;
  std::vector<PatternsRecord> all(8);
  const ExecOutput out = cpu::execute(plan, inst.body(all.data()));
  std::vector<PatternsRecord> first(8), second(8);
  for (std::size_t i = 0; i < 8; ++i) (i < 5 ? first : second)[i] = all[i];
  inst.collect({first, second}, plan, out);
  EXPECT_TRUE(inst.verify().ok) << inst.verify().message;
  inst.collect({first}, plan, out);
  EXPECT_FALSE(inst.verify().ok);
}

}  // namespace
}  // namespace gpulb::scenarios::patterns
