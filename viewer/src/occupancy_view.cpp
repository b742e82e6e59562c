// Queue occupancy: each queue's level over time (task queues, deques summed per device, the host
// pool) and the busy workers per device, on the timeline's time range, with the playhead.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "display_text.hpp"
#include "draw.hpp"
#include "run_span.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

// One plot: a step series as a min/max band and its mean line, per 2-pixel column.
void series_plot(const char* title, const StepSeries& s, double capacity, const TimeAxis& timeline_axis, double origin_ns,
                 double playhead_ns, bool show_playhead, ImVec2 size, ImU32 colour) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  if (!ImGui::IsRectVisible(size)) {  // scrolled away: draw nothing, so cost follows what is seen
    ImGui::Dummy(size);
    return;
  }
  ImGui::Dummy(size);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float label_w = 150.0f;
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), colours::kLaneEven, 4.0f);
  const float left = p0.x + label_w, right = p0.x + size.x - 2, top = p0.y + 6, bottom = p0.y + size.y - 6;
  // Same time scale as the timeline above; only the left edge differs.
  TimeAxis axis = timeline_axis;
  axis.t0_ns = timeline_axis.time_at(left);
  axis.x0_px = left;

  const double top_value = std::max(1.0, std::max(capacity, static_cast<double>(s.max_value())) * 1.05);
  auto y_of = [&](double v) { return bottom - static_cast<float>(v / top_value) * (bottom - top); };
  dl->AddText(ImVec2(p0.x + 8, p0.y + 6), colours::kText, title);
  char buf[64];
  std::snprintf(buf, sizeof buf, "max %lld", static_cast<long long>(s.max_value()));
  dl->AddText(ImVec2(p0.x + 8, p0.y + 6 + ImGui::GetTextLineHeight()), colours::kDimText, buf);
  if (capacity > 0) {
    dl->AddLine(ImVec2(left, y_of(capacity)), ImVec2(right, y_of(capacity)), IM_COL32(230, 110, 120, 160));
  }
  dl->AddLine(ImVec2(left, bottom), ImVec2(right, bottom), colours::kGrid);

  constexpr float kCol = 2.0f;
  const int cols = static_cast<int>((right - left) / kCol);
  const auto c = s.columns(axis.t0_ns, axis.ns_per_px * kCol, cols);
  const ImU32 band = (colour & 0x00FFFFFFu) | (90u << 24);
  for (int i = 0; i < cols; ++i) {
    const double t = axis.t0_ns + axis.ns_per_px * kCol * (i + 0.5);
    if (t < static_cast<double>(s.begin_ns())) continue;
    const float x = left + kCol * static_cast<float>(i);
    const auto& col = c[static_cast<std::size_t>(i)];
    dl->AddRectFilled(ImVec2(x, y_of(static_cast<double>(col.max))), ImVec2(x + kCol, bottom), band);
    dl->AddRectFilled(ImVec2(x, y_of(col.mean)), ImVec2(x + kCol, bottom), colour);
  }
  if (show_playhead) {
    const float x = static_cast<float>(axis.x(playhead_ns));
    if (x >= left && x <= right) {
      dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), colours::kPlayhead, 2.0f);
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(s.value_at(playhead_ns)));
      dl->AddText(ImVec2(x + 4, top), colours::kPlayhead, buf);
    }
  }
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && m.x >= left && m.x < right) {
    const double t = axis.time_at(m.x);
    ImGui::SetTooltip("%s at %s: %lld", title, format_time(t - origin_ns).c_str(),
                      static_cast<long long>(s.value_at(t)));
  }
}

}  // namespace

void draw_occupancy(const TraceModel& model, ViewState& vs, const ReplayState& state, ImVec2 size) {
  if (vs.fit_pending) {  // the timeline has not been shown yet: fit here, with the same margins
    const TimeSpan fit = fit_span(model);
    vs.axis = TimeAxis::fit(fit.begin_ns, fit.end_ns, ImGui::GetCursorScreenPos().x + 150.0f, size.x - 152.0f);
    vs.fit_pending = false;
  }
  if (vs.pending_range) {
    vs.axis = TimeAxis::fit(vs.pending_range->begin_ns, vs.pending_range->end_ns, ImGui::GetCursorScreenPos().x + 150.0f,
                            size.x - 152.0f);
    vs.pending_range.reset();
  }
  const std::size_t plots = model.queues().size() + model.devices().size();
  const float h = std::clamp((size.y - ImGui::GetTextLineHeightWithSpacing() * 2) / static_cast<float>(std::max<std::size_t>(plots, 1)) -
                                 ImGui::GetStyle().ItemSpacing.y,
                             70.0f, 170.0f);
  ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "Same time range as the timeline (zoom there); band: max in each pixel, solid: mean.%s%s",
                     model.omitted().empty() ? "" : "  ", model.omitted().c_str());
  ImGui::BeginChild("occupancy", ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing()), false);
  const float w = ImGui::GetContentRegionAvail().x;
  const double playhead = state.time_ns;
  for (std::size_t i = 0; i < model.queues().size(); ++i) {
    const QueueSeries& q = model.queues()[i];
    series_plot(q.label.c_str(), q.level, 0.0, vs.axis, run_span(model).begin_ns, playhead, vs.playhead.active, ImVec2(w, h),
                q.source == QueueSeries::Source::Pool ? colours::kHost : colours::kBar);
  }
  if (model.queues().empty()) {
    ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "This trace records no queue levels (policy %s).",
                       display_label(model.trace().meta.policy).c_str());
  }
  for (const DeviceGroup& dev : model.devices()) {
    if (!dev.busy) continue;
    const std::string title = dev.label.substr(0, dev.label.find(':')) + " busy workers";
    series_plot(title.c_str(), *dev.busy, static_cast<double>(dev.workers), vs.axis, run_span(model).begin_ns, playhead, vs.playhead.active, ImVec2(w, h),
                colours::kBusy);
  }
  ImGui::EndChild();
}

}  // namespace gpulb::viewer
