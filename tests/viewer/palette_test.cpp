// One colour per meaning (viewer/model/palette.hpp): no task kind looks like an event, every
// legend swatch says what it means, and the folded SM rows mark steals and idle in the colours the
// lanes use for them.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "heat_scale.hpp"
#include "palette.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

TEST(Palette, NoTaskKindLooksLikeAnEvent) {
  for (int kind = 0; kind < 64; ++kind) {
    for (const NamedColour& e : event_colours()) {
      EXPECT_GE(colour_distance(kind_colour(static_cast<std::uint16_t>(kind)), e.colour),
                kMinMeaningDistance)
          << "kind " << kind << " against " << e.meaning;
    }
  }
}

TEST(Palette, NoTaskDurationLooksLikeAnEvent) {
  for (int i = 0; i <= 100; ++i) {
    const Rgb8 c = duration_colour(std::pow(10.0, 2.0 + 5.0 * i / 100.0), 100.0, 1e7);
    for (const NamedColour& e : event_colours())
      EXPECT_GE(colour_distance(c, e.colour), kMinMeaningDistance) << i << " " << e.meaning;
  }
  EXPECT_NE(duration_colour(100, 100, 1e7), duration_colour(1e7, 100, 1e7))
      << "short and long differ";
}

TEST(Palette, EventsDifferFromEachOther) {
  const auto events = event_colours();
  for (std::size_t i = 0; i < events.size(); ++i) {
    for (std::size_t j = i + 1; j < events.size(); ++j) {
      EXPECT_GE(colour_distance(events[i].colour, events[j].colour), kMinMeaningDistance)
          << events[i].meaning << " against " << events[j].meaning;
    }
  }
}

TEST(Palette, TheFirstKindsDifferFromEachOtherAndFromTheSmRows) {
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) {
      EXPECT_GE(colour_distance(kind_colour(static_cast<std::uint16_t>(a)),
                                kind_colour(static_cast<std::uint16_t>(b))),
                20.0)
          << a << " " << b;
    }
    for (int level = 0; level <= kHeatLevels; ++level) {
      EXPECT_GE(colour_distance(kind_colour(static_cast<std::uint16_t>(a)),
                                heat_colour(level / double(kHeatLevels), 0)),
                kMinMeaningDistance)
          << "kind " << a << " against a folded row " << level << "/" << kHeatLevels << " busy";
    }
  }
}

TEST(Palette, ASmRowMarksStealsInTheStealColour) {
  for (int step = 1; step <= 4; ++step) {
    for (const float h : {1.0f, 4.0f, 18.0f}) {
      const StealMark m = steal_mark(step, h);
      EXPECT_EQ(m.colour, palette::kSteal) << "step " << step;
      EXPECT_GE(m.height, 1.0f);
      EXPECT_LE(m.height, h);
    }
  }
  EXPECT_LT(steal_mark(1, 18).height, steal_mark(4, 18).height)
      << "more steals a worker, a taller mark";
}

TEST(Palette, AnAllIdleSmRowIsTheIdleColour) {
  EXPECT_EQ(heat_colour(0, 1), palette::kIdle);
  EXPECT_EQ(heat_colour(0.5, 1), palette::kIdle);
}

// Every swatch of the timeline's legend, for every shipped trace: labelled, each label once,
// no two alike in colour, and none a task kind's colour.
TEST(Palette, EverySwatchIsLabelledOnceAndNoneLooksLikeAnother) {
  for (const auto& path : testing::all_shipped()) {
    const TraceModel& m = testing::shipped(path.filename().string());
    std::vector<LegendEntry> all = event_legend(m);
    for (const LegendEntry& e : sm_row_legend()) all.push_back(e);
    std::set<std::string> labels;
    for (std::size_t i = 0; i < all.size(); ++i) {
      EXPECT_FALSE(all[i].label.empty()) << path;
      EXPECT_TRUE(labels.insert(all[i].label).second) << all[i].label << " twice in " << path;
      for (std::size_t j = i + 1; j < all.size(); ++j) {
        EXPECT_GE(colour_distance(all[i].colour, all[j].colour), 10.0)
            << all[i].label << " and " << all[j].label << " in " << path;
      }
      for (const std::uint16_t k : m.kinds()) {
        EXPECT_GE(colour_distance(all[i].colour, kind_colour(k)), kMinMeaningDistance)
            << all[i].label << " and kind " << k;
      }
    }
    EXPECT_EQ(all.front().colour, palette::kIdle) << "idle is always named: " << path;
  }
}

TEST(Palette, TheLegendNamesWhatTheTraceHolds) {
  auto has = [](const TraceModel& m, Rgb8 c) {
    for (const LegendEntry& e : event_legend(m)) {
      if (e.colour == c) return true;
    }
    return false;
  };
  const TraceModel& uts4 = testing::recorded("uts-geometric-d7-work-stealing-4xh200.gpulb");
  EXPECT_TRUE(has(uts4, palette::kSteal));
  EXPECT_TRUE(has(uts4, palette::kStealAcross));
  EXPECT_TRUE(has(uts4, palette::kSpawn));
  const TraceModel& ranks = testing::recorded("uts-d9-work-stealing-4ranks-cpu.gpulb");
  EXPECT_TRUE(has(ranks, palette::kRankTransfer));
  const TraceModel& p0 = testing::recorded("patterns-P0-hardware-h100.gpulb");
  EXPECT_FALSE(has(p0, palette::kSteal)) << "no steals, no steal swatch";
}

}  // namespace
}  // namespace gpulb::viewer
