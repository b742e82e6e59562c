// The histograms: per-pixel maxima drawn as the fill, no x labels, and a worker
// count other than the summary's (connect4 static list: 3,168 lanes, 2,401 workers).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "loads.hpp"
#include "run_span.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

ReplayState at_end(const TraceModel& m) { return replay_state_at(m, run_span(m).end_ns); }

TEST(Loads, WorkersAreCountedAsTheSummaryCountsThem) {
  const TraceModel& m = testing::recorded(testing::kConnect4Static);
  const Loads w = worker_loads(m, at_end(m));
  EXPECT_EQ(w.busy.size(), m.stats().workers);
  EXPECT_EQ(w.silent, 767u);  // block tracks of the static list's launches that recorded nothing
  const double mean =
      std::accumulate(w.busy.begin(), w.busy.end(), 0.0) / static_cast<double>(w.busy.size());
  EXPECT_NEAR(mean, m.stats().load.mean_busy_ns, 1e-6 * mean);
  const double tasks = std::accumulate(w.tasks.begin(), w.tasks.end(), 0.0);
  EXPECT_EQ(tasks, static_cast<double>(m.stats().tasks));
  // SMs as the summary lists them: blocks that never ran carry no SM and make no "SM" of their own.
  EXPECT_EQ(group_loads(m, at_end(m), false).busy.size(), m.stats().per_sm.size());
}

TEST(Loads, BucketsOfManyBarsFillToTheirMean) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const Loads w = worker_loads(m, at_end(m));
  const int columns = 600;  // 4,224 workers on a 600 px chart: 7 bars a column
  const std::vector<Bucket> b = bar_buckets(w.busy, columns);
  ASSERT_EQ(b.size(), static_cast<std::size_t>(columns));
  double weighted = 0.0;
  const std::size_t n = w.busy.size();
  for (int c = 0; c < columns; ++c) {
    const std::size_t lo = n * static_cast<std::size_t>(c) / columns,
                      hi = n * static_cast<std::size_t>(c + 1) / columns;
    const auto first = w.busy.begin() + static_cast<std::ptrdiff_t>(lo),
               last = w.busy.begin() + static_cast<std::ptrdiff_t>(hi);
    const double mean = std::accumulate(first, last, 0.0) / static_cast<double>(hi - lo);
    EXPECT_NEAR(b[static_cast<std::size_t>(c)].mean, mean, 1e-9 * std::max(mean, 1.0))
        << "column " << c;
    EXPECT_EQ(b[static_cast<std::size_t>(c)].max, *std::max_element(first, last));
    EXPECT_EQ(b[static_cast<std::size_t>(c)].min, *std::min_element(first, last));
    weighted += mean * static_cast<double>(hi - lo);
  }
  // The drawn fill averages to the mean line, as the bars it stands for do.
  EXPECT_NEAR(weighted / static_cast<double>(n), m.stats().load.mean_busy_ns,
              1e-6 * m.stats().load.mean_busy_ns);
}

TEST(Loads, BarsAreLabelledWithTheirDevices) {
  const TraceModel& m = testing::recorded(testing::kP3Paper2Gpu);
  const ReplayState s = at_end(m);
  const Loads w = worker_loads(m, s);
  // Each device's first bar is labelled with it, where its lanes begin.
  std::vector<std::string> device_ticks;
  for (const Tick& t : w.axis) {
    if (t.label.rfind("GPU ", 0) == 0) device_ticks.push_back(t.label);
  }
  EXPECT_EQ(device_ticks, (std::vector<std::string>{"GPU 0", "GPU 1"}));
  ASSERT_FALSE(w.axis.empty());
  EXPECT_EQ(w.axis.front().at, 0.0);
  for (std::size_t i = 1; i < w.axis.size(); ++i) EXPECT_GT(w.axis[i].at, w.axis[i - 1].at);
  const Tick* gpu1 = nullptr;
  for (const Tick& t : w.axis)
    if (t.label == "GPU 1") gpu1 = &t;
  ASSERT_NE(gpu1, nullptr);
  EXPECT_EQ(gpu1->at, static_cast<double>(m.devices()[0].workers));
  const Loads per_sm = group_loads(m, s, false);
  EXPECT_EQ(per_sm.busy.size(), 264u);
  const auto sm_gpu1 = std::find_if(per_sm.axis.begin(), per_sm.axis.end(),
                                    [](const Tick& t) { return t.label == "GPU 1"; });
  ASSERT_NE(sm_gpu1, per_sm.axis.end());
  EXPECT_EQ(sm_gpu1->at, 132.0);  // GPU 0's 132 SMs come first
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

// Every device named on every chart's axis, no two labels touching: GPU 0's "SM 128" took
// GPU 1's place on the per-worker and per-SM charts of a 4-GPU run.
TEST(Loads, EveryChartAxisNamesEveryDevice) {
  auto width = [](const std::string& s) { return 8.0f * static_cast<float>(s.size()); };
  for (const char* file : {testing::kUts4Gpu, testing::kMd4Gpu, testing::kP3Paper2Gpu}) {
    const TraceModel& m = testing::recorded(file);
    const ReplayState end = at_end(m);
    for (const Loads& l :
         {worker_loads(m, end), group_loads(m, end, false), group_loads(m, end, true)}) {
      for (const float plot_w : {300.0f, 470.0f, 900.0f}) {
        const std::vector<PlacedLabel> placed =
            place_axis_labels(l.axis, l.busy.size(), plot_w, 8.0f, width);
        for (std::size_t d = 0; d < m.devices().size(); ++d) {
          const std::string name = "GPU " + std::to_string(d);
          EXPECT_TRUE(std::any_of(placed.begin(), placed.end(),
                                  [&](const PlacedLabel& p) { return p.text == name; }))
              << name << " unnamed in " << file << " at " << plot_w << " px";
        }
        for (std::size_t i = 1; i < placed.size(); ++i) {
          EXPECT_GE(placed[i].x, placed[i - 1].x + width(placed[i - 1].text))
              << placed[i].text << " touches " << placed[i - 1].text;
        }
        if (!placed.empty()) {
          EXPECT_LE(placed.back().x + width(placed.back().text), plot_w + 8.0f);
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpulb::viewer
