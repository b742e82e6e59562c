#include "series.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace gpulb::viewer {

void StepSeries::Points::assign(std::span<const Point> points) {
  std::int64_t lo = 0, hi = 0;
  for (const Point& p : points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  time_.reserve(points.size());
  for (const Point& p : points) time_.push_back(p.time_ns);
  time_.shrink_to_fit();
  auto fill = [&](auto& column) {
    using V = typename std::decay_t<decltype(column)>::value_type;
    column.reserve(points.size());
    for (const Point& p : points) column.push_back(static_cast<V>(p.value));
  };
  if (lo >= std::numeric_limits<std::int16_t>::min() &&
      hi <= std::numeric_limits<std::int16_t>::max()) {
    fill(v16_);
  } else if (lo >= std::numeric_limits<std::int32_t>::min() &&
             hi <= std::numeric_limits<std::int32_t>::max()) {
    fill(v32_);
  } else {
    fill(v64_);
  }
}

StepSeries::StepSeries(std::span<const Point> points) {
  // Collapse points at one time to the last of them (a level written twice in a nanosecond), then
  // drop points that repeat the value before them: a step to the same value changes nothing, and
  // the deque sum is mostly such steps (an idle worker "empties" its already empty deque).
  std::vector<Point> steps;
  for (const Point& p : points) {
    if (!steps.empty() && steps.back().time_ns == p.time_ns) {
      steps.back().value = p.value;
    } else {
      steps.push_back(p);
    }
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (kept > 0 && steps[kept - 1].value == steps[i].value)
      continue;  // the first point stays: it starts the series
    steps[kept++] = steps[i];
  }
  steps.resize(kept);
  points_.assign(steps);
  const std::size_t n = points_.size();
  anchors_.reserve((n + kAnchor - 1) / kAnchor);
  double acc = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % kAnchor == 0) anchors_.push_back(acc);
    if (i + 1 < n)
      acc += static_cast<double>(points_.value(i)) *
             static_cast<double>(points_.time_ns(i + 1) - points_.time_ns(i));
  }
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  block_min_.assign(blocks, std::numeric_limits<std::int64_t>::max());
  block_max_.assign(blocks, std::numeric_limits<std::int64_t>::min());
  for (std::size_t i = 0; i < n; ++i) {
    block_min_[i / kBlock] = std::min(block_min_[i / kBlock], points_.value(i));
    block_max_[i / kBlock] = std::max(block_max_[i / kBlock], points_.value(i));
  }
  if (n > 0) {
    min_ = std::min<std::int64_t>(0, *std::min_element(block_min_.begin(), block_min_.end()));
    max_ = *std::max_element(block_max_.begin(), block_max_.end());
  }
  const std::size_t buckets = n / kBucketPoints;
  const double span = n == 0 ? 0.0 : static_cast<double>(end_ns() - begin_ns());
  if (buckets >= 2 && n < std::numeric_limits<std::uint32_t>::max() && span > 0) {
    bucket_ns_ = span / static_cast<double>(buckets);
    bucket_first_.resize(buckets + 2);
    std::size_t i = 0;
    for (std::size_t k = 0; k < bucket_first_.size(); ++k) {
      const double start = static_cast<double>(begin_ns()) + static_cast<double>(k) * bucket_ns_;
      while (i < n && static_cast<double>(points_.time_ns(i)) < start) ++i;
      bucket_first_[k] = static_cast<std::uint32_t>(i);
    }
    bucket_integral_.resize(bucket_first_.size());
    for (std::size_t k = 0; k < bucket_first_.size(); ++k) {
      const double start = static_cast<double>(begin_ns()) + static_cast<double>(k) * bucket_ns_;
      bucket_integral_[k] = integral_to(static_cast<std::ptrdiff_t>(bucket_first_[k]) - 1, start);
    }
  }
}

std::size_t StepSeries::bytes() const {
  return points_.bytes() + anchors_.capacity() * 8 +
         (block_min_.capacity() + block_max_.capacity()) * 8 + bucket_first_.capacity() * 4 +
         bucket_integral_.capacity() * 8;
}

std::ptrdiff_t StepSeries::last_at_or_before(double t) const {
  return static_cast<std::ptrdiff_t>(points_.times().upper_bound(t)) - 1;
}

double StepSeries::integral_to(std::ptrdiff_t i, double t) const {
  if (i < 0) return 0.0;
  const auto k = static_cast<std::size_t>(i);
  std::size_t j = k / kAnchor * kAnchor;
  double acc = anchors_[k / kAnchor];
  for (; j < k; ++j)
    acc += static_cast<double>(points_.value(j)) *
           static_cast<double>(points_.time_ns(j + 1) - points_.time_ns(j));
  return acc +
         static_cast<double>(points_.value(k)) * (t - static_cast<double>(points_.time_ns(k)));
}

std::int64_t StepSeries::value_at(double t_ns) const {
  const std::ptrdiff_t i = last_at_or_before(t_ns);
  return i < 0 ? 0 : points_.value(static_cast<std::size_t>(i));
}

double StepSeries::integral(double a_ns, double b_ns) const {
  if (b_ns <= a_ns) return 0.0;
  return integral_to(last_at_or_before(b_ns), b_ns) - integral_to(last_at_or_before(a_ns), a_ns);
}

std::int64_t StepSeries::min_in(std::size_t from, std::size_t to) const {
  std::int64_t m = std::numeric_limits<std::int64_t>::max();
  while (from < to && from % kBlock != 0) m = std::min(m, points_.value(from++));
  while (from + kBlock <= to) {
    m = std::min(m, block_min_[from / kBlock]);
    from += kBlock;
  }
  while (from < to) m = std::min(m, points_.value(from++));
  return m;
}

std::int64_t StepSeries::max_in(std::size_t from, std::size_t to) const {
  std::int64_t m = std::numeric_limits<std::int64_t>::min();
  while (from < to && from % kBlock != 0) m = std::max(m, points_.value(from++));
  while (from + kBlock <= to) {
    m = std::max(m, block_max_[from / kBlock]);
    from += kBlock;
  }
  while (from < to) m = std::max(m, points_.value(from++));
  return m;
}

std::ptrdiff_t StepSeries::locate(double t, double& integral_at_point) const {
  const std::size_t n = points_.size();
  const double first = static_cast<double>(begin_ns());
  if (!(t >= first)) {
    integral_at_point = 0.0;
    return -1;
  }
  const std::size_t buckets = bucket_first_.size() - 2;
  std::size_t k = std::min(static_cast<std::size_t>((t - first) / bucket_ns_), buckets);
  auto start = [&](std::size_t j) { return first + static_cast<double>(j) * bucket_ns_; };
  while (k > 0 && start(k) > t) --k;
  while (k < buckets && start(k + 1) <= t) ++k;
  const std::size_t p = bucket_first_[k], end = std::min<std::size_t>(bucket_first_[k + 1], n);
  if (end - p >
      4 * kBucketPoints) {  // a burst: search the bucket, then add up from the point anchor
    std::size_t lo = p, hi = end;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (static_cast<double>(points_.time_ns(mid)) <= t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    const std::ptrdiff_t i = static_cast<std::ptrdiff_t>(lo) - 1;  // >= p - 1 >= 0
    integral_at_point =
        integral_to(i, static_cast<double>(points_.time_ns(static_cast<std::size_t>(i))));
    return i;
  }
  // From the bucket's start: point p - 1 is in force there (p > 0, as start(k) >= first).
  if (p >= n || static_cast<double>(points_.time_ns(p)) > t) {
    const std::size_t i = p - 1;
    integral_at_point =
        bucket_integral_[k] - static_cast<double>(points_.value(i)) *
                                  (start(k) - static_cast<double>(points_.time_ns(i)));
    return static_cast<std::ptrdiff_t>(i);
  }
  double acc =
      bucket_integral_[k] + (p > 0 ? static_cast<double>(points_.value(p - 1)) *
                                         (static_cast<double>(points_.time_ns(p)) - start(k))
                                   : 0.0);
  std::size_t i = p;
  while (i + 1 < n && static_cast<double>(points_.time_ns(i + 1)) <= t) {
    acc += static_cast<double>(points_.value(i)) *
           static_cast<double>(points_.time_ns(i + 1) - points_.time_ns(i));
    ++i;
  }
  integral_at_point = acc;
  return static_cast<std::ptrdiff_t>(i);
}

std::vector<StepSeries::Column> StepSeries::mean_columns(double t0_ns, double col_ns,
                                                         int count) const {
  std::vector<Column> out(static_cast<std::size_t>(std::max(count, 0)));
  const std::size_t n = points_.size();
  // A sweep left to right. `i` is the last point at or before the column edge and `acc` the
  // integral up to point i. A near edge is reached by walking the points (adding each step to
  // acc); a far one from its time bucket's start (locate), so a column costs O(1) whether it
  // holds two points or two thousand.
  constexpr std::size_t kWalk = 8;
  double acc = 0.0;
  std::ptrdiff_t i = locate(t0_ns, acc);
  auto integral_at = [&](double t) {
    return i < 0
               ? 0.0
               : acc + static_cast<double>(points_.value(static_cast<std::size_t>(i))) *
                           (t - static_cast<double>(points_.time_ns(static_cast<std::size_t>(i))));
  };
  double at_a = integral_at(t0_ns);
  for (int c = 0; c < count; ++c) {
    const double b = t0_ns + (c + 1) * col_ns;
    const auto next = static_cast<std::size_t>(i + 1);
    if (next < n && static_cast<double>(points_.time_ns(next)) <= b) {
      if (next + kWalk < n && static_cast<double>(points_.time_ns(next + kWalk)) <= b) {
        i = locate(b, acc);
      } else {
        while (static_cast<std::size_t>(i + 1) < n &&
               static_cast<double>(points_.time_ns(static_cast<std::size_t>(i + 1))) <= b) {
          if (i >= 0) {
            const auto k = static_cast<std::size_t>(i);
            acc += static_cast<double>(points_.value(k)) *
                   static_cast<double>(points_.time_ns(k + 1) - points_.time_ns(k));
          }
          ++i;
        }
      }
    }
    const double at_b = integral_at(b);
    out[static_cast<std::size_t>(c)].mean = (at_b - at_a) / col_ns;
    at_a = at_b;
  }
  return out;
}

std::vector<StepSeries::Column> StepSeries::coarse_mean_columns(double t0_ns, double col_ns,
                                                                int count) const {
  if (bucket_first_.empty() || col_ns < kCoarseBuckets * bucket_ns_)
    return columns(t0_ns, col_ns, count, false);
  std::vector<Column> out(static_cast<std::size_t>(std::max(count, 0)));
  const double first = static_cast<double>(begin_ns()), last = static_cast<double>(end_ns());
  const std::size_t buckets = bucket_first_.size() - 2;
  const double at_last = integral_to(static_cast<std::ptrdiff_t>(size()) - 1, last);
  const std::int64_t last_value = points_.value(size() - 1);
  auto integral_at = [&](double t) {
    if (!(t > first)) return 0.0;
    if (t >= last) return at_last + static_cast<double>(last_value) * (t - last);
    const double x = (t - first) / bucket_ns_;
    const std::size_t k = std::min(static_cast<std::size_t>(x), buckets - 1);
    const double f = x - static_cast<double>(k);
    return bucket_integral_[k] + f * (bucket_integral_[k + 1] - bucket_integral_[k]);
  };
  double at_a = integral_at(t0_ns);
  for (int c = 0; c < count; ++c) {
    const double at_b = integral_at(t0_ns + (c + 1) * col_ns);
    out[static_cast<std::size_t>(c)].mean = (at_b - at_a) / col_ns;
    at_a = at_b;
  }
  return out;
}

std::vector<StepSeries::Column> StepSeries::columns(double t0_ns, double col_ns, int count,
                                                    bool extremes) const {
  if (!extremes && !bucket_first_.empty() && count > 0) return mean_columns(t0_ns, col_ns, count);
  std::vector<Column> out(static_cast<std::size_t>(std::max(count, 0)));
  if (points_.empty() || count <= 0) return out;
  const std::size_t n = points_.size();
  // One sweep left to right: `in_force` is the last point at or before the column's start, found
  // by a binary search once and then by galloping forward, so a frame costs O(columns x log of
  // the points per column) however long the series is.
  std::ptrdiff_t in_force = last_at_or_before(t0_ns);
  for (int c = 0; c < count; ++c) {
    const double a = t0_ns + c * col_ns, b = a + col_ns;
    // First point at or after b, galloping from the one in force.
    std::size_t lo = static_cast<std::size_t>(in_force + 1), step = 1, hi = lo;
    while (hi < n && static_cast<double>(points_.time_ns(hi)) < b) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    hi = std::min(hi, n);
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (static_cast<double>(points_.time_ns(mid)) < b) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    // points in (a, b): [first_inside, hi)
    const std::size_t first_inside = static_cast<std::size_t>(in_force + 1);
    const std::ptrdiff_t last_before_b = static_cast<std::ptrdiff_t>(hi) - 1;
    Column& col = out[static_cast<std::size_t>(c)];
    const std::int64_t at_start =
        in_force < 0 ? 0 : points_.value(static_cast<std::size_t>(in_force));
    col.mean = (integral_to(last_before_b, b) - integral_to(in_force, a)) / col_ns;
    if (extremes) {
      col.min = std::min(at_start, first_inside < hi ? min_in(first_inside, hi) : at_start);
      col.max = std::max(at_start, first_inside < hi ? max_in(first_inside, hi) : at_start);
    }
    // The next column starts at b: a point exactly at b is in force there.
    in_force = last_before_b;
    if (hi < n && static_cast<double>(points_.time_ns(hi)) <= b)
      in_force = static_cast<std::ptrdiff_t>(hi);
  }
  return out;
}

GridColumns grid_columns(const StepSeries& series, double origin_ns, double col_ns,
                         std::int64_t first, int count, const GridColumns* reuse) {
  GridColumns g{origin_ns, col_ns, first, {}};
  auto segment = [&](std::int64_t from, std::int64_t n) {
    return series.columns(origin_ns + static_cast<double>(from) * col_ns, col_ns,
                          static_cast<int>(n));
  };
  const std::int64_t end = first + std::max(count, 0);
  const bool same_grid = reuse && reuse->col_ns == col_ns && reuse->origin_ns == origin_ns;
  const std::int64_t kept_from = same_grid ? std::max(first, reuse->first) : 0;
  const std::int64_t kept_to =
      same_grid ? std::min(end, reuse->first + static_cast<std::int64_t>(reuse->columns.size()))
                : 0;
  if (kept_from >= kept_to) {
    g.columns = segment(first, end - first);
    return g;
  }
  g.columns = segment(first, kept_from - first);
  const auto at = reuse->columns.begin() + static_cast<std::ptrdiff_t>(kept_from - reuse->first);
  g.columns.insert(g.columns.end(), at, at + static_cast<std::ptrdiff_t>(kept_to - kept_from));
  const std::vector<StepSeries::Column> tail = segment(kept_to, end - kept_to);
  g.columns.insert(g.columns.end(), tail.begin(), tail.end());
  return g;
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
  return StepSeries(points);
}

}  // namespace gpulb::viewer
