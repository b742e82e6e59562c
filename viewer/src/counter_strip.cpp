// Counter tracks under the timeline's lanes (counter_tracks.hpp): each occupancy plot as a thin
// area on the timeline's own axis, its name and peak in the label column, its value scale (0 and
// the peak) at the column's edge, the time grid and the playhead through it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "counter_strip.hpp"
#include "draw.hpp"
#include "ticks.hpp"
#include "time_format.hpp"

namespace gpulb::viewer {
namespace {

ImU32 track_colour(OccupancyPlot::Kind k) {
  switch (k) {
    case OccupancyPlot::Kind::Pool: return colours::kHost;
    case OccupancyPlot::Kind::Busy: return colours::kBusy;
    default: return colours::kQueued;
  }
}

void draw_track(const CounterStrip& s, const OccupancyPlot& plot, float y0, float h, int index) {
  ImDrawList* dl = s.dl;
  const float y1 = y0 + h, top = y0 + 3, bottom = y1 - 2;
  dl->AddRectFilled(ImVec2(s.x0, y0), ImVec2(s.right + 2, y1),
                    index % 2 ? colours::kLaneOdd : colours::kLaneEven);
  dl->AddLine(ImVec2(s.x0, y0), ImVec2(s.right + 2, y0), colours::kGrid);
  const float line = ImGui::GetTextLineHeight();
  // Name (and the peak where the track has room for a second line); the value scale at the right.
  const std::string peak = format_count(plot.top / 1.05);
  const float scale_w = text_width(peak) + 6;
  const float name_room = s.left - s.x0 - 10 - scale_w;
  dl->AddText(ImVec2(s.x0 + 8, y0 + 2), colours::kText,
              fit_text_here(plot.title, name_room).c_str());
  if (h >= 2 * line + 4)
    dl->AddText(ImVec2(s.x0 + 8, y0 + 2 + line), colours::kDimText,
                fit_text_here(plot.caption, name_room).c_str());
  auto y_of = [&](double v) { return bottom - static_cast<float>(v / plot.top) * (bottom - top); };
  dl->AddText(ImVec2(s.left - scale_w, std::max(y0 + 1, y_of(plot.top / 1.05) - line * 0.5f)),
              colours::kDimText, peak.c_str());
  if (h >= 2 * line + 4)
    dl->AddText(ImVec2(s.left - text_width("0") - 6, bottom - line + 2), colours::kDimText, "0");

  dl->PushClipRect(ImVec2(s.left, y0), ImVec2(s.right, y1), true);
  const StepSeries& series = *plot.series;
  // 2 px columns on a grid from the series' first point, so that a pan moves the picture, not the
  // columns' edges, and computes only the columns it uncovers (grid_columns).
  constexpr double kCol = 2.0;
  const double col_ns = s.axis.ns_per_px * kCol, origin = static_cast<double>(series.begin_ns());
  if (!(col_ns > 0) || series.empty()) {
    dl->PopClipRect();
    return;
  }
  const std::int64_t first =
      static_cast<std::int64_t>(std::floor((s.axis.time_at(s.left) - origin) / col_ns));
  const double t0 = origin + static_cast<double>(first) * col_ns;
  const int cols =
      std::max(0, static_cast<int>(std::ceil((s.axis.time_at(s.right) - t0) / col_ns)));
  GridColumns computed;
  const GridColumns* grid = nullptr;
  if (s.cache) {
    GridColumns& kept = s.cache->series[&series];
    const bool same = kept.col_ns == col_ns && kept.origin_ns == origin && kept.first == first &&
                      kept.columns.size() == static_cast<std::size_t>(cols);
    if (!same)
      kept =
          grid_columns(series, origin, col_ns, first, cols, kept.columns.empty() ? nullptr : &kept);
    grid = &kept;
  } else {
    computed = grid_columns(series, origin, col_ns, first, cols);
    grid = &computed;
  }
  const ImU32 colour = track_colour(plot.kind);
  const ImU32 band = (colour & 0x00FFFFFFu) | (90u << 24);
  const float x0 = static_cast<float>(s.axis.x(t0)), w = static_cast<float>(kCol);
  for (int i = 0; i < cols; ++i) {
    if (first + i < 0) continue;  // before the series' first point: nothing recorded yet
    const float x = x0 + w * static_cast<float>(i);
    const auto& col = grid->columns[static_cast<std::size_t>(i)];
    if (col.max > 0)
      dl->AddRectFilled(ImVec2(x, y_of(static_cast<double>(col.max))), ImVec2(x + w, bottom), band);
    if (col.mean > 0) dl->AddRectFilled(ImVec2(x, y_of(col.mean)), ImVec2(x + w, bottom), colour);
  }
  dl->PopClipRect();
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (s.hovered && m.y >= y0 && m.y < y1 && m.x >= s.left && m.x < s.right) {
    const double t = s.axis.time_at(m.x);
    ImGui::SetTooltip(
        "%s at %s: %lld  (%s)", plot.title.c_str(),
        format_time_at_step(t - s.origin_ns, tick_step(s.axis.ns_per_px, 1.0)).c_str(),
        static_cast<long long>(series.value_at(t)), plot.caption.c_str());
  }
}

}  // namespace

std::string fit_text_here(const std::string& text, float max_px) {
  return fit_text(text, max_px, text_width);
}

void own_scale_checkbox(ViewState& vs) {
  bool own = vs.counter_scale == CounterScale::Own;
  if (ImGui::Checkbox("own scale", &own))
    vs.counter_scale = own ? CounterScale::Own : CounterScale::Shared;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "each counter track scaled to its own peak (off: one scale per kind across devices)");
}

void draw_counter_strip(const CounterStrip& s, const OccupancyPlots& plots,
                        const CounterLayout& layout) {
  for (std::size_t i = 0; i < layout.shown; ++i) {
    draw_track(s, plots.plots[i], s.y0 + layout.track_h * static_cast<float>(i), layout.track_h,
               static_cast<int>(i));
  }
  // The time grid of the ruler above, through the strip.
  for (const Tick& t : time_ticks(s.axis, s.origin_ns, s.left, s.right, 110.0, text_width)) {
    const float x = static_cast<float>(s.axis.x(t.at));
    s.dl->AddLine(ImVec2(x, s.y0), ImVec2(x, s.y0 + layout.height), IM_COL32(60, 65, 78, 90));
  }
  if (s.playhead_ns) {
    const float x = static_cast<float>(s.axis.x(*s.playhead_ns));
    if (x >= s.left && x <= s.right)
      s.dl->AddLine(ImVec2(x, s.y0), ImVec2(x, s.y0 + layout.height), colours::kPlayhead, 2.0f);
  }
  if (layout.hidden > 0) {
    char note[96];
    std::snprintf(note, sizeof note, "%zu more in the Occupancy tab", layout.hidden);
    const float w = text_width(note);
    const float y = s.y0 + layout.height - ImGui::GetTextLineHeight() - 2;
    s.dl->AddRectFilled(ImVec2(s.right - w - 10, y - 1),
                        ImVec2(s.right - 2, y + ImGui::GetTextLineHeight() + 1),
                        IM_COL32(24, 26, 31, 220), 3.0f);
    s.dl->AddText(ImVec2(s.right - w - 6, s.y0 + layout.height - ImGui::GetTextLineHeight() - 2),
                  colours::kDimText, note);
  }
}

}  // namespace gpulb::viewer
