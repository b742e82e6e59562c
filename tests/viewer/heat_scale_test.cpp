// The folded rows' heat map: its own colour scale, apart from the task kinds'.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>

#include "heat_scale.hpp"
#include "series.hpp"
#include "shipped_traces.hpp"

#include <cmath>
#include <tuple>

#include <algorithm>
#include <vector>

namespace gpulb::viewer {
namespace {

int lightness(Rgb8 c) { return c.r + c.g + c.b; }
int distance(Rgb8 a, Rgb8 b) {
  return std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b);
}

TEST(HeatScale, BusierIsLighterAndAnyWorkShows) {
  EXPECT_LT(lightness(heat_colour(0, 0)), 3 * 40)
      << "an idle-free, empty column is near the background";
  EXPECT_GE(heat_level(1e-6), 1) << "one task in a column must not read as nothing";
  int last = -1;
  for (int i = 0; i <= 20; ++i) {
    const int l = lightness(heat_colour(i / 20.0, 0));
    EXPECT_GE(l, last) << i;
    last = l;
  }
  EXPECT_GT(lightness(heat_colour(1, 0)), 3 * 220);
}

TEST(HeatScale, IdleTurnsRed) {
  const Rgb8 c = heat_colour(0.2, 0.8);
  EXPECT_GT(c.r, c.g + 100);
  EXPECT_GT(c.r, c.b + 100);
}

TEST(HeatScale, NoLevelReadsAsATaskKind) {
  for (int b = 0; b <= kHeatLevels; ++b) {
    for (std::uint16_t k = 0; k < 4; ++k)
      EXPECT_GT(distance(heat_colour(b / double(kHeatLevels), 0), kind_colour(k)), 90) << b;
  }
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

TEST(HeatScale, StealsAreCountedPerColumn) {
  const std::vector<std::uint64_t> t = {5, 10, 10, 19, 20, 45, 100};
  // Columns [0,10) [10,20) [20,30) [30,40) [40,50).
  EXPECT_EQ(counts_per_column(t, 0, 10, 5), (std::vector<std::uint32_t>{1, 3, 1, 0, 1}));
  EXPECT_EQ(counts_per_column({}, 0, 10, 2), (std::vector<std::uint32_t>{0, 0}));
}

TEST(HeatScale, EachFoldedSmKnowsItsSteals) {
  // uts on an H100: 25,196 steals in all (the summary's count), each under its thief's SM.
  const TraceModel& m = testing::recorded(testing::kUts);
  std::size_t steals = 0;
  for (const DeviceGroup& d : m.devices()) {
    for (const LaneGroup& g : d.groups) {
      EXPECT_TRUE(std::is_sorted(g.steals.begin(), g.steals.end()));
      steals += g.steals.size();
    }
  }
  EXPECT_EQ(steals, m.stats().steals);
  EXPECT_GT(steals, 0u);
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

// The means a heat map row asks for (columns without extremes) go through the series' time
// buckets: they must agree with the sweep that also finds the extremes, at any zoom.
TEST(HeatScale, BucketedColumnMeansAgreeWithTheSweep) {
  std::vector<StepSeries::Point> p;
  std::uint64_t t = 1000;
  for (int i = 0; i < 5000; ++i) {
    t += 1 + static_cast<std::uint64_t>((i * 7919) % 97) * (i % 13 == 0 ? 40 : 1);
    p.push_back({t, (i * 31) % 17 - 3});
  }
  const StepSeries s(p);
  for (const auto& [t0, col, n] :
       {std::tuple{0.0, 500.0, 400}, std::tuple{1500.0, 3.0, 300}, std::tuple{20000.0, 77.7, 100},
        std::tuple{static_cast<double>(t) - 100, 50.0, 10}}) {
    const auto fast = s.columns(t0, col, n, false), full = s.columns(t0, col, n, true);
    for (int c = 0; c < n; ++c) {
      EXPECT_NEAR(fast[static_cast<std::size_t>(c)].mean, full[static_cast<std::size_t>(c)].mean,
                  1e-6 * (1 + std::abs(full[static_cast<std::size_t>(c)].mean)))
          << "column " << c << " of " << col << " ns from " << t0;
    }
  }
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

// The heat rows a frame computes on every core and keeps (HeatRowCache) are what the row drew
// before: heat_level of the coarse means per lane, and the steal counts' steps.
TEST(HeatRow, IsTheLevelsOfTheCoarseMeansAndTheStealSteps) {
  const TraceModel& m = testing::recorded(testing::kUts);
  int rows = 0, lit = 0, marked = 0;
  for (const DeviceGroup& d : m.devices()) {
    for (const LaneGroup& g : d.groups) {
      if (!g.busy || ++rows > 24) continue;
      const double t0 = static_cast<double>(m.begin_ns()),
                   col = static_cast<double>(m.end_ns() - m.begin_ns()) / 400;
      const HeatRow r = heat_row(*g.busy, g.idle.get(), g.steals, g.lanes.size(), t0, col, 400);
      const auto busy = g.busy->coarse_mean_columns(t0, col, 400);
      const auto idle = g.idle->coarse_mean_columns(t0, col, 400);
      const auto steals = counts_per_column(g.steals, t0, col, 400);
      ASSERT_EQ(r.busy.size(), 400u);
      ASSERT_EQ(r.idle.size(), 400u);
      for (std::size_t c = 0; c < 400; ++c) {
        const double n = static_cast<double>(g.lanes.size());
        ASSERT_EQ(r.busy[c], heat_level(busy[c].mean / n)) << c;
        ASSERT_EQ(r.idle[c], heat_level(idle[c].mean / n)) << c;
        ASSERT_EQ(r.steal[c],
                  steals[c] == 0
                      ? 0
                      : 1 + std::min<int>(3, static_cast<int>(4 * steals[c] / g.lanes.size())))
            << c;
        lit += r.busy[c] > 0;
        marked += r.steal[c] > 0;
      }
    }
  }
  EXPECT_GT(lit, 1000) << "busy columns";
  EXPECT_GT(marked, 100) << "columns with steals";
}

// A pan reuses the columns the last frame computed (the same grid) and computes the rest: the row
// is the one computed whole, column for column.
TEST(HeatRow, APanComputesOnlyTheUncoveredColumnsAndMatchesTheWholeRow) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const double origin = static_cast<double>(m.begin_ns());
  const double col = static_cast<double>(m.end_ns() - m.begin_ns()) / 450;
  int rows = 0;
  std::size_t columns = 0, differ = 0;
  for (const DeviceGroup& d : m.devices()) {
    for (const LaneGroup& g : d.groups) {
      if (!g.busy || ++rows > 32) continue;
      const HeatRow before =
          heat_row_on_grid(*g.busy, g.idle.get(), g.steals, g.lanes.size(), origin, col, 0, 400);
      EXPECT_EQ(before.t0_ns, origin);
      for (const std::int64_t shift :
           {std::int64_t{7}, std::int64_t{-5}, std::int64_t{399}, std::int64_t{-1000}}) {
        const HeatRow panned = heat_row_on_grid(*g.busy, g.idle.get(), g.steals, g.lanes.size(),
                                                origin, col, shift, 400, &before);
        const HeatRow whole = heat_row_on_grid(*g.busy, g.idle.get(), g.steals, g.lanes.size(),
                                               origin, col, shift, 400);
        ASSERT_EQ(panned.busy.size(), 400u);
        ASSERT_EQ(panned.idle.size(), 400u);
        ASSERT_EQ(panned.steal.size(), 400u);
        EXPECT_DOUBLE_EQ(panned.t0_ns, origin + static_cast<double>(shift) * col);
        for (std::size_t c = 0; c < 400; ++c) {
          ++columns;
          ASSERT_EQ(panned.steal[c], whole.steal[c]) << "shift " << shift << " column " << c;
          differ += panned.busy[c] != whole.busy[c] || panned.idle[c] != whole.idle[c];
        }
      }
    }
  }
  // Only the rounding of a column edge's time differs: a level changes where a mean sits on its edge.
  EXPECT_LE(differ, columns / 1000) << differ << " of " << columns;
}

// heat_level rounds as std::lround did, without the library call.
TEST(HeatRow, LevelsRoundHalfUpAsLroundDid) {
  for (int i = 0; i <= 100000; ++i) {
    const double f = i / 100000.0;
    const int expected = f <= 0.0 ? 0 : std::max(1, static_cast<int>(std::lround(f * kHeatLevels)));
    ASSERT_EQ(heat_level(f), expected) << f;
  }
}

}  // namespace
}  // namespace gpulb::viewer
