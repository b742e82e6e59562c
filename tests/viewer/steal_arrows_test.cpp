// Steal arrows vanished without notice above 60 in view: the model says so.
#include <gtest/gtest.h>

#include "run_span.hpp"
#include "shipped_traces.hpp"
#include "steal_arrows.hpp"

namespace gpulb::viewer {
namespace {

TEST(StealArrows, TooManyInViewAreSaidNotHidden) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const TimeSpan run = run_span(m);
  const StealsInView s = steals_in_view(m, run.begin_ns, run.end_ns);
  EXPECT_EQ(s.steals, m.stats().steals);
  EXPECT_FALSE(s.arrows);
  EXPECT_NE(s.note.find(std::to_string(m.stats().steals) + " steals in view"), std::string::npos)
      << s.note;
  EXPECT_NE(s.note.find("zoom in"), std::string::npos) << s.note;
}

TEST(StealArrows, FewInViewAreDrawnWithoutANote) {
  const TraceModel& m = testing::recorded(testing::kConnect4Stealing);
  const TimeSpan run = run_span(m);
  // The first microsecond of stealing: a handful of steals.
  double first = run.end_ns;
  for (const Lane& lane : m.lanes()) {
    for (const Marker& k : lane.markers) {
      if (k.kind == trace::EventKind::Steal)
        first = std::min(first, static_cast<double>(k.time_ns));
    }
  }
  const StealsInView s = steals_in_view(m, first, first + 1000.0);
  EXPECT_GE(s.steals, 1u);
  EXPECT_LE(s.steals, kMaxStealArrows);
  EXPECT_TRUE(s.arrows);
  EXPECT_TRUE(s.note.empty()) << s.note;
}

}  // namespace
}  // namespace gpulb::viewer
