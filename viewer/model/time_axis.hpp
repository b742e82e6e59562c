// The mapping between trace time and screen pixels that every view shares.
//
// A view shows [t0_ns, t0_ns + width * ns_per_px) across `width` pixels starting at x0_px.
// Doubles keep sub-nanosecond precision for any trace shorter than about 100 days.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpulb::viewer {

struct TimeAxis {
  double t0_ns = 0.0;      // time at the left edge
  double ns_per_px = 1.0;  // zoom: nanoseconds one pixel covers
  double x0_px = 0.0;      // screen x of the left edge

  double x(double t_ns) const { return x0_px + (t_ns - t0_ns) / ns_per_px; }
  double time_at(double x_px) const { return t0_ns + (x_px - x0_px) * ns_per_px; }
  double t1_ns(double width_px) const { return t0_ns + width_px * ns_per_px; }

  // Shows [begin, end] across width pixels (a zero-length range still gets a sane zoom).
  static TimeAxis fit(double begin_ns, double end_ns, double x0_px, double width_px) {
    const double span = std::max(end_ns - begin_ns, 1.0);
    return TimeAxis{begin_ns, span / std::max(width_px, 1.0), x0_px};
  }

  // Zooms by `factor` (> 1 zooms in) keeping the time under the cursor x_px where it is.
  void zoom_at(double x_px, double factor, double min_ns_per_px = 1e-3) {
    const double t = time_at(x_px);
    ns_per_px = std::max(ns_per_px / factor, min_ns_per_px);
    t0_ns = t - (x_px - x0_px) * ns_per_px;
  }

  // Moves the content with a drag of dx_px (positive: content moves right, earlier time shows).
  void pan(double dx_px) { t0_ns -= dx_px * ns_per_px; }

  // Keeps the same time range when the view's left edge moves (the label column is resized).
  void set_origin(double x0) { x0_px = x0; }
};

}  // namespace gpulb::viewer
