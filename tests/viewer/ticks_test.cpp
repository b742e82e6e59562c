// The time ruler's labels: 3 significant digits labelled every tick of a 4 us
// window at 1.1 ms "1.1 ms", and the right-edge label was clipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "ticks.hpp"

namespace gpulb::viewer {
namespace {

// About what ImGui's default font takes: 7 px a character.
float text_width(const std::string& s) { return 7.0f * static_cast<float>(s.size()); }

void expect_readable_ruler(const TimeAxis& axis, double origin, double left, double right) {
  const std::vector<Tick> ticks = time_ticks(axis, origin, left, right, 110.0, text_width);
  ASSERT_GE(ticks.size(), 3u);
  std::set<std::string> seen;
  double last_end = -1e9;
  for (const Tick& t : ticks) {
    if (t.label.empty()) continue;
    EXPECT_TRUE(seen.insert(t.label).second) << "two ticks read \"" << t.label << "\"";
    EXPECT_GE(t.x, left) << t.label;
    EXPECT_LE(t.x + text_width(t.label), right)
        << "\"" << t.label << "\" crosses the ruler's right edge";
    EXPECT_GE(t.x, last_end) << "\"" << t.label << "\" overlaps the label before it";
    last_end = t.x + text_width(t.label);
  }
  EXPECT_GE(seen.size(), ticks.size() - 1) << "at most the last label may give way";
}

TEST(TimeTicks, LabelsDifferForANarrowWindowLateInTheRun) {
  // A 4 us window at 1.1 ms from the start, 1,200 px wide.
  const double origin = 5'520'020.0;
  expect_readable_ruler(TimeAxis::fit(origin + 1.1e6, origin + 1.104e6, 150, 1200), origin, 150,
                        1350);
  // 40 ns at 2.5 s; 300 us at 12 ms.
  expect_readable_ruler(TimeAxis::fit(origin + 2.5e9, origin + 2.5e9 + 40, 150, 1200), origin, 150,
                        1350);
  expect_readable_ruler(TimeAxis::fit(origin + 12e6, origin + 12.3e6, 150, 1200), origin, 150,
                        1350);
}

TEST(TimeTicks, WholeRunLabelsStayInsideTheRuler) {
  // uts fitted: 805 us with 1% margins; the last tick sits near the right edge.
  for (double width : {700.0, 1000.0, 1250.0, 1770.0}) {
    expect_readable_ruler(TimeAxis::fit(-8'046.0, 812'622.0, 150, width), 0.0, 150, 150 + width);
  }
}

TEST(TimeTicks, LabelsCarryTheDigitsTheStepNeeds) {
  EXPECT_EQ(format_time_at_step(1.1005e6, 500.0), "1.1005 ms");
  EXPECT_EQ(format_time_at_step(1.1e6, 500.0), "1.1000 ms");
  EXPECT_EQ(format_time_at_step(200e3, 100e3), "200 us");
  EXPECT_EQ(format_time_at_step(-20e3, 10e3), "-20 us");
  EXPECT_EQ(format_time_at_step(0.0, 10e3), "0 us");
}

TEST(ValueTicks, RoundStepsFromZeroToTheTop) {
  const std::vector<Tick> t = value_ticks(765.0, 4);  // uts's busy peak 728, + 5%
  ASSERT_GE(t.size(), 3u);
  EXPECT_EQ(t.front().at, 0.0);
  std::vector<double> at;
  for (const Tick& k : t) at.push_back(k.at);
  EXPECT_EQ(at, (std::vector<double>{0, 200, 400, 600}));
  EXPECT_EQ(t[2].label, "400");
  EXPECT_EQ(value_ticks(30'784 * 1.05, 4)[1].label, "10k");
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

// "selection 473 us" at the ruler's right end was drawn over the last tick's "500 us"... and the
// run's "2.0 ms": labels it would touch give way, the others stay.
TEST(TimeTicks, NoTickLabelUnderTheSelectionsLength) {
  const double left = 150, right = 1350;
  std::vector<Tick> ticks =
      time_ticks(TimeAxis::fit(0, 2.14e6, left, right - left), 0, left, right, 110.0, text_width);
  const std::string note = "selection 473 us";
  const double x0 = right - text_width(note) - 6;
  const auto labelled = [](const std::vector<Tick>& t) {
    return std::count_if(t.begin(), t.end(), [](const Tick& k) { return !k.label.empty(); });
  };
  const auto before = labelled(ticks);
  bool touched = false;
  for (const Tick& t : ticks)
    touched = touched || (!t.label.empty() && t.x + text_width(t.label) > x0);
  ASSERT_TRUE(touched) << "the case needs a label under the note";
  clear_labels_under(ticks, x0, right, text_width);
  for (const Tick& t : ticks) {
    if (!t.label.empty()) {
      EXPECT_LE(t.x + text_width(t.label), x0 - 4)
          << "\"" << t.label << "\" under the selection's length";
    }
  }
  EXPECT_EQ(labelled(ticks), before - 1) << "only the label under it gives way";
}

}  // namespace
}  // namespace gpulb::viewer
