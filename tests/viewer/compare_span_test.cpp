// Compare (issue 13, item 1): runs aligned at their first event (a host enqueue) put all of
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
  for (const auto& [m, origin, name] : {std::tuple{&a, c.origin_a, "A"}, std::tuple{&b, c.origin_b, "B"}}) {
    const TimeAxis axis = panel_axis(shared, origin);
    const Extent e = task_extent(*m);
    EXPECT_GE(axis.x(e.first), left) << name << "'s first task is left of its plot";
    EXPECT_LE(axis.x(e.last), right) << name << "'s last task is right of its plot (at x " << axis.x(e.last) << ")";
  }
}

TEST(CompareSpan, BothRunsTasksLieInsideTheirPlots) {
  expect_tasks_inside(testing::shipped(testing::kConnect4Static), testing::shipped(testing::kConnect4Stealing));
  expect_tasks_inside(testing::shipped(testing::kConnect4Stealing), testing::shipped(testing::kConnect4Static));
  expect_tasks_inside(testing::shipped(testing::kP3Paper2Gpu), testing::shipped(testing::kP3Modern2Gpu));
}

TEST(CompareSpan, RunsAreAlignedAtTheirFirstKernelLaunch) {
  const TraceModel& a = testing::shipped(testing::kConnect4Static);
  const TraceModel& b = testing::shipped(testing::kConnect4Stealing);
  const CompareSpan c = compare_span(a, b);
  EXPECT_EQ(c.origin_a, launch_ns(a));
  EXPECT_EQ(c.origin_b, launch_ns(b));
}

TEST(CompareSpan, HonoursTheRange) {
  const TraceModel& a = testing::shipped(testing::kConnect4Static);
  const TraceModel& b = testing::shipped(testing::kConnect4Stealing);
  const CompareSpan c = compare_span(a, b, TimeSpan{50e3, 120e3});
  EXPECT_EQ(c.shown.begin_ns, 50e3);
  EXPECT_EQ(c.shown.end_ns, 120e3);
}

}  // namespace
}  // namespace gpulb::viewer
