// nqueens and connect4 on every policy of the CPU backend that runs spawned tasks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "connect4/connect4.hpp"
#include "nqueens/nqueens.hpp"

namespace gpulb::scenarios {
namespace {

const Registry& registry() { return builtin::registry(); }

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
  EXPECT_EQ(r.tasks, nqueens::task_count(10, 4, /*mirror=*/true));
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
  const RunResult r =
      run_on_cpu("connect4", GetParam(), {{"lookahead", "2"}, {"opening", "06060"}});
  EXPECT_TRUE(r.verified) << r.verification;
  const auto j = nlohmann::json::parse(r.result_json);
  EXPECT_EQ(j["best_move"], 0);
}

INSTANTIATE_TEST_SUITE_P(CpuPolicies, DynamicScenarios,
                         ::testing::Values("work-stealing", "static-list", "blocking-queue",
                                           "task-queue"),
                         test_name);

TEST(Connect4, StaticListNeedsFarMoreTaskSlotsThanWorkStealing) {
  // The paper's Fig. 7 contrast, at a lookahead CI affords.
  const RunResult st = run_on_cpu("connect4", "static-list", {{"lookahead", "5"}});
  const RunResult ws = run_on_cpu("connect4", "work-stealing", {{"lookahead", "5"}});
  ASSERT_TRUE(st.verified && ws.verified);
  const auto slots = [](const RunResult& r) {
    return nlohmann::json::parse(r.result_json)["peak_task_slots"].get<std::uint64_t>();
  };
  EXPECT_GT(slots(st), 10 * slots(ws));
}

TEST(Connect4, OpeningsThatLeaveTheHumanToMoveAreRejected) {
  EXPECT_THROW(run_on_cpu("connect4", "work-stealing", {{"opening", "33"}}), ConfigError);
  EXPECT_THROW(run_on_cpu("connect4", "work-stealing", {{"opening", "3x3"}}), ConfigError);
}

// A context that runs a block's threads as a loop, like the CPU's, but says they run together,
// like the GPU's: the body takes its GPU path (dealing at the cutoff) on the host. Spawned children
// are kept for the driver below, with their depth one more than their parent's (as the runtime).
struct LockstepHostContext {
  static constexpr bool kThreadsRunTogether = true;
  std::uint32_t threads;
  std::vector<Task>* spawned;
  std::uint32_t depth;

  std::uint32_t rank() const { return 0; }
  std::uint32_t block_size() const { return threads; }
  template <class F>
  void for_each_thread(F&& fn) const {
    for (std::uint32_t t = 0; t < threads; ++t) fn(t);
  }
  template <class F>
  std::uint64_t sum_over_threads(F&& fn) const {
    std::uint64_t sum = 0;
    for (std::uint32_t t = 0; t < threads; ++t) sum += fn(t);
    return sum;
  }
  template <class F>
  void once(F&& fn) const {
    fn();
  }
  void spawn(Task child) const {
    child.depth = depth + 1;
    spawned->push_back(child);
  }
};

// Runs every task of an nqueens run depth first through `body` on a lockstep context.
nqueens::NQueensCounts run_body(const nqueens::NQueensBody& shape, std::uint32_t threads) {
  nqueens::NQueensCounts counts;
  nqueens::NQueensBody body = shape;
  body.counts = &counts;
  std::vector<Task> pending = {Task{}};
  while (!pending.empty()) {
    const Task task = pending.back();
    pending.pop_back();
    const LockstepHostContext ctx{threads, &pending, task.depth};
    body(ctx, task);
  }
  return counts;
}

// A task at the cutoff shares its sequential rest among its block's threads by dealing out the
// placements some rows down (the GPU's path) or by the next row's columns; the root may place its
// queen in the left half only (the mirror symmetry). Every board, cutoff, deal depth (none, within
// the board, past its last row) and block size counts the known solutions, a task per partial
// placement: the last rows included (one row left, none left), and block sizes that n divides and
// ones it does not.
TEST(NQueens, EveryLeafSplitAndSymmetryCountsTheKnownSolutionsAtEveryCutoffAndBlockSize) {
  struct Shape {
    nqueens::LeafSplit split;
    int deal_depth;
  };
  const Shape shapes[] = {{nqueens::LeafSplit::Row, 0},  {nqueens::LeafSplit::Deal, 0},
                          {nqueens::LeafSplit::Deal, 1}, {nqueens::LeafSplit::Deal, 2},
                          {nqueens::LeafSplit::Deal, 3}, {nqueens::LeafSplit::Deal, 12}};
  for (const Shape& shape : shapes) {
    for (const bool mirror : {false, true}) {
      for (int n = 1; n <= 10; ++n) {
        for (int cutoff = 0; cutoff <= n; ++cutoff) {
          for (std::uint32_t threads : {1u, 5u, 8u, 32u}) {
            const nqueens::NQueensCounts c =
                run_body({n, cutoff, shape.split, shape.deal_depth, mirror, nullptr}, threads);
            const std::string name =
                std::string(shape.split == nqueens::LeafSplit::Deal ? "deal" : "row") +
                " deal_depth=" + std::to_string(shape.deal_depth) + (mirror ? " mirror" : "") +
                " n=" + std::to_string(n) + " cutoff=" + std::to_string(cutoff) +
                " threads=" + std::to_string(threads);
            EXPECT_EQ(c.solutions, nqueens::known_solutions(n)) << name;
            EXPECT_EQ(c.tasks, nqueens::task_count(n, cutoff, mirror)) << name;
          }
        }
      }
    }
  }
}

// The mirror symmetry halves the root's children: 4 queens, a task per row-0 queen: 4 without
// it, 2 with it (columns 0 and 1); 5 queens: 5 and 3 (the middle column is its own mirror).
TEST(NQueens, TheMirrorSymmetryKeepsTheRootsLeftHalfAndMiddle) {
  EXPECT_EQ(nqueens::task_count(4, 1, false), 1u + 4u);
  EXPECT_EQ(nqueens::task_count(4, 1, true), 1u + 2u);
  EXPECT_EQ(nqueens::task_count(5, 1, false), 1u + 5u);
  EXPECT_EQ(nqueens::task_count(5, 1, true), 1u + 3u);
}

// A row's tasks are a static-list generation: the widest row sizes the arrays, so the run needs
// exactly that many slots and no launch stops on a full array.
TEST(NQueens, TheWidestRowSizesTheStaticListExactly) {
  EXPECT_EQ(nqueens::widest_row(4, 1, false), 4u);
  EXPECT_EQ(nqueens::widest_row(4, 1, true), 2u);
  const RunResult r = run_on_cpu("nqueens", "static-list", {{"n", "10"}, {"cutoff", "5"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(r.metrics.at("peak_task_slots"), nqueens::widest_row(10, 5, true));
  EXPECT_EQ(r.metrics.at("list_slots"), nqueens::widest_row(10, 5, true));
  EXPECT_EQ(r.metrics.at("list_resumes"), 0u);
}

// The split, deal depth and symmetry are parameters of the run: refused when unknown, reported in
// the result, and the CPU backend verifies under each.
TEST(NQueens, TheSplitAndSymmetryParametersReachTheRun) {
  for (const char* split : {"deal", "row"}) {
    for (const char* symmetry : {"mirror", "none"}) {
      const RunResult r = run_on_cpu("nqueens", "work-stealing",
                                     {{"n", "9"},
                                      {"cutoff", "3"},
                                      {"split", split},
                                      {"deal_depth", "2"},
                                      {"symmetry", symmetry}});
      EXPECT_TRUE(r.verified) << split << " " << symmetry << ": " << r.verification;
      const auto j = nlohmann::json::parse(r.result_json);
      EXPECT_EQ(j["split"], split);
      EXPECT_EQ(j["symmetry"], symmetry);
      if (std::string(split) == "deal") {
        EXPECT_EQ(j["deal_depth"], 2);
      } else {
        EXPECT_FALSE(j.contains("deal_depth"));  // split=row ignores it
      }
      EXPECT_EQ(r.tasks, nqueens::task_count(9, 3, std::string(symmetry) == "mirror"));
    }
  }
  EXPECT_THROW(run_on_cpu("nqueens", "work-stealing", {{"split", "diagonal"}}), ConfigError);
  EXPECT_THROW(run_on_cpu("nqueens", "work-stealing", {{"symmetry", "rotate"}}), ConfigError);
  EXPECT_THROW(run_on_cpu("nqueens", "work-stealing", {{"deal_depth", "21"}}), ConfigError);
}

// At cutoff 0 the root is the one task and walks the whole board: the mirror cannot apply, and
// the result says so.
TEST(NQueens, AtCutoffZeroTheSymmetryIsNone) {
  const RunResult r =
      run_on_cpu("nqueens", "work-stealing", {{"n", "8"}, {"cutoff", "0"}, {"symmetry", "mirror"}});
  EXPECT_TRUE(r.verified) << r.verification;
  EXPECT_EQ(nlohmann::json::parse(r.result_json)["symmetry"], "none");
  EXPECT_EQ(r.tasks, 1u);
}

// The dealt walk undoes each row exactly on the largest boards (n = 17..20), at every deal depth
// (past the last row: clamped), its 32 lanes together counting what the stack walk counts. The
// placement is the first rows of the board's first solution (so it has completions), with 14 rows
// left: within them the right diagonal's bits fall below bit 32 of its word (a 32-bit word would
// drop them and miscount; checked by masking them off), and the walk is still short enough to run
// 32 times over (0.8 s on the 2-core VM).
std::vector<std::uint32_t> first_solution(int n) {
  const std::uint32_t full = (1u << n) - 1;
  std::vector<std::uint32_t> columns;
  std::vector<nqueens::Placement> at = {nqueens::Placement{}};
  std::vector<std::uint32_t> next = {0};
  while (static_cast<int>(columns.size()) < n) {
    const std::size_t r = columns.size();
    std::uint32_t c = next[r];
    while (c < static_cast<std::uint32_t>(n) && !at[r].free(c)) ++c;
    if (c == static_cast<std::uint32_t>(n)) {  // no column left in this row: back up one row
      columns.pop_back();
      at.pop_back();
      next.pop_back();
      continue;
    }
    next[r] = c + 1;
    columns.push_back(c);
    at.push_back(at[r].place(c, full));
    next.push_back(0);
  }
  return columns;
}

TEST(NQueens, TheDealtWalkMatchesTheStackWalkOnTheLargestBoards) {
  for (const int n : {17, 18, 20}) {
    const std::uint32_t full = (1u << n) - 1;
    const int row = n - 14;
    const std::vector<std::uint32_t> solution = first_solution(n);
    nqueens::Placement p;
    for (int r = 0; r < row; ++r) p = p.place(solution[static_cast<std::size_t>(r)], full);
    const std::uint64_t expected = nqueens::count_completions(p, row, n);
    ASSERT_GT(expected, 0u) << "n=" << n;
    for (const int deal_depth : {1, 3, 20}) {
      std::uint64_t dealt = 0;
      for (std::uint32_t lane = 0; lane < 32; ++lane)
        dealt += nqueens::count_completions_dealt(p, row, n, deal_depth, lane, 32);
      EXPECT_EQ(dealt, expected) << "n=" << n << " deal_depth=" << deal_depth;
    }
  }
}

TEST(NQueens, CutoffBeyondTheBoardIsRejected) {
  EXPECT_THROW(run_on_cpu("nqueens", "work-stealing", {{"n", "6"}, {"cutoff", "7"}}), ConfigError);
}

}  // namespace
}  // namespace gpulb::scenarios
