// The summary's rows on the shipped GPU traces: every figure it states is one a reader can trust.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shipped_traces.hpp"
#include "summary_rows.hpp"

namespace gpulb::viewer {
namespace {

// The value of the row named `name` and its continuation lines, joined by " | ".
std::string row_text(const std::vector<SummaryRow>& rows, const std::string& name) {
  std::string out;
  bool in = false;
  for (const SummaryRow& r : rows) {
    if (!r.name.empty()) in = r.name == name;
    if (in) out += (out.empty() ? "" : " | ") + r.value;
  }
  return out;
}

// uts on 2 H200s with remote=steal: 8,636 of the 22,699 Steal events took from the other GPU's
// deques (aux = 1 + the victim's GPU).
TEST(SummaryRows, StealsAcrossGpusAreCounted) {
  const auto rows =
      summary_rows(testing::recorded("uts-geometric-d7-work-stealing-2xh200.gpulb"), true);
  const std::string steals = row_text(rows, "steals");
  EXPECT_NE(steals.find("22699"), std::string::npos) << steals;
  EXPECT_NE(steals.find("8636 across GPUs"), std::string::npos) << steals;
  // One GPU: no steal can cross, and the row does not claim any.
  const std::string one = row_text(summary_rows(testing::recorded(testing::kUts), true), "steals");
  EXPECT_EQ(one.find("across"), std::string::npos) << one;
}

// uts's tree is 7 levels below its root: a chain of 8 tasks, each starting after its parent ended.
// On 4 H200s that chain is longer than the busy time spread over 16,896 workers (10.7 us), and the
// summary bounds the run by it, naming it.
TEST(SummaryRows, TheLowerBoundOfATreeIsItsCriticalPathWhereThatIsLonger) {
  const TraceModel& m = testing::recorded("uts-geometric-d7-work-stealing-4xh200.gpulb");
  const std::string bound = row_text(summary_rows(m, true), "makespan");
  EXPECT_EQ(bound.find("lower bound 10.7 us"), std::string::npos) << bound;
  EXPECT_NE(bound.find("critical path"), std::string::npos) << bound;
  EXPECT_NE(bound.find("8 tasks"), std::string::npos) << bound;
  // A run of independent tasks has no chain: its bound is the perfect balance, and says so.
  const std::string flat =
      row_text(summary_rows(testing::recorded(testing::kP4Queue), true), "makespan");
  EXPECT_NE(flat.find("total busy / workers"), std::string::npos) << flat;
  EXPECT_EQ(flat.find("critical path"), std::string::npos) << flat;
}

}  // namespace
}  // namespace gpulb::viewer
