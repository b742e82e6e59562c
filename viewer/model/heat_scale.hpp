// The colour scale of folded timeline rows (one per SM): how busy its workers were, and how many
// sat idle, per pixel column. Grey to white for busy, so that it never reads as a task kind (the
// kinds are saturated hues); red mixed in for the share of workers in an idle spell.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpulb::viewer {

struct Rgb8 {
  std::uint8_t r = 0, g = 0, b = 0;
};

// busy, idle: fractions of the row's workers in [0, 1] (clamped). Lightness grows with busy; idle
// turns it red. Quantised to kHeatLevels steps a channel input so that neighbouring columns of
// about the same load share a colour (and one quad).
inline constexpr int kHeatLevels = 12;  // 24 doubled the quads of a whole-run frame for no visible gain
Rgb8 heat_colour(double busy, double idle);
// The quantised level of a fraction (0 .. kHeatLevels): what neighbouring columns are merged by.
int heat_level(double fraction);

// How many of `times` (sorted) fall in each of `columns` columns of col_ns from t0: the steal
// density a folded row marks. O(columns x log n).
std::vector<std::uint32_t> counts_per_column(std::span<const std::uint64_t> times, double t0_ns, double col_ns, int columns);

}  // namespace gpulb::viewer
