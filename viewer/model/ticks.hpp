// Ticks and their labels for the time ruler, the occupancy plots' axes and their value scales.
// Computed here, not where they are drawn, so that what a label says is testable.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "time_axis.hpp"

namespace gpulb::viewer {

struct Tick {
  double at = 0.0;  // a time (ns, on the trace's clock) or a value
  double x = 0.0;   // where its label starts (time ticks: screen px)
  std::string label;
  // a chart axis's device name: drawn before, and never given up for, minor ones
  bool major = false;
};

// The round step (1, 2 or 5 x 10^k ns) that puts ticks at least min_px apart.
double tick_step(double ns_per_px, double min_px);

// "1.1005 ms": the time with as many digits as the step needs, so that ticks `step_ns` apart
// never read the same (format_time's 3 significant digits labelled every tick of a 4 us window
// at 1.1 ms "1.1 ms").
std::string format_time_at_step(double ns, double step_ns);

// How wide a label is drawn, in px (ImGui::CalcTextSize where drawn; an estimate in tests).
using TextWidth = std::function<float(const std::string&)>;

// Ruler ticks over the axis's [left_px, right_px], labelled with the time since origin_ns. Labels
// start 3 px right of their tick; one that would cross right_px ends there instead, and one that
// would then overlap its left neighbour is left out (its tick stays: Tick::label empty).
std::vector<Tick> time_ticks(const TimeAxis& axis, double origin_ns, double left_px,
                             double right_px, double min_px, const TextWidth& width);

// Clears the labels of `ticks` (time_ticks') that would touch [x0, x1], where another label is
// drawn (the selection's length at the ruler's right end); their ticks stay.
void clear_labels_under(std::vector<Tick>& ticks, double x0, double x1, const TextWidth& width);

// Value ticks for a plot of [0, top]: 0 and round steps up to top, at most max_ticks + 1 of them,
// labelled as counts ("1,500" is "1.5k").
std::vector<Tick> value_ticks(double top, int max_ticks);

}  // namespace gpulb::viewer
