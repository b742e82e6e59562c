// The inside of the timeline's rows: a lane's zones (with Tracy-style level of detail), idle
// spells and markers, and a folded group's heat map. timeline_view.cpp lays the rows out and
// calls these for the ones on screen.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <span>
#include <vector>

#include "heat_scale.hpp"
#include "lod.hpp"
#include "trace_model.hpp"
#include "view_state.hpp"

namespace gpulb::viewer {

inline constexpr float kMinZonePx = 3.0f;  // zones narrower than this merge into runs

// What drawing the inside of a row needs, the same for every row of a frame.
struct LaneCtx {
  const TraceModel& model;
  const TimeAxis& axis;
  ColourMode colour;
  float left, right;  // the time area on screen
  ImDrawList* dl;
  std::vector<DrawRun>& runs;  // reused scratch
  std::vector<double>& xs;     // reused scratch: marker positions
  // this frame's folded rows, where prepare_heat_rows made them
  const HeatRowCache* heat = nullptr;
};

void draw_lane(const LaneCtx& c, const Lane& lane, float y0, float y1);
// A folded group: the share of its `lanes` busy and idle per column, and its steals.
void draw_heat_row(const LaneCtx& c, const StepSeries& busy, const StepSeries* idle,
                   std::span<const std::uint64_t> steals, std::size_t lanes, float y0, float y1);
// The same from its heat_row, computed for this frame's columns (heat_columns).
void draw_heat_row(const LaneCtx& c, const HeatRow& row, float y0, float y1);

// The heat map's columns: 3 px each, on a grid that starts at the run's first event (so that a
// pan moves the picture, not the columns' edges), from the one under the time area's left edge
// to the one under its right.
struct HeatColumns {
  double origin_ns = 0.0, col_ns = 0.0;
  std::int64_t first = 0;
  int count = 0;
};
HeatColumns heat_columns(const LaneCtx& c);
// Makes the heat rows of these folded groups, (device, group), for this frame's columns, on every
// core: a still frame reuses the last frame's rows, a pan computes only the columns it uncovers,
// a zoom (other columns) all of them, at 6 px while it goes on (3 px again on the first frame at
// rest). Rows not asked for are dropped.
void prepare_heat_rows(const LaneCtx& c, std::span<const std::pair<std::uint32_t, int>> groups,
                       HeatRowCache& cache);

}  // namespace gpulb::viewer
