// Counter tracks under the timeline: how many fit and how tall, and what a
// real multi-GPU trace gets.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "counter_tracks.hpp"
#include "timeline_layout.hpp"
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
  return std::any_of(p.plots.begin(), p.plots.end(),
                     [&](const OccupancyPlot& q) { return q.title == title; });
}

TEST(CounterTracks, A2GpuTaskQueueRunShowsItsQueuesPoolsAndBusyWorkers) {
  const OccupancyPlots p = occupancy_plots(testing::recorded(testing::kP3Paper2Gpu));
  for (const char* t : {"GPU 0 queue 0", "GPU 0 host pool", "GPU 1 queue 1", "GPU 1 host pool",
                        "GPU 0 busy workers", "GPU 1 busy workers"}) {
    EXPECT_TRUE(has(p, t)) << t;
  }
  const OccupancyPlots uts = occupancy_plots(testing::recorded(testing::kUts));
  EXPECT_TRUE(has(uts, "GPU 0 deques (sum)"));
  // At 900 px the first 7 of them get a track.
  EXPECT_GE(counter_layout(p.plots.size(), 900).shown, 7u);
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

double top_of(const OccupancyPlots& p, const std::string& title) {
  for (const OccupancyPlot& q : p.plots) {
    if (q.title == title) return q.top;
  }
  ADD_FAILURE() << "no plot " << title;
  return 0.0;
}

// GPU 0 peaks at 302 busy workers, GPU 1 at 59: on one scale by default, so they do not look
// equally tall; each on its own on request.
TEST(CounterTracks, DevicesShareAScaleUnlessAskedOtherwise) {
  const TraceModel& m = testing::recorded(testing::kUts4Gpu);
  const OccupancyPlots shared = occupancy_plots(m);
  const double top = top_of(shared, "GPU 0 busy workers");
  for (const char* gpu : {"GPU 1 busy workers", "GPU 2 busy workers", "GPU 3 busy workers"})
    EXPECT_EQ(top_of(shared, gpu), top) << gpu;
  for (const char* gpu : {"GPU 1 deques (sum)", "GPU 2 deques (sum)", "GPU 3 deques (sum)"}) {
    EXPECT_EQ(top_of(shared, gpu), top_of(shared, "GPU 0 deques (sum)")) << gpu;
  }
  const OccupancyPlots own = occupancy_plots(m, CounterScale::Own);
  EXPECT_LT(top_of(own, "GPU 1 busy workers"), top_of(own, "GPU 0 busy workers") / 2)
      << "59 against 302";
  EXPECT_EQ(top_of(own, "GPU 0 busy workers"), top);
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

// The timeline's lanes and counter strip at 1600x900 share 728 px (the window less its menu,
// tabs, toolbar, legend, ruler and replay bar; 828 at 1600x1000). A 4-GPU trace's 528 SM rows
// need about 680 of them: the strip gives way, so that every GPU's rows are on screen.
TEST(CounterTracks, EveryGpuOfA4GpuRunFitsBesideTheStrip) {
  constexpr float kTextH = 18.0f;
  for (const char* file : {testing::kMd4Gpu, testing::kUts4Gpu}) {
    const TraceModel& m = testing::recorded(file);
    const Folds folds = default_folds(m);
    const std::size_t tracks = occupancy_plots(m).plots.size();
    const float lanes_min_h = layout_timeline(m, folds, 0.0f, kTextH).height;
    for (const float view_h : {728.0f, 828.0f}) {
      const CounterLayout strip = counter_layout(tracks, view_h, lanes_min_h);
      const float lanes_h = view_h - strip.height;
      const TimelineLayout layout = layout_timeline(m, folds, lanes_h, kTextH);
      EXPECT_LE(layout.height, lanes_h) << file << " at " << view_h;
      EXPECT_GT(strip.shown, 0u) << "some counters still show: " << file << " at " << view_h;
    }
  }
  // Where the lanes cannot fit anyway (every group open), the strip keeps its share.
  const TraceModel& m = testing::recorded(testing::kUts4Gpu);
  const float open_h = layout_timeline(m, Folds{}, 0.0f, kTextH).height;
  EXPECT_GT(open_h, 728.0f);
  EXPECT_EQ(counter_layout(8, 728.0f, open_h).height, counter_layout(8, 728.0f).height);
}

}  // namespace
}  // namespace gpulb::viewer
