#include "heat_scale.hpp"

#include <algorithm>
#include <cmath>

namespace gpulb::viewer {

int heat_level(double fraction) {
  const double f = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  // Any work at all gets level 1: a row that ran one task in a column must not read as empty.
  // f * kHeatLevels + 0.5 is positive, so the cast rounds half away from zero as lround does
  // (lround is a library call, and a whole-run frame asks this 140,000 times).
  return f <= 0.0 ? 0 : std::max(1, static_cast<int>(f * kHeatLevels + 0.5));
}

int steal_step(std::uint32_t steals, std::size_t lanes) {
  return steals == 0
             ? 0
             : 1 + std::min(3, static_cast<int>(4 * steals / std::max<std::size_t>(lanes, 1)));
}

HeatRow heat_row(const StepSeries& busy, const StepSeries* idle,
                 std::span<const std::uint64_t> steals, std::size_t lanes, double t0_ns,
                 double col_ns, int columns) {
  HeatRow row;
  row.t0_ns = t0_ns;
  row.col_ns = col_ns;
  const auto cols = static_cast<std::size_t>(std::max(columns, 0));
  const double n = static_cast<double>(std::max<std::size_t>(lanes, 1));
  row.busy.resize(cols);
  // Coarse means: the colour quantises them to kHeatLevels steps, coarser than their error.
  const auto b = busy.coarse_mean_columns(t0_ns, col_ns, columns);
  for (std::size_t c = 0; c < cols; ++c)
    row.busy[c] = static_cast<std::uint8_t>(heat_level(b[c].mean / n));
  if (idle && !idle->empty()) {
    row.idle.resize(cols);
    const auto i = idle->coarse_mean_columns(t0_ns, col_ns, columns);
    for (std::size_t c = 0; c < cols; ++c)
      row.idle[c] = static_cast<std::uint8_t>(heat_level(i[c].mean / n));
  }
  row.steal.assign(cols, 0);
  if (!steals.empty()) {
    const std::vector<std::uint32_t> counts = counts_per_column(steals, t0_ns, col_ns, columns);
    for (std::size_t c = 0; c < cols; ++c)
      row.steal[c] = static_cast<std::uint8_t>(steal_step(counts[c], lanes));
  }
  return row;
}

Rgb8 heat_colour(double busy, double idle) {
  const double b = heat_level(busy) / static_cast<double>(kHeatLevels);
  const double i = heat_level(idle) / static_cast<double>(kHeatLevels);
  // From the lane background (34 grey, a touch blue) to near white; then towards the idle colour
  // by the idle share.
  const double light = 34.0 + 206.0 * b;
  auto channel = [i](double grey, std::uint8_t idle_colour) {
    return static_cast<std::uint8_t>(
        std::clamp(std::lround(grey + (idle_colour - grey) * i), 0L, 255L));
  };
  return {channel(light, palette::kIdle.r), channel(light, palette::kIdle.g),
          channel(std::min(255.0, light * 1.04), palette::kIdle.b)};
}

StealMark steal_mark(int step, float row_h) {
  const float share = 0.2f + 0.1f * static_cast<float>(std::clamp(step, 1, 4));
  return {palette::kSteal, std::max(1.0f, row_h * share)};
}

std::vector<std::uint32_t> counts_per_column(std::span<const std::uint64_t> times, double t0_ns,
                                             double col_ns, int columns) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(std::max(columns, 0)), 0);
  auto before = [](double t) {
    return [t](std::uint64_t v) { return static_cast<double>(v) < t; };
  };
  auto from = std::partition_point(times.begin(), times.end(), before(t0_ns));
  for (std::size_t c = 0; c < out.size() && from != times.end(); ++c) {
    // Galloping from the last column's end: a column holds a few steals, not the whole list.
    const double t = t0_ns + col_ns * static_cast<double>(c + 1);
    auto lo = from;
    std::ptrdiff_t step = 1;
    while (times.end() - lo > step && static_cast<double>(lo[step]) < t) {
      lo += step;
      step *= 2;
    }
    const auto to = std::partition_point(lo, lo + std::min(step + 1, times.end() - lo), before(t));
    out[c] = static_cast<std::uint32_t>(to - from);
    from = to;
  }
  return out;
}

HeatRow heat_row_on_grid(const StepSeries& busy, const StepSeries* idle,
                         std::span<const std::uint64_t> steals, std::size_t lanes, double origin_ns,
                         double col_ns, std::int64_t first, int columns, const HeatRow* reuse) {
  auto segment = [&](std::int64_t from, std::int64_t count) {
    return heat_row(busy, idle, steals, lanes, origin_ns + static_cast<double>(from) * col_ns,
                    col_ns, static_cast<int>(count));
  };
  const std::int64_t end = first + std::max(columns, 0);
  const bool same_grid = reuse && reuse->col_ns == col_ns && reuse->origin_ns == origin_ns;
  const std::int64_t kept_from = same_grid ? std::max(first, reuse->first) : 0;
  const std::int64_t kept_to =
      same_grid ? std::min(end, reuse->first + static_cast<std::int64_t>(reuse->busy.size())) : 0;
  HeatRow row;
  if (kept_from >= kept_to) {
    row = segment(first, end - first);
  } else {
    const HeatRow head = segment(first, kept_from - first), tail = segment(kept_to, end - kept_to);
    row.t0_ns = origin_ns + static_cast<double>(first) * col_ns;
    row.col_ns = col_ns;
    const auto at = static_cast<std::size_t>(kept_from - reuse->first),
               n = static_cast<std::size_t>(kept_to - kept_from);
    auto join = [&](std::vector<std::uint8_t>& out, const std::vector<std::uint8_t>& h,
                    const std::vector<std::uint8_t>& kept, const std::vector<std::uint8_t>& t) {
      out.reserve(h.size() + n + t.size());
      out.insert(out.end(), h.begin(), h.end());
      out.insert(out.end(), kept.begin() + static_cast<std::ptrdiff_t>(at),
                 kept.begin() + static_cast<std::ptrdiff_t>(at + n));
      out.insert(out.end(), t.begin(), t.end());
    };
    join(row.busy, head.busy, reuse->busy, tail.busy);
    if (!reuse->idle.empty()) join(row.idle, head.idle, reuse->idle, tail.idle);
    join(row.steal, head.steal, reuse->steal, tail.steal);
  }
  row.origin_ns = origin_ns;
  row.first = first;
  return row;
}

}  // namespace gpulb::viewer
