// Where a key figure's value labels go: each on its own bar, never over another label or another
// bar, so that a reader matches a number to its bar at a glance (lesson_series_view.cpp).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gpulb::viewer {

// A bar on screen (y grows downwards: top < bottom) and the width of its value's label.
struct LabelledBar {
  float x0 = 0.0f, x1 = 0.0f, top = 0.0f, bottom = 0.0f;
  float label_w = 0.0f;
};

struct PlacedBarLabel {
  std::size_t bar = 0;       // index into the bars given
  float x = 0.0f, y = 0.0f;  // the label's top left
  bool inside = false;       // drawn inside its bar's top (text in the bar's contrast colour)
};

// The labels of `bars`, `line_h` high, inside [left, right] and below `ceiling`. A label that fits
// nowhere next to its bar is left out (its figure is in the verdict's bars and the measured line).
std::vector<PlacedBarLabel> place_bar_labels(std::span<const LabelledBar> bars, float line_h,
                                             float left, float right, float ceiling);

}  // namespace gpulb::viewer
