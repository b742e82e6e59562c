// A quantity that changes in steps over time (a queue's level, the number of busy workers), with
// the queries the views need: the value at an instant (replay) and, per pixel column, the mean,
// min and max over a time interval (occupancy plots and collapsed timeline rows).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "columns.hpp"

namespace gpulb::viewer {

class StepSeries {
 public:
  // One step: from time_ns on (until the next point) the value is `value`.
  struct Point {
    std::uint64_t time_ns;
    std::int64_t value;
  };

  // The points, stored as columns (time, value): 6 bytes a point where values fit 16 bits (busy
  // and idle lanes of a group), 8 where they fit 32, 12 else.
  class Points {
   public:
    std::size_t size() const { return time_.size(); }
    bool empty() const { return time_.empty(); }
    std::uint64_t time_ns(std::size_t i) const { return time_[i]; }
    std::int64_t value(std::size_t i) const {
      return !v16_.empty() ? v16_[i] : !v32_.empty() ? v32_[i] : v64_[i];
    }
    Point operator[](std::size_t i) const { return {time_ns(i), value(i)}; }
    Point front() const { return (*this)[0]; }
    Point back() const { return (*this)[size() - 1]; }
    using iterator = IndexIterator<Points, Point>;
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }
    const TimeColumn& times() const { return time_; }

   private:
    friend class StepSeries;
    void assign(std::span<const Point> points);  // sorted by time
    std::size_t bytes() const {
      return time_.bytes() + v16_.capacity() * 2 + v32_.capacity() * 4 + v64_.capacity() * 8;
    }
    TimeColumn time_;
    std::vector<std::int16_t> v16_;  // one of the three holds the values, the narrowest that fits
    std::vector<std::int32_t> v32_;
    std::vector<std::int64_t> v64_;
  };

  StepSeries() = default;
  // Points must be sorted by time; points at the same time keep the last value.
  explicit StepSeries(std::span<const Point> points);
  explicit StepSeries(const std::vector<Point>& points)
      : StepSeries(std::span<const Point>(points)) {}

  bool empty() const { return points_.empty(); }
  std::size_t size() const { return points_.size(); }
  const Points& points() const { return points_; }
  std::uint64_t begin_ns() const { return points_.empty() ? 0 : points_.time_ns(0); }
  std::uint64_t end_ns() const { return points_.empty() ? 0 : points_.time_ns(points_.size() - 1); }
  std::size_t bytes() const;
  std::int64_t max_value() const { return max_; }
  std::int64_t min_value() const { return min_; }

  // The value in force at t (0 before the first point).
  std::int64_t value_at(double t_ns) const;
  // The integral of the value over [a, b] (value x ns).
  double integral(double a_ns, double b_ns) const;

  struct Column {
    double mean = 0.0;
    std::int64_t min = 0, max = 0;
  };
  // Splits [t0, t0 + columns * col_ns) into columns and summarises each. Costs O(columns x log n)
  // plus the points in range, with a coarse per-block min/max so a zoomed-out view of millions of
  // points stays cheap.
  // Without `extremes` only the means are computed (min = max = 0): half the cost, for rows that
  // draw only the mean.
  std::vector<Column> columns(double t0_ns, double col_ns, int columns, bool extremes = true) const;

  // Column means for a picture that quantises them (the folded rows' heat map): where a column
  // spans kCoarseBuckets time buckets or more, each edge's integral is interpolated between its
  // bucket's two exact ends, O(1) a column with no point read; each mean is then off by at most
  // (max - min value of the two edge buckets) x bucket_ns() / (2 x col_ns), under 1/16 of the
  // value's range (less than one of the heat map's 12 colour steps). Narrower columns are exact
  // (columns(..., false)).
  std::vector<Column> coarse_mean_columns(double t0_ns, double col_ns, int columns) const;
  static constexpr double kCoarseBuckets = 8.0;
  double bucket_ns() const { return bucket_ns_; }  // 0: no buckets (a short series)

 private:
  std::int64_t min_in(std::size_t from, std::size_t to) const;  // over points [from, to)
  std::int64_t max_in(std::size_t from, std::size_t to) const;
  std::ptrdiff_t last_at_or_before(double t) const;  // -1: none
  std::vector<Column> mean_columns(double t0_ns, double col_ns, int count) const;
  // The integral from the first point to t, where point i is the last at or before t (-1: none).
  double integral_to(std::ptrdiff_t i, double t) const;
  // The last point at or before t (-1: none) and the integral up to that point's time, by walking
  // from t's time bucket's start (bucket_integral_) over the few points before t.
  std::ptrdiff_t locate(double t, double& integral_at_point) const;

  // Time buckets of equal length over [first point, last point], kBucketPoints points each on
  // average: bucket_first_[k] is the first point at or after the bucket's start. A frame of
  // heat-map rows asks 140,000 column means of 264 series; galloping through the points cache
  // line by cache line cost most of it (the whole-run folded bench frame went from 7.7 to 18 ms).
  static constexpr std::size_t kBucketPoints = 8;
  double bucket_ns_ = 0.0;
  std::vector<std::uint32_t> bucket_first_;
  std::vector<double> bucket_integral_;  // the integral from the first point to bucket k's start

  static constexpr std::size_t kBlock = 64;
  // The integral up to every kAnchor-th point; integral_to adds the few steps since (half a byte a
  // point, where a double per point took 8).
  static constexpr std::size_t kAnchor = 16;
  Points points_;
  std::vector<double> anchors_;  // anchors_[j]: integral from the first point to point j * kAnchor
  std::vector<std::int64_t> block_min_, block_max_;
  std::int64_t min_ = 0, max_ = 0;
};

// Column summaries (StepSeries::columns, with extremes) over columns [first, first + count) of a
// fixed grid, column k being [origin + k x col_ns, origin + (k + 1) x col_ns): what `reuse` (the
// same grid) holds of them is copied, the rest computed, so that a pan costs the columns it
// uncovers (the counter tracks under the timeline).
struct GridColumns {
  double origin_ns = 0.0, col_ns = 0.0;
  std::int64_t first = 0;
  std::vector<StepSeries::Column> columns;
  double t0_ns() const { return origin_ns + static_cast<double>(first) * col_ns; }
};
GridColumns grid_columns(const StepSeries& series, double origin_ns, double col_ns,
                         std::int64_t first, int count, const GridColumns* reuse = nullptr);

// Builds a "how many are busy" series from +1/-1 keys: key = time_ns * 2 + (1 for a begin, 0 for
// an end), sorted. Ends sort before begins at the same time, so back-to-back tasks never count twice.
StepSeries busy_series_from_keys(std::span<const std::uint64_t> sorted_keys);

}  // namespace gpulb::viewer
