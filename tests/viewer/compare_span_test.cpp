// Compare: runs aligned at their first event (a host enqueue) put all of
// connect4 work-stealing's tasks past the right edge, and --range was ignored.
#include <gtest/gtest.h>

#include <limits>

#include "compare_span.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

struct Extent {
  double first = std::numeric_limits<double>::max(), last = 0.0;
};

Extent task_extent(const TraceModel& m) {
  Extent e;
  for (const Lane& lane : m.lanes()) {
    if (lane.zones.empty()) continue;
    e.first = std::min(e.first, static_cast<double>(lane.zones.front().begin_ns));
    e.last = std::max(e.last, static_cast<double>(lane.zones.back().end_ns));
  }
  return e;
}

// Both panels' tasks, drawn on a plot area [left, right], lie inside it.
void expect_tasks_inside(const TraceModel& a, const TraceModel& b) {
  const double left = 150.0, right = 1700.0;
  const CompareSpan c = compare_span(a, b);
  const TimeAxis shared = TimeAxis::fit(c.shown.begin_ns, c.shown.end_ns, left, right - left);
  for (const auto& [m, origin, name] :
       {std::tuple{&a, c.origin_a, "A"}, std::tuple{&b, c.origin_b, "B"}}) {
    const TimeAxis axis = panel_axis(shared, origin);
    const Extent e = task_extent(*m);
    EXPECT_GE(axis.x(e.first), left) << name << "'s first task is left of its plot";
    EXPECT_LE(axis.x(e.last), right)
        << name << "'s last task is right of its plot (at x " << axis.x(e.last) << ")";
  }
}

TEST(CompareSpan, BothRunsTasksLieInsideTheirPlots) {
  expect_tasks_inside(testing::recorded(testing::kConnect4Static),
                      testing::recorded(testing::kConnect4Stealing));
  expect_tasks_inside(testing::recorded(testing::kConnect4Stealing),
                      testing::recorded(testing::kConnect4Static));
  expect_tasks_inside(testing::recorded(testing::kP3Paper2Gpu),
                      testing::recorded(testing::kP3Modern2Gpu));
}

TEST(CompareSpan, RunsAreAlignedAtTheirFirstKernelLaunch) {
  const TraceModel& a = testing::recorded(testing::kConnect4Static);
  const TraceModel& b = testing::recorded(testing::kConnect4Stealing);
  const CompareSpan c = compare_span(a, b);
  EXPECT_EQ(c.origin_a, launch_ns(a));
  EXPECT_EQ(c.origin_b, launch_ns(b));
}

TEST(CompareSpan, HonoursTheRange) {
  const TraceModel& a = testing::recorded(testing::kConnect4Static);
  const TraceModel& b = testing::recorded(testing::kConnect4Stealing);
  const CompareSpan c = compare_span(a, b, TimeSpan{50e3, 120e3});
  EXPECT_EQ(c.shown.begin_ns, 50e3);
  EXPECT_EQ(c.shown.end_ns, 120e3);
}

// In Compare the rulers count from each run's launch over the longer run: the replay bar scrubs
// that span, not A's run alone (a playhead at "100 us" sat at 110 us on the rulers, and B's panel
// drew A's clock time on its own).
TEST(CompareSpan, TheReplayBarScrubsTheSpanTheRulersShow) {
  const TraceModel& a = testing::recorded(testing::kConnect4Static);
  const TraceModel& b = testing::recorded(testing::kConnect4Stealing);
  const TimeSpan replay = compare_replay_span(a, b);
  const CompareSpan c = compare_span(a, b);
  EXPECT_DOUBLE_EQ(replay.begin_ns, c.origin_a) << "0 on the bar is 0 on the rulers";
  EXPECT_LT(replay.begin_ns, run_span(a).begin_ns) << "the launch comes before the first block";
  // The rulers show the span with a 1% margin a side.
  EXPECT_NEAR(c.shown.end_ns - c.shown.begin_ns, 1.02 * (replay.end_ns - replay.begin_ns), 1e-6);
  EXPECT_GE(replay.end_ns - replay.begin_ns, run_span(a).end_ns - c.origin_a);
  EXPECT_GE(replay.end_ns - replay.begin_ns, run_span(b).end_ns - c.origin_b);
}

}  // namespace
}  // namespace gpulb::viewer
