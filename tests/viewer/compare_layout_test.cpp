// Compare's layout: the replay bar was pushed off the bottom and the
// summary boxes clipped the "verified" line.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fixed_width_text.hpp"
#include "compare_layout.hpp"
#include "shipped_traces.hpp"
#include "summary_rows.hpp"

namespace gpulb::viewer {
namespace {

// What compare_view.cpp measures: a caption line, the rows at a value column of the box less the
// name column and padding, 13 px a line and 4 px of cell padding a row, 16 px of window padding.
float need(const TraceModel& m, float box_w) {
  return 17.0f + 16.0f +
         summary_height(summary_rows(m, true), box_w - 86.0f - 46.0f, 13.0f, 4.0f, width7);
}

TEST(CompareLayout, SummariesKeepTheVerifiedLineAndNothingPassesTheBottom) {
  const TraceModel& a = testing::recorded(testing::kP3Paper2Gpu);
  const TraceModel& b = testing::recorded(testing::kP3Modern2Gpu);
  // The view's area in a 1280x760 and a 1600x1000 window (side panel, tabs and replay bar off).
  for (const auto& [w, h] : {std::pair{950.0f, 640.0f}, std::pair{1250.0f, 880.0f}}) {
    const float box_w = w * 0.5f, between = 17.0f + 12.0f;
    const float needed = std::max(need(a, box_w), need(b, box_w));
    const CompareLayout l = compare_layout(h, between, needed);
    EXPECT_GE(l.summary_h, needed)
        << w << "x" << h << ": the summary box clips its last rows (verified)";
    EXPECT_LE(l.summary_h + between + 2 * l.timeline_h, h + 0.01f)
        << "past the bottom: over the replay bar";
    EXPECT_GE(l.timeline_h, kMinCompareTimelinePx);
  }
}

TEST(CompareLayout, ATinyViewKeepsItsTimelinesAndTheSummariesScroll) {
  const CompareLayout l = compare_layout(400.0f, 30.0f, 600.0f);
  EXPECT_GE(l.timeline_h, kMinCompareTimelinePx);
  EXPECT_LE(l.summary_h + 30.0f + 2 * l.timeline_h, 400.01f);
  EXPECT_GT(l.summary_h, 0.0f);
}

TEST(SummaryRows, TheVerificationIsTheLastCompactRow) {
  const std::vector<SummaryRow> rows = summary_rows(testing::recorded(testing::kP3Paper2Gpu), true);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.back().name, "verified");
  EXPECT_EQ(rows.back().tone, SummaryRow::Tone::Good);
  EXPECT_EQ(rows.back().value.rfind("yes: ", 0), 0u);
}

// The 4-rank trace's summary said "steals 0" while chunks of tasks moved between its ranks: it
// counts them, in both the side panel's and the Summary tab's rows.
TEST(SummaryRows, ADistributedRunCountsTheChunksMovedBetweenRanks) {
  const TraceModel& m = testing::recorded(testing::kUts4Ranks);
  ASSERT_GT(m.stats().rank_steals, 0u);
  for (bool compact : {true, false}) {
    const std::vector<SummaryRow> rows = summary_rows(m, compact);
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [](const SummaryRow& r) { return r.name == "between ranks"; });
    ASSERT_NE(it, rows.end()) << (compact ? "compact" : "full");
    EXPECT_EQ(it->value.rfind(std::to_string(m.stats().rank_steals) + " chunks moved (", 0), 0u)
        << it->value;
  }
  const std::vector<SummaryRow> one = summary_rows(testing::recorded(testing::kP3Paper2Gpu), true);
  EXPECT_TRUE(std::none_of(one.begin(), one.end(),
                           [](const SummaryRow& r) { return r.name == "between ranks"; }));
}

TEST(SummaryRows, WrappingBreaksAtSpacesAndNeverInsideAWord) {
  EXPECT_EQ(wrapped_lines("aaa bbb ccc", 7.0f * 7, width7), 2);     // "aaa bbb" | "ccc"
  EXPECT_EQ(wrapped_lines("aaaaaaaaaa", 7.0f * 4, width7), 1);      // a word is never split
  EXPECT_EQ(wrapped_lines("1.5 ms 800,000", 7.0f * 7, width7), 2);  // "1.5 ms" | "800,000"
  EXPECT_EQ(wrapped_lines("one\ntwo", 1000.0f, width7), 2);
  EXPECT_EQ(wrapped_lines("", 100.0f, width7), 1);
}

}  // namespace
}  // namespace gpulb::viewer
