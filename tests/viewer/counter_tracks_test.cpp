// Counter tracks under the timeline (issue 13, item 3): how many fit and how tall, and what a
// real multi-GPU trace gets.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "counter_tracks.hpp"
#include "occupancy.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

TEST(CounterTracks, TheStripKeepsToItsShareOfTheTimeline) {
  for (const float view_h : {300.0f, 600.0f, 900.0f, 2000.0f}) {
    for (const std::size_t n : {1u, 3u, 7u, 40u}) {
      const CounterLayout l = counter_layout(n, view_h);
      EXPECT_LE(l.height, view_h * kCounterShare + 0.01f) << n << " tracks in " << view_h;
      EXPECT_EQ(l.shown + l.hidden, n);
      if (l.shown > 0) {
        EXPECT_GE(l.track_h, kMinCounterTrackPx);
        EXPECT_LE(l.track_h, kCounterTrackPx);
      }
    }
  }
  EXPECT_EQ(counter_layout(3, 900).shown, 3u) << "a few tracks all show";
  EXPECT_EQ(counter_layout(3, 900).track_h, kCounterTrackPx);
  EXPECT_GT(counter_layout(40, 900).hidden, 0u) << "too many: the rest are in the Occupancy tab";
  EXPECT_EQ(counter_layout(0, 900).height, 0.0f);
}

bool has(const OccupancyPlots& p, const std::string& title) {
  return std::any_of(p.plots.begin(), p.plots.end(), [&](const OccupancyPlot& q) { return q.title == title; });
}

TEST(CounterTracks, A2GpuTaskQueueRunShowsItsQueuesPoolsAndBusyWorkers) {
  const OccupancyPlots p = occupancy_plots(testing::shipped(testing::kP3Paper2Gpu));
  for (const char* t : {"GPU 0 queue 0", "GPU 0 host pool", "GPU 1 queue 1", "GPU 1 host pool", "GPU 0 busy workers", "GPU 1 busy workers"}) {
    EXPECT_TRUE(has(p, t)) << t;
  }
  const OccupancyPlots uts = occupancy_plots(testing::shipped(testing::kUts));
  EXPECT_TRUE(has(uts, "GPU 0 deques (sum)"));
  // At 900 px the first 7 of them get a track.
  EXPECT_GE(counter_layout(p.plots.size(), 900).shown, 7u);
}

}  // namespace
}  // namespace gpulb::viewer
