// The colour scale of folded timeline rows (one per SM): how busy its workers were, and how many
// sat idle, per pixel column. Grey to white for busy, so that it never reads as a task kind (the
// kinds are saturated hues); the idle colour (palette.hpp) mixed in for the share of workers in an
// idle spell, and steals marked in the steal colour, so that both mean what they mean in a lane.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "palette.hpp"
#include "series.hpp"

namespace gpulb::viewer {

// busy, idle: fractions of the row's workers in [0, 1] (clamped). Lightness grows with busy; idle
// turns it towards palette::kIdle (all idle: that colour). Quantised to kHeatLevels steps a channel input so that neighbouring columns of
// about the same load share a colour (and one quad).
// 24 doubled the quads of a whole-run frame for no visible gain
inline constexpr int kHeatLevels = 12;
Rgb8 heat_colour(double busy, double idle);
// The quantised level of a fraction (0 .. kHeatLevels): what neighbouring columns are merged by.
int heat_level(double fraction);

// How many of `times` (sorted) fall in each of `columns` columns of col_ns from t0: the steal
// density a folded row marks. O(columns x log n).
std::vector<std::uint32_t> counts_per_column(std::span<const std::uint64_t> times, double t0_ns,
                                             double col_ns, int columns);

// One folded row's picture over `columns` columns of col_ns from t0: per column the busy and idle
// levels (heat_level of the share of its `lanes`, from the series' coarse column means) and the
// steal mark's step (0: no steal; 1 to 4, the more steals a worker). What the timeline draws for
// the row, computed apart from drawing so that a frame's rows can be computed on every core and
// kept while the view stands still.
struct HeatRow {
  double t0_ns = 0.0, col_ns = 0.0;
  std::vector<std::uint8_t> busy, idle, steal;  // one entry a column; idle empty: no idle series
  double origin_ns = 0.0;  // heat_row_on_grid: the grid's origin, and the index of column 0 on it
  std::int64_t first = 0;
};
HeatRow heat_row(const StepSeries& busy, const StepSeries* idle,
                 std::span<const std::uint64_t> steals, std::size_t lanes, double t0_ns,
                 double col_ns, int columns);

// The same over columns [first, first + columns) of a fixed grid (column k: origin + k x col_ns),
// so that a pan moves the columns under the picture, not their edges: what `reuse` holds of
// those columns (a row of the same grid) is copied, and only the columns it lacks are computed.
// A drag then costs the columns it uncovers. A copied column equals a computed one up to the
// rounding of its edges' times (a level can differ where a mean sits on a level's edge).
HeatRow heat_row_on_grid(const StepSeries& busy, const StepSeries* idle,
                         std::span<const std::uint64_t> steals, std::size_t lanes, double origin_ns,
                         double col_ns, std::int64_t first, int columns,
                         const HeatRow* reuse = nullptr);
int steal_step(std::uint32_t steals, std::size_t lanes);  // the mark's step for a column's steals

// A column's steal mark atop a row `row_h` px tall: always the steal colour, opaque (a translucent
// yellow over grey read as orange, a task kind's colour), taller the more steals a worker.
struct StealMark {
  Rgb8 colour;
  float height = 0.0f;
};
StealMark steal_mark(int step, float row_h);

}  // namespace gpulb::viewer
