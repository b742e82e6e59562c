#include "histogram.hpp"

#include <algorithm>
#include <cmath>

namespace gpulb::viewer {

std::uint64_t Histogram::peak() const {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

int bin_of(const Histogram& h, double v) {
  const int bins = static_cast<int>(h.counts.size());
  if (bins == 0) return 0;
  // upper_bound on the inner edges: v == edge k goes to bin k, the maximum to the last bin.
  const auto it = std::upper_bound(h.edges.begin() + 1, h.edges.end() - 1, v);
  return std::clamp(static_cast<int>(it - (h.edges.begin() + 1)), 0, bins - 1);
}

namespace {
Histogram fill(Histogram h, std::span<const double> values) {
  h.counts.assign(h.edges.size() - 1, 0);
  for (const double v : values) ++h.counts[static_cast<std::size_t>(bin_of(h, v))];
  return h;
}
}  // namespace

Histogram linear_histogram(std::span<const double> values, int bins) {
  Histogram h;
  bins = std::max(bins, 1);
  if (values.empty()) {
    h.edges = {0.0, 1.0};
    h.counts = {0};
    return h;
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double a = *lo, b = *hi > *lo ? *hi : *lo + 1.0;
  for (int i = 0; i <= bins; ++i) h.edges.push_back(a + (b - a) * i / bins);
  return fill(std::move(h), values);
}

Histogram log_histogram(std::span<const double> values, int bins) {
  Histogram h;
  h.log_scale = true;
  bins = std::max(bins, 1);
  double lo = 0.0, hi = 0.0;
  for (const double v : values) {
    if (v <= 0) continue;
    lo = lo == 0.0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo == 0.0) {
    h.edges = {1.0, 10.0};
    h.counts = {static_cast<std::uint64_t>(values.size())};
    return h;
  }
  const double a = std::log10(lo), b = hi > lo ? std::log10(hi) : a + 1.0;
  for (int i = 0; i <= bins; ++i) h.edges.push_back(std::pow(10.0, a + (b - a) * i / bins));
  return fill(std::move(h), values);
}

}  // namespace gpulb::viewer
