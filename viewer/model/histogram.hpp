// Binning for the histogram views: linear bins (tasks per worker) and logarithmic bins (task
// durations span several decades, so equal-width bins would put everything in the first one).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpulb::viewer {

struct Histogram {
  std::vector<double> edges;          // bins + 1 edges, ascending
  std::vector<std::uint64_t> counts;  // one per bin
  bool log_scale = false;
  std::uint64_t peak() const;
};

// `bins` equal-width bins over [min, max] of the values; the maximum falls in the last bin.
Histogram linear_histogram(std::span<const double> values, int bins);
// `bins` bins of equal width in log10 over [min, max] of the positive values (zeros go to bin 0).
Histogram log_histogram(std::span<const double> values, int bins);

// Where value v falls in h: a bin index in [0, bins).
int bin_of(const Histogram& h, double v);

}  // namespace gpulb::viewer
