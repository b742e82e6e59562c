// Level of detail for the timeline, as Tracy does it: find the visible range by binary search and
// merge zones narrower than a few pixels into one drawn run, so a lane costs O(pixels), not
// O(events), however many zones it holds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "time_axis.hpp"

namespace gpulb::viewer {

// One thing to draw: a single zone (count == 1) or `count` zones merged into [x0, x1].
struct DrawRun {
  double x0 = 0.0, x1 = 0.0;
  std::uint32_t first = 0;  // index of the first zone in the run
  std::uint32_t count = 0;
};

// Index of the first interval whose end is >= t. Intervals are sorted and do not overlap, so their
// ends are sorted too.
template <class Interval>
std::size_t first_ending_at_or_after(std::span<const Interval> v, double t) {
  return static_cast<std::size_t>(
      std::partition_point(v.begin(), v.end(), [t](const Interval& z) { return static_cast<double>(z.end_ns) < t; }) -
      v.begin());
}

// Index of the first interval, at or after `from`, that begins at or after t.
template <class Interval>
std::size_t first_beginning_at_or_after(std::span<const Interval> v, std::size_t from, double t) {
  return static_cast<std::size_t>(
      std::partition_point(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(),
                           [t](const Interval& z) { return static_cast<double>(z.begin_ns) < t; }) -
      v.begin());
}

// Appends to `out` what to draw of `zones` (sorted, non-overlapping, with begin_ns/end_ns) between
// screen x = left and x = right under `axis`. Zones narrower than min_px that start within min_px of
// each other become one run; a wide zone is never swallowed by a run.
template <class Interval>
void lod_runs(std::span<const Interval> zones, const TimeAxis& axis, double left, double right, double min_px,
              std::vector<DrawRun>& out) {
  const double t_left = axis.time_at(left), t_right = axis.time_at(right);
  std::size_t i = first_ending_at_or_after(zones, t_left);
  const std::size_t n = zones.size();
  while (i < n && static_cast<double>(zones[i].begin_ns) <= t_right) {
    const double x0 = axis.x(static_cast<double>(zones[i].begin_ns));
    double x1 = axis.x(static_cast<double>(zones[i].end_ns));
    if (x1 - x0 >= min_px) {
      out.push_back({x0, x1, static_cast<std::uint32_t>(i), 1});
      ++i;
      continue;
    }
    // A small zone: swallow every zone that starts less than min_px after the run's end.
    std::size_t j = i + 1;
    while (j < n) {
      const std::size_t k = first_beginning_at_or_after(zones, j, axis.time_at(x1 + min_px));
      if (k == j) break;
      const Interval& last = zones[k - 1];
      const double last_x0 = axis.x(static_cast<double>(last.begin_ns));
      const double last_x1 = axis.x(static_cast<double>(last.end_ns));
      if (last_x1 - last_x0 >= min_px) {  // a wide zone: the run stops before it
        if (k - 1 > j) x1 = std::max(x1, axis.x(static_cast<double>(zones[k - 2].end_ns)));
        j = k - 1;
        break;
      }
      x1 = std::max(x1, last_x1);
      j = k;
    }
    out.push_back({x0, x1, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j - i)});
    i = j;
  }
}

}  // namespace gpulb::viewer
