// nqueens and connect4 on every dynamic-task policy of the CPU backend.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "connect4/connect4.hpp"
#include "nqueens/nqueens.hpp"
#include "nqueens/nqueens_body.hpp"

namespace gpulb::scenarios {
namespace {

const Registry& registry() {
  return builtin::registry();
}

RunResult run_on_cpu(const std::string& scenario, const std::string& policy, ParamMap params) {
  RunConfig c;
  c.scenario = scenario;
  c.policy = policy;
  c.backend = Backend::Cpu;
  c.workers = 3;
  c.block_size = 8;
  c.trace = false;
  c.params = std::move(params);
  return run(registry(), c);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

class DynamicScenarios : public ::testing::TestWithParam<std::string> {};

TEST_P(DynamicScenarios, NQueensCountsTheKnownSolutionsWithATaskPerPartialPlacement) {
  const RunResult r = run_on_cpu("nqueens", GetParam(), {{"n", "10"}, {"cutoff", "4"}});
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["solutions"], 724);
  EXPECT_EQ(r.tasks, nqueens::task_count(10, 4));
}

TEST_P(DynamicScenarios, NQueensWithCutoffZeroIsOneSequentialTask) {
  const RunResult r = run_on_cpu("nqueens", GetParam(), {{"n", "8"}, {"cutoff", "0"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.tasks, 1u);
}

TEST_P(DynamicScenarios, Connect4FindsTheSequentialMinimaxMove) {
  const RunResult r = run_on_cpu("connect4", GetParam(), {{"lookahead", "4"}});
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["best_move"], j["reference"]["best_move"]);
  EXPECT_EQ(j["value"], j["reference"]["value"]);
  EXPECT_EQ(r.tasks, j["reference"]["nodes"].get<std::uint64_t>());
  EXPECT_GT(j["peak_task_slots"].get<std::uint64_t>(), 0u);
}

// A position where MIN threatens to win at once: the search must block (value not -infinity).
TEST_P(DynamicScenarios, Connect4BlocksAnImmediateThreat) {
  // Human 0, 0, 0 in column 0 (three stacked); computer 6, 6 elsewhere: the computer must play 0.
  const RunResult r = run_on_cpu("connect4", GetParam(), {{"lookahead", "2"}, {"opening", "06060"}});
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["best_move"], 0);
}

INSTANTIATE_TEST_SUITE_P(CpuPolicies, DynamicScenarios,
                         ::testing::Values("work-stealing", "static-list", "blocking-queue"), test_name);

TEST(Connect4, StaticListNeedsFarMoreTaskSlotsThanWorkStealing) {
  // The paper's Fig. 7 contrast, at a lookahead CI affords.
  const RunResult st = run_on_cpu("connect4", "static-list", {{"lookahead", "5"}});
  const RunResult ws = run_on_cpu("connect4", "work-stealing", {{"lookahead", "5"}});
  ASSERT_TRUE(st.verified && ws.verified);
  const auto slots = [](const RunResult& r) { return nlohmann::json::parse(r.result_json)["peak_task_slots"].get<std::uint64_t>(); };
  EXPECT_GT(slots(st), 10 * slots(ws));
}

TEST(Connect4, OpeningsThatLeaveTheHumanToMoveAreRejected) {
  EXPECT_THROW(run_on_cpu("connect4", "work-stealing", {{"opening", "33"}}), ConfigError);
  EXPECT_THROW(run_on_cpu("connect4", "work-stealing", {{"opening", "3x3"}}), ConfigError);
}

TEST(NQueens, CutoffBeyondTheBoardIsRejected) {
  EXPECT_THROW(run_on_cpu("nqueens", "work-stealing", {{"n", "6"}, {"cutoff", "7"}}), ConfigError);
}


// The rows a block's threads share at the cutoff: enough candidates for 16 a thread, at most 3
// rows, never past the board.
TEST(NQueens, TheCutoffSplitGivesEveryThreadSixteenCandidatesWithinTheBoard) {
  using nqueens::spread_rows;
  EXPECT_EQ(spread_rows(16, 5, 1), 1);    // 16 candidates for one thread
  EXPECT_EQ(spread_rows(16, 5, 32), 3);   // 256 < 512 <= 4096
  EXPECT_EQ(spread_rows(16, 5, 16), 2);   // 256 = 16 x 16
  EXPECT_EQ(spread_rows(16, 14, 32), 2);  // rows 14 and 15 are all that is left
  EXPECT_EQ(spread_rows(8, 7, 128), 1);   // the last row
  EXPECT_EQ(spread_rows(20, 2, 1024), 3); // at most 3 rows
}

}  // namespace
}  // namespace gpulb::scenarios
