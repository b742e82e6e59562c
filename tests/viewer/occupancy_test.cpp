// The occupancy plots: uts showed an empty "queue 0 max 0" panel and scaled
// its busy workers to 4,224 when the peak was 728.
#include <gtest/gtest.h>

#include "occupancy.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

TEST(Occupancy, AQueueThatNeverHeldATaskGetsNoPanelButANote) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const OccupancyPlots o = occupancy_plots(m);
  for (const OccupancyPlot& p : o.plots)
    EXPECT_GT(p.series->max_value(), 0) << p.title << " is an empty panel";
  EXPECT_NE(o.note.find("GPU 0 queue 0"), std::string::npos) << o.note;
  bool deques = false;
  for (const OccupancyPlot& p : o.plots) deques = deques || p.kind == OccupancyPlot::Kind::Deques;
  EXPECT_TRUE(deques) << "the deque sum is still plotted";
}

TEST(Occupancy, BusyWorkersScaleToTheirPeak) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const DeviceGroup& dev = m.devices()[0];
  ASSERT_TRUE(dev.busy);
  const double peak = static_cast<double>(dev.busy->max_value());
  ASSERT_LT(peak, dev.workers / 2.0);  // the trace's point: most of 4,224 blocks wait
  for (const OccupancyPlot& p : occupancy_plots(m).plots) {
    if (p.kind != OccupancyPlot::Kind::Busy) continue;
    EXPECT_GE(p.top, peak);
    EXPECT_LE(p.top, peak * 1.1) << "topped at " << p.top << " for a peak of " << peak;
    EXPECT_NE(p.caption.find(std::to_string(dev.workers)), std::string::npos)
        << "the caption still names the workers";
    ASSERT_GE(p.ticks.size(), 3u);
    EXPECT_LE(p.ticks.back().at, p.top);
  }
}

TEST(Occupancy, EveryPlotHasValueTicksUpToItsTop) {
  const TraceModel& m = testing::recorded(testing::kP3Paper2Gpu);
  const OccupancyPlots o = occupancy_plots(m);
  EXPECT_EQ(o.plots.size(), m.queues().size() + m.devices().size());  // every queue held tasks here
  for (const OccupancyPlot& p : o.plots) {
    ASSERT_GE(p.ticks.size(), 2u) << p.title;
    EXPECT_EQ(p.ticks.front().at, 0.0);
    EXPECT_LE(p.ticks.back().at, p.top) << p.title;
    EXPECT_GE(p.ticks.back().at, p.top / 5) << p.title;
  }
}

}  // namespace
}  // namespace gpulb::viewer
