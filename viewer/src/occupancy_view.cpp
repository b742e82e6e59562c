// Queue occupancy: each queue's level over time (task queues, deques summed per device, the host
// pool) and the busy workers per device, on the timeline's time range, with the playhead. What is
// plotted, at what scale and with which ticks comes from the model (occupancy.hpp, ticks.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "counter_strip.hpp"
#include "display_text.hpp"
#include "draw.hpp"
#include "occupancy.hpp"
#include "run_span.hpp"
#include "ticks.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

constexpr float kLabelW = 150.0f;
constexpr float kRulerH = 22.0f;

ImU32 plot_colour(OccupancyPlot::Kind k) {
  switch (k) {
    case OccupancyPlot::Kind::Pool: return colours::kHost;
    case OccupancyPlot::Kind::Busy: return colours::kBusy;
    default: return colours::kQueued;
  }
}

// The plots' time area: the timeline's scale, moved to this view's left edge.
TimeAxis plot_axis(const TimeAxis& timeline_axis, float left) {
  TimeAxis axis = timeline_axis;
  axis.t0_ns = timeline_axis.time_at(left);
  axis.x0_px = left;
  return axis;
}

// The time axis over the plots: ticks and labels as the timeline's ruler has them.
void time_ruler(const TimeAxis& axis, double origin_ns, float x0, float width) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(width, kRulerH));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float left = x0 + kLabelW, right = x0 + width - 2;
  dl->AddRectFilled(ImVec2(x0, p0.y), ImVec2(x0 + width, p0.y + kRulerH), colours::kHeader, 4.0f);
  dl->AddText(ImVec2(x0 + 8, p0.y + 3), colours::kDimText, "time from start");
  for (const Tick& t : time_ticks(axis, origin_ns, left, right, 110.0, text_width)) {
    const float x = static_cast<float>(axis.x(t.at));
    dl->AddLine(ImVec2(x, p0.y + kRulerH - 6), ImVec2(x, p0.y + kRulerH), colours::kDimText);
    if (!t.label.empty())
      dl->AddText(ImVec2(static_cast<float>(t.x), p0.y + 3), colours::kText, t.label.c_str());
  }
}

// One plot: a step series as a min/max band and its mean line, per 2-pixel column, with value
// ticks on the left and the time ticks' grid.
void series_plot(const OccupancyPlot& plot, const TimeAxis& timeline_axis, double origin_ns,
                 double playhead_ns, bool show_playhead, ImVec2 size) {
  const StepSeries& s = *plot.series;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  if (!ImGui::IsRectVisible(size)) {  // scrolled away: draw nothing, so cost follows what is seen
    ImGui::Dummy(size);
    return;
  }
  ImGui::Dummy(size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), colours::kLaneEven, 4.0f);
  const float left = p0.x + kLabelW, right = p0.x + size.x - 2, top = p0.y + 6,
              bottom = p0.y + size.y - 6;
  const TimeAxis axis = plot_axis(timeline_axis, left);
  auto y_of = [&](double v) { return bottom - static_cast<float>(v / plot.top) * (bottom - top); };

  // The title in the label column, clear of the value ticks at its right.
  const float line = ImGui::GetTextLineHeight();
  dl->PushClipRect(ImVec2(p0.x, p0.y), ImVec2(left - 44, p0.y + size.y), true);
  // Wrapped rather than cut: "GPU 0 deques (sum)" does not fit one line of the column.
  dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(p0.x + 8, p0.y + 6), colours::kText,
              plot.title.c_str(), nullptr, left - 48 - (p0.x + 8));
  dl->PopClipRect();
  // Value labels bottom up; one that would touch the label below it is left out (a short plot).
  float free_above = bottom + line;
  for (const Tick& t : plot.ticks) {
    const float y = y_of(t.at);
    dl->AddLine(ImVec2(left, y), ImVec2(right, y), IM_COL32(60, 65, 78, 110));
    const float ty = std::clamp(y - line * 0.5f, top - 4, bottom - line + 4);
    if (ty + line > free_above) continue;
    dl->AddText(ImVec2(left - text_width(t.label) - 4, ty), colours::kDimText, t.label.c_str());
    free_above = ty - 1;
  }
  for (const Tick& t : time_ticks(axis, origin_ns, left, right, 110.0, text_width)) {
    const float x = static_cast<float>(axis.x(t.at));
    dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), IM_COL32(60, 65, 78, 90));
  }
  if (plot.capacity > 0 && plot.capacity <= plot.top) {
    dl->AddLine(ImVec2(left, y_of(plot.capacity)), ImVec2(right, y_of(plot.capacity)),
                IM_COL32(230, 110, 120, 160));
  }
  dl->AddLine(ImVec2(left, bottom), ImVec2(right, bottom), colours::kGrid);

  constexpr float kCol = 2.0f;
  const int cols = static_cast<int>((right - left) / kCol);
  const auto c = s.columns(axis.t0_ns, axis.ns_per_px * kCol, cols);
  const ImU32 colour = plot_colour(plot.kind);
  const ImU32 band = (colour & 0x00FFFFFFu) | (90u << 24);
  for (int i = 0; i < cols; ++i) {
    const double t = axis.t0_ns + axis.ns_per_px * kCol * (i + 0.5);
    if (t < static_cast<double>(s.begin_ns())) continue;
    const float x = left + kCol * static_cast<float>(i);
    const auto& col = c[static_cast<std::size_t>(i)];
    dl->AddRectFilled(ImVec2(x, y_of(static_cast<double>(col.max))), ImVec2(x + kCol, bottom),
                      band);
    dl->AddRectFilled(ImVec2(x, y_of(col.mean)), ImVec2(x + kCol, bottom), colour);
  }
  dl->AddText(ImVec2(left + 6, top), colours::kDimText, plot.caption.c_str());
  if (show_playhead) {
    const float x = static_cast<float>(axis.x(playhead_ns));
    if (x >= left && x <= right) {
      char buf[32];
      dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), colours::kPlayhead, 2.0f);
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(s.value_at(playhead_ns)));
      dl->AddText(ImVec2(x + 4, top), colours::kPlayhead, buf);
    }
  }
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && m.x >= left && m.x < right) {
    const double t = axis.time_at(m.x);
    ImGui::SetTooltip("%s at %s: %lld", plot.title.c_str(),
                      format_time_at_step(t - origin_ns, tick_step(axis.ns_per_px, 1.0)).c_str(),
                      static_cast<long long>(s.value_at(t)));
  }
}

}  // namespace

void draw_occupancy(const TraceModel& model, ViewState& vs, const ReplayState& state, ImVec2 size) {
  if (vs.fit_pending) {  // the timeline has not been shown yet: fit here, with the same margins
    const TimeSpan fit = fit_span(model);
    vs.axis = TimeAxis::fit(fit.begin_ns, fit.end_ns, ImGui::GetCursorScreenPos().x + kLabelW,
                            size.x - kLabelW - 2);
    vs.fit_pending = false;
  }
  if (vs.pending_range) {
    vs.axis = TimeAxis::fit(vs.pending_range->begin_ns, vs.pending_range->end_ns,
                            ImGui::GetCursorScreenPos().x + kLabelW, size.x - kLabelW - 2);
    vs.pending_range.reset();
  }
  const OccupancyPlots occupancy = occupancy_plots(model, vs.counter_scale);
  const std::size_t plots = occupancy.plots.size();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float first_line = ImGui::GetFrameHeightWithSpacing();
  const float h =
      std::clamp((size.y - first_line - ImGui::GetTextLineHeightWithSpacing() - kRulerH - spacing) /
                         static_cast<float>(std::max<std::size_t>(plots, 1)) -
                     spacing,
                 70.0f, 170.0f);
  own_scale_checkbox(vs);
  ImGui::SameLine();
  std::string notes = occupancy.note;
  if (!model.omitted().empty()) notes += (notes.empty() ? "" : "; ") + model.omitted();
  ImGui::AlignTextToFramePadding();
  ImGui::TextColored(
      ImVec4(0.6f, 0.62f, 0.67f, 1),
      "Same time range as the timeline (zoom there); band: max in each pixel, solid: mean.%s%s",
      notes.empty() ? "" : "  ", notes.c_str());
  ImGui::BeginChild("occupancy", ImVec2(size.x, size.y - first_line), false);
  const float w = ImGui::GetContentRegionAvail().x;
  const double origin = run_span(model).begin_ns;
  time_ruler(plot_axis(vs.axis, ImGui::GetCursorScreenPos().x + kLabelW), origin,
             ImGui::GetCursorScreenPos().x, w);
  if (model.queues().empty()) {
    ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1),
                       "This trace records no queue levels (policy %s).",
                       display_label(model.header().meta.policy).c_str());
  }
  for (const OccupancyPlot& p : occupancy.plots) {
    series_plot(p, vs.axis, origin, state.time_ns, vs.playhead.active, ImVec2(w, h));
  }
  ImGui::EndChild();
}

}  // namespace gpulb::viewer
