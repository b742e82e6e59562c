// The counter tracks' drawing (model: counter_tracks.hpp, occupancy.hpp), used by the timeline.
#pragma once

#include <imgui.h>

#include <optional>
#include <string>

#include "counter_tracks.hpp"
#include "labels.hpp"
#include "occupancy.hpp"
#include "time_axis.hpp"
#include "view_state.hpp"

namespace gpulb::viewer {

struct CounterStrip {
  ImDrawList* dl;
  const TimeAxis& axis;  // the timeline's
  double origin_ns;      // where its ruler counts from
  float x0, left, right, y0;
  bool hovered;
  std::optional<double> playhead_ns;
  SeriesColumnsCache* cache = nullptr;  // the tracks' columns, kept between still frames
};

void draw_counter_strip(const CounterStrip& strip, const OccupancyPlots& plots,
                        const CounterLayout& layout);
std::string fit_text_here(const std::string& text, float max_px);  // fit_text with ImGui's widths
// "own scale": the counters (strip and Occupancy tab) each on its own peak, or shared per kind.
void own_scale_checkbox(ViewState& vs);

}  // namespace gpulb::viewer
