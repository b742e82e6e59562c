#include "ticks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpulb::viewer {
namespace {

// floor(log10(v)), exact at powers of ten (log10(0.1) may come out a hair under -1).
int decade(double v) {
  const double l = std::log10(v);
  const double r = std::round(l);
  return static_cast<int>(std::fabs(l - r) < 1e-6 ? r : std::floor(l));
}

}  // namespace

double tick_step(double ns_per_px, double min_px) {
  const double want = ns_per_px * min_px;
  double step = std::pow(10.0, std::floor(std::log10(std::max(want, 1e-3))));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (step * m >= want) return step * m;
  }
  return step * 10.0;
}

std::string format_time_at_step(double ns, double step_ns) {
  step_ns = std::max(step_ns, 1e-3);
  if (std::fabs(ns) < step_ns * 1e-6) ns = 0.0;  // no "-0 us" at the origin
  // The unit of the larger of the time and the step (0 reads "0 us" on a ruler of 10 us steps).
  const double a = std::max(std::fabs(ns), step_ns);
  const char* unit = "ns";
  double scale = 1.0;
  if (a >= 1e9) {
    unit = "s", scale = 1e9;
  } else if (a >= 1e6) {
    unit = "ms", scale = 1e6;
  } else if (a >= 1e3) {
    unit = "us", scale = 1e3;
  }
  // As many decimals as the step has: steps are 1, 2 or 5 x 10^k, so neighbours always differ.
  const int decimals = std::clamp(-decade(step_ns / scale), 0, 12);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, ns / scale, unit);
  return buf;
}

std::vector<Tick> time_ticks(const TimeAxis& axis, double origin_ns, double left_px,
                             double right_px, double min_px, const TextWidth& width) {
  std::vector<Tick> ticks;
  const double step = tick_step(axis.ns_per_px, min_px);
  const double t_left = axis.time_at(left_px) - origin_ns;
  constexpr double kPad = 3.0, kGap = 4.0;
  double last_end = -1e300;
  for (double k = std::ceil(t_left / step);; k += 1.0) {
    const double t = k * step;  // a multiple, not a running sum: no drift over thousands of steps
    const double x = axis.x(t + origin_ns);
    if (x > right_px) break;
    Tick tick{t + origin_ns, x + kPad, format_time_at_step(t, step)};
    const double w = width(tick.label);
    tick.x = std::min(tick.x, right_px - w);  // the last label ends at the edge rather than past it
    if (tick.x < last_end + kGap || tick.x < left_px) {
      tick.label.clear();
    } else {
      last_end = tick.x + w;
    }
    ticks.push_back(std::move(tick));
  }
  return ticks;
}

void clear_labels_under(std::vector<Tick>& ticks, double x0, double x1, const TextWidth& width) {
  constexpr double kGap = 4.0;
  for (Tick& t : ticks) {
    if (!t.label.empty() && t.x < x1 + kGap && t.x + width(t.label) > x0 - kGap) t.label.clear();
  }
}

namespace {

std::string count_label(double v) {
  char buf[32];
  if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  } else if (v >= 1e4) {
    std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  }
  return buf;
}

}  // namespace

std::vector<Tick> value_ticks(double top, int max_ticks) {
  std::vector<Tick> ticks{{0.0, 0.0, "0"}};
  if (!(top > 0) || max_ticks < 1) return ticks;
  // The smallest round step (1, 2, 5 x 10^k, at least 1: levels are counts) giving max_ticks or fewer.
  const double want = std::max(top / max_ticks, 1.0);
  double step = std::pow(10.0, decade(want));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (step * m >= want) {
      step *= m;
      break;
    }
  }
  for (double k = 1; k * step <= top; k += 1.0)
    ticks.push_back({k * step, 0.0, count_label(k * step)});
  return ticks;
}

}  // namespace gpulb::viewer
