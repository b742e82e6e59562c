// A key figure's value labels (bar_labels.hpp): each next to its own bar, none over another label
// or another bar, whatever the heights of two neighbours.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bar_labels.hpp"

namespace gpulb::viewer {
namespace {

constexpr float kLine = 15.0f, kLeft = 0.0f, kRight = 320.0f, kCeiling = 10.0f, kBottom = 330.0f;

// Groups of two bars (A left, B right of the group's middle) as the key figure draws them, each
// value a share of the plot's height, each label `label_w` wide.
std::vector<LabelledBar> pairs(const std::vector<std::pair<double, double>>& heights,
                               float label_w) {
  const float group_w = (kRight - kLeft) / static_cast<float>(heights.size()), bar_w = 29.0f;
  std::vector<LabelledBar> bars;
  for (std::size_t i = 0; i < heights.size(); ++i) {
    const float gx = kLeft + group_w * (static_cast<float>(i) + 0.5f);
    for (const auto& [x0, h] : {std::pair{gx - bar_w - 2.0f, heights[i].first},
                                std::pair{gx + 2.0f, heights[i].second}}) {
      bars.push_back({x0, x0 + bar_w, kBottom - static_cast<float>(h) * (kBottom - 3 * kLine),
                      kBottom, label_w});
    }
  }
  return bars;
}

bool overlap(float ax0, float ay0, float ax1, float ay1, float bx0, float by0, float bx1,
             float by1) {
  return ax0 < bx1 - 0.5f && bx0 < ax1 - 0.5f && ay0 < by1 - 0.5f && by0 < ay1 - 0.5f;
}

// What a reader needs of every label placed: it sits on its bar (just above its top, or inside it
// at the top), and it covers no other label and no other bar.
std::vector<std::string> faults(const std::vector<LabelledBar>& bars,
                                const std::vector<PlacedBarLabel>& labels) {
  std::vector<std::string> out;
  for (const PlacedBarLabel& l : labels) {
    const LabelledBar& b = bars[l.bar];
    const std::string name = "bar " + std::to_string(l.bar);
    const float bottom = l.y + kLine;
    const bool on_top = !l.inside && bottom <= b.top + 0.5f && bottom >= b.top - 3.0f;
    const bool in_top = l.inside && l.y >= b.top && bottom <= b.bottom;
    if (!on_top && !in_top)
      out.push_back(name + "'s label floats: its bottom " + std::to_string(bottom) +
                    ", the bar's top " + std::to_string(b.top));
    if (l.x + b.label_w <= b.x0 || l.x >= b.x1)
      out.push_back(name + "'s label is beside its bar, not on it");
    if (l.x < kLeft - 0.5f || l.x + b.label_w > kRight + 0.5f || l.y < kCeiling - 0.5f)
      out.push_back(name + "'s label leaves the chart");
    for (std::size_t j = 0; j < bars.size(); ++j) {
      const LabelledBar& o = bars[j];
      if (j != l.bar && overlap(l.x, l.y, l.x + b.label_w, bottom, o.x0, o.top, o.x1, o.bottom))
        out.push_back(name + "'s label runs into bar " + std::to_string(j));
    }
    for (const PlacedBarLabel& m : labels) {
      if (&m != &l && overlap(l.x, l.y, l.x + b.label_w, bottom, m.x, m.y,
                              m.x + bars[m.bar].label_w, m.y + kLine)) {
        out.push_back(name + "'s label covers bar " + std::to_string(m.bar) + "'s");
      }
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "\n  " + x;
  return s;
}

// Neighbours of nearly one height (the static list and work stealing at depth 7 and 8), a pair
// where B is the taller, one where both are the plot's height.
const std::vector<std::pair<double, double>> kHeights = {
    {0.11, 0.095}, {0.16, 0.15}, {0.28, 0.33}, {0.80, 1.0}};

TEST(BarLabels, ALabelAsWideAsItsBarSitsOnItsBar) {
  const std::vector<LabelledBar> bars = pairs(kHeights, 31.0f);
  const std::vector<PlacedBarLabel> labels = place_bar_labels(bars, kLine, kLeft, kRight, kCeiling);
  EXPECT_EQ(labels.size(), bars.size()) << "every label as wide as its bar fits on it";
  const std::vector<std::string> f = faults(bars, labels);
  EXPECT_TRUE(f.empty()) << joined(f);
}

TEST(BarLabels, AWiderLabelNeverFloatsOrCoversAnotherBar) {
  const std::vector<LabelledBar> bars = pairs(kHeights, 46.0f);
  const std::vector<PlacedBarLabel> labels = place_bar_labels(bars, kLine, kLeft, kRight, kCeiling);
  const std::vector<std::string> f = faults(bars, labels);
  EXPECT_TRUE(f.empty()) << joined(f);
  EXPECT_GE(labels.size(), bars.size() / 2) << "most of them still find room";
}

}  // namespace
}  // namespace gpulb::viewer
