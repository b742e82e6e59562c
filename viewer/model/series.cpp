#include "series.hpp"

#include <algorithm>
#include <limits>

namespace gpulb::viewer {

StepSeries::StepSeries(std::vector<Point> points) {
  // Collapse points at one time to the last of them: a level written twice in a nanosecond.
  for (const Point& p : points) {
    if (!points_.empty() && points_.back().time_ns == p.time_ns) {
      points_.back().value = p.value;
    } else {
      points_.push_back(p);
    }
  }
  cumulative_.resize(points_.size());
  double acc = 0.0;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    cumulative_[i] = acc;
    if (i + 1 < points_.size()) {
      acc += static_cast<double>(points_[i].value) * static_cast<double>(points_[i + 1].time_ns - points_[i].time_ns);
    }
  }
  const std::size_t blocks = (points_.size() + kBlock - 1) / kBlock;
  block_min_.assign(blocks, std::numeric_limits<std::int64_t>::max());
  block_max_.assign(blocks, std::numeric_limits<std::int64_t>::min());
  for (std::size_t i = 0; i < points_.size(); ++i) {
    block_min_[i / kBlock] = std::min(block_min_[i / kBlock], points_[i].value);
    block_max_[i / kBlock] = std::max(block_max_[i / kBlock], points_[i].value);
  }
  if (!points_.empty()) {
    min_ = std::min<std::int64_t>(0, *std::min_element(block_min_.begin(), block_min_.end()));
    max_ = *std::max_element(block_max_.begin(), block_max_.end());
  }
  const std::size_t buckets = points_.size() / kBucketPoints;
  const double span = points_.empty() ? 0.0 : static_cast<double>(points_.back().time_ns - points_.front().time_ns);
  if (buckets >= 2 && points_.size() < std::numeric_limits<std::uint32_t>::max() && span > 0) {
    bucket_ns_ = span / static_cast<double>(buckets);
    bucket_first_.resize(buckets + 2);
    std::size_t i = 0;
    for (std::size_t k = 0; k < bucket_first_.size(); ++k) {
      const double start = static_cast<double>(points_.front().time_ns) + static_cast<double>(k) * bucket_ns_;
      while (i < points_.size() && static_cast<double>(points_[i].time_ns) < start) ++i;
      bucket_first_[k] = static_cast<std::uint32_t>(i);
    }
  }
}

namespace {
// Index of the last point at or before t, or -1.
std::ptrdiff_t last_at_or_before(std::span<const StepSeries::Point> p, double t) {
  const auto it = std::partition_point(p.begin(), p.end(), [t](const StepSeries::Point& q) {
    return static_cast<double>(q.time_ns) <= t;
  });
  return (it - p.begin()) - 1;
}
}  // namespace

std::int64_t StepSeries::value_at(double t_ns) const {
  const std::ptrdiff_t i = last_at_or_before(points_, t_ns);
  return i < 0 ? 0 : points_[static_cast<std::size_t>(i)].value;
}

double StepSeries::integral(double a_ns, double b_ns) const {
  auto upto = [this](double t) {
    const std::ptrdiff_t i = last_at_or_before(points_, t);
    if (i < 0) return 0.0;
    const Point& p = points_[static_cast<std::size_t>(i)];
    return cumulative_[static_cast<std::size_t>(i)] + static_cast<double>(p.value) * (t - static_cast<double>(p.time_ns));
  };
  return b_ns <= a_ns ? 0.0 : upto(b_ns) - upto(a_ns);
}

std::int64_t StepSeries::min_in(std::size_t from, std::size_t to) const {
  std::int64_t m = std::numeric_limits<std::int64_t>::max();
  while (from < to && from % kBlock != 0) m = std::min(m, points_[from++].value);
  while (from + kBlock <= to) {
    m = std::min(m, block_min_[from / kBlock]);
    from += kBlock;
  }
  while (from < to) m = std::min(m, points_[from++].value);
  return m;
}

std::int64_t StepSeries::max_in(std::size_t from, std::size_t to) const {
  std::int64_t m = std::numeric_limits<std::int64_t>::min();
  while (from < to && from % kBlock != 0) m = std::max(m, points_[from++].value);
  while (from + kBlock <= to) {
    m = std::max(m, block_max_[from / kBlock]);
    from += kBlock;
  }
  while (from < to) m = std::max(m, points_[from++].value);
  return m;
}

std::ptrdiff_t StepSeries::last_at_or_before_bucketed(double t) const {
  const double first = static_cast<double>(points_.front().time_ns);
  const std::size_t buckets = bucket_first_.size() - 2;
  if (!(t >= first)) return -1;
  if (t >= static_cast<double>(points_.back().time_ns)) return static_cast<std::ptrdiff_t>(points_.size()) - 1;
  // The bucket [start_k, start_k+1) holding t, with the starts computed as the constructor did.
  std::size_t k = std::min(static_cast<std::size_t>((t - first) / bucket_ns_), buckets);
  auto start = [&](std::size_t j) { return first + static_cast<double>(j) * bucket_ns_; };
  while (k > 0 && start(k) > t) --k;
  while (k < buckets && start(k + 1) <= t) ++k;
  // Points before bucket_first_[k] are earlier than start_k <= t; from bucket_first_[k+1] on they
  // are at or after start_k+1 > t: the first point after t lies in between.
  const auto lo = points_.begin() + bucket_first_[k], hi = points_.begin() + bucket_first_[k + 1];
  const auto after = std::partition_point(lo, hi, [t](const Point& q) { return static_cast<double>(q.time_ns) <= t; });
  return (after - points_.begin()) - 1;
}

std::vector<StepSeries::Column> StepSeries::mean_columns(double t0_ns, double col_ns, int count) const {
  std::vector<Column> out(static_cast<std::size_t>(std::max(count, 0)));
  auto integral_to = [this](std::ptrdiff_t i, double t) {
    if (i < 0) return 0.0;
    const Point& p = points_[static_cast<std::size_t>(i)];
    return cumulative_[static_cast<std::size_t>(i)] + static_cast<double>(p.value) * (t - static_cast<double>(p.time_ns));
  };
  double at_a = integral_to(last_at_or_before_bucketed(t0_ns), t0_ns);
  for (int c = 0; c < count; ++c) {
    const double b = t0_ns + (c + 1) * col_ns;
    const double at_b = integral_to(last_at_or_before_bucketed(b), b);
    out[static_cast<std::size_t>(c)].mean = (at_b - at_a) / col_ns;
    at_a = at_b;
  }
  return out;
}

std::vector<StepSeries::Column> StepSeries::columns(double t0_ns, double col_ns, int count, bool extremes) const {
  if (!extremes && !bucket_first_.empty() && count > 0) return mean_columns(t0_ns, col_ns, count);
  std::vector<Column> out(static_cast<std::size_t>(std::max(count, 0)));
  if (points_.empty() || count <= 0) return out;
  const std::size_t n = points_.size();
  // One sweep left to right: `in_force` is the last point at or before the column's start, found
  // by a binary search once and then by galloping forward, so a frame costs O(columns x log of
  // the points per column) however long the series is.
  std::ptrdiff_t in_force = last_at_or_before(points_, t0_ns);
  auto integral_to = [this](std::ptrdiff_t i, double t) {
    if (i < 0) return 0.0;
    const Point& p = points_[static_cast<std::size_t>(i)];
    return cumulative_[static_cast<std::size_t>(i)] + static_cast<double>(p.value) * (t - static_cast<double>(p.time_ns));
  };
  for (int c = 0; c < count; ++c) {
    const double a = t0_ns + c * col_ns, b = a + col_ns;
    // First point at or after b, galloping from the one in force.
    std::size_t lo = static_cast<std::size_t>(in_force + 1), step = 1, hi = lo;
    while (hi < n && static_cast<double>(points_[hi].time_ns) < b) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    hi = static_cast<std::size_t>(
        std::partition_point(points_.begin() + static_cast<std::ptrdiff_t>(lo), points_.begin() + static_cast<std::ptrdiff_t>(std::min(hi, n)),
                             [b](const Point& q) { return static_cast<double>(q.time_ns) < b; }) -
        points_.begin());
    const std::size_t first_inside = static_cast<std::size_t>(in_force + 1);  // points in (a, b): [first_inside, hi)
    const std::ptrdiff_t last_before_b = static_cast<std::ptrdiff_t>(hi) - 1;
    Column& col = out[static_cast<std::size_t>(c)];
    const std::int64_t at_start = in_force < 0 ? 0 : points_[static_cast<std::size_t>(in_force)].value;
    col.mean = (integral_to(last_before_b, b) - integral_to(in_force, a)) / col_ns;
    if (extremes) {
      col.min = std::min(at_start, first_inside < hi ? min_in(first_inside, hi) : at_start);
      col.max = std::max(at_start, first_inside < hi ? max_in(first_inside, hi) : at_start);
    }
    // The next column starts at b: a point exactly at b is in force there.
    in_force = last_before_b;
    if (hi < n && static_cast<double>(points_[hi].time_ns) <= b) in_force = static_cast<std::ptrdiff_t>(hi);
  }
  return out;
}

StepSeries busy_series_from_keys(std::span<const std::uint64_t> sorted_keys) {
  std::vector<StepSeries::Point> points;
  points.reserve(sorted_keys.size());
  std::int64_t busy = 0;
  for (const std::uint64_t key : sorted_keys) {
    busy += (key & 1) ? 1 : -1;
    const std::uint64_t t = key >> 1;
    if (!points.empty() && points.back().time_ns == t) {
      points.back().value = busy;
    } else {
      points.push_back({t, busy});
    }
  }
  return StepSeries(std::move(points));
}

}  // namespace gpulb::viewer
