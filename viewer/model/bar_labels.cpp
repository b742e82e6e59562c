#include "bar_labels.hpp"

#include <algorithm>
#include <numeric>

namespace gpulb::viewer {
namespace {

struct Box {
  float x0, y0, x1, y1;
};

bool overlap(const Box& a, const Box& b, float margin) {
  return a.x0 < b.x1 + margin && b.x0 < a.x1 + margin && a.y0 < b.y1 && b.y0 < a.y1;
}

// Where a label may go, nearest its bar first: centred above it; above it, flush with one edge
// (a label wider than its bar then leans over the gap beside it, not over its neighbour); inside
// its top. Never a line higher: a label lifted above another reads as the taller bar's.
std::vector<PlacedBarLabel> candidates(std::size_t i, const LabelledBar& b, float line_h) {
  const float above = b.top - line_h - 1.0f;
  std::vector<PlacedBarLabel> out = {{i, (b.x0 + b.x1 - b.label_w) * 0.5f, above, false},
                                     {i, b.x1 - b.label_w, above, false},
                                     {i, b.x0, above, false}};
  if (b.bottom - b.top >= line_h + 4.0f && b.label_w <= b.x1 - b.x0 + 2.0f)
    out.push_back({i, (b.x0 + b.x1 - b.label_w) * 0.5f, b.top + 2.0f, true});
  return out;
}

}  // namespace

std::vector<PlacedBarLabel> place_bar_labels(std::span<const LabelledBar> bars, float line_h,
                                             float left, float right, float ceiling) {
  std::vector<std::size_t> order(bars.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // The taller bar's label first: it has the least room above it.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bars[a].top < bars[b].top; });
  std::vector<PlacedBarLabel> placed;
  std::vector<Box> taken;
  for (std::size_t i : order) {
    const LabelledBar& b = bars[i];
    for (const PlacedBarLabel& c : candidates(i, b, line_h)) {
      const Box box{c.x, c.y, c.x + b.label_w, c.y + line_h};
      if (box.x0 < left || box.x1 > right || box.y0 < ceiling) continue;
      const bool on_other_bar = std::any_of(bars.begin(), bars.end(), [&](const LabelledBar& o) {
        return &o != &b && overlap(box, Box{o.x0, o.top, o.x1, o.bottom}, 0.0f);
      });
      const bool on_label = std::any_of(taken.begin(), taken.end(),
                                        [&](const Box& t) { return overlap(box, t, 3.0f); });
      if (on_other_bar || on_label) continue;
      placed.push_back(c);
      taken.push_back(box);
      break;
    }
  }
  return placed;
}

}  // namespace gpulb::viewer
