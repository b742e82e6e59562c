// Level of detail for the timeline, as Tracy does it: find the visible range by binary search and
// merge zones narrower than a few pixels into one drawn run, so a lane costs O(pixels), not
// O(events), however many zones it holds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "columns.hpp"
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
      std::partition_point(v.begin(), v.end(),
                           [t](const Interval& z) { return static_cast<double>(z.end_ns) < t; }) -
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

// The same searches on the model's compact lists (columns.hpp).
inline std::size_t first_ending_at_or_after(const ZoneList& v, double t) {
  return v.first_ending_at_or_after(t);
}
inline std::size_t first_ending_at_or_after(const IntervalList& v, double t) {
  return v.first_ending_at_or_after(t);
}
inline std::size_t first_beginning_at_or_after(const ZoneList& v, std::size_t from, double t) {
  return v.first_beginning_at_or_after(from, t);
}
inline std::size_t first_beginning_at_or_after(const IntervalList& v, std::size_t from, double t) {
  return v.first_beginning_at_or_after(from, t);
}

// A span of intervals with the compact lists' interface, so one lod_runs serves both.
template <class Interval>
struct SpanIntervals {
  std::span<const Interval> v;
  std::size_t size() const { return v.size(); }
  std::uint64_t begin_ns(std::size_t i) const { return v[i].begin_ns; }
  std::uint64_t end_ns(std::size_t i) const { return v[i].end_ns; }
  std::size_t first_ending_at_or_after(double t) const {
    return viewer::first_ending_at_or_after(v, t);
  }
  std::size_t first_beginning_at_or_after(std::size_t from, double t) const {
    return viewer::first_beginning_at_or_after(v, from, t);
  }
};

// Appends to `out` what to draw of `zones` (sorted, non-overlapping; size(), begin_ns(i), end_ns(i)
// and the two searches) between screen x = left and x = right under `axis`. Zones narrower than
// min_px that start within min_px of each other become one run; a wide zone is never swallowed by
// a run.
template <class Intervals>
void lod_runs_of(const Intervals& zones, const TimeAxis& axis, double left, double right,
                 double min_px, std::vector<DrawRun>& out) {
  const double t_left = axis.time_at(left), t_right = axis.time_at(right);
  std::size_t i = zones.first_ending_at_or_after(t_left);
  const std::size_t n = zones.size();
  while (i < n && static_cast<double>(zones.begin_ns(i)) <= t_right) {
    const double x0 = axis.x(static_cast<double>(zones.begin_ns(i)));
    double x1 = axis.x(static_cast<double>(zones.end_ns(i)));
    if (x1 - x0 >= min_px) {
      out.push_back({x0, x1, static_cast<std::uint32_t>(i), 1});
      ++i;
      continue;
    }
    // A small zone: swallow every zone that starts less than min_px after the run's end.
    std::size_t j = i + 1;
    while (j < n) {
      const std::size_t k = zones.first_beginning_at_or_after(j, axis.time_at(x1 + min_px));
      if (k == j) break;
      const double last_x0 = axis.x(static_cast<double>(zones.begin_ns(k - 1)));
      const double last_x1 = axis.x(static_cast<double>(zones.end_ns(k - 1)));
      if (last_x1 - last_x0 >= min_px) {  // a wide zone: the run stops before it
        if (k - 1 > j) x1 = std::max(x1, axis.x(static_cast<double>(zones.end_ns(k - 2))));
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

template <class Interval>
void lod_runs(std::span<const Interval> zones, const TimeAxis& axis, double left, double right,
              double min_px, std::vector<DrawRun>& out) {
  lod_runs_of(SpanIntervals<Interval>{zones}, axis, left, right, min_px, out);
}
inline void lod_runs(const ZoneList& zones, const TimeAxis& axis, double left, double right,
                     double min_px, std::vector<DrawRun>& out) {
  lod_runs_of(zones, axis, left, right, min_px, out);
}
inline void lod_runs(const IntervalList& spans, const TimeAxis& axis, double left, double right,
                     double min_px, std::vector<DrawRun>& out) {
  lod_runs_of(spans, axis, left, right, min_px, out);
}

}  // namespace gpulb::viewer
