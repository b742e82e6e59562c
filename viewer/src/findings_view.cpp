// Findings: the facts of a trace a teacher would point at (findings.hpp computes them once on
// load). A click zooms there: the timeline for trace A alone, both compare panels where a trace B
// is chosen (times then count from each run's first launch).
#include <string>

#include <algorithm>

#include "display_text.hpp"
#include "draw.hpp"
#include "findings.hpp"
#include "run_span.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

ImVec4 severity_colour(Severity s) {
  return s == Severity::Warning ? ImVec4(1.0f, 0.62f, 0.35f, 1) : ImVec4(0.55f, 0.75f, 1.0f, 1);
}

// The run at a glance: busy workers over time (all devices), and under it each finding's range as
// a band in its colour, in the list's order.
void run_strip(const TraceModel& model, const std::vector<Finding>& findings, float width) {
  const TimeSpan run = run_span(model);
  const int cols = std::max(1, static_cast<int>(width));
  if (!(run.end_ns > run.begin_ns)) return;
  const double col_ns = (run.end_ns - run.begin_ns) / cols;
  std::vector<double> busy(static_cast<std::size_t>(cols), 0.0);
  for (const DeviceGroup& d : model.devices()) {
    if (!d.busy) continue;
    const auto c = d.busy->columns(run.begin_ns, col_ns, cols, false);
    for (int i = 0; i < cols; ++i)
      busy[static_cast<std::size_t>(i)] += c[static_cast<std::size_t>(i)].mean;
  }
  const double peak = std::max(1.0, *std::max_element(busy.begin(), busy.end()));
  constexpr float kStripH = 44.0f, kBandH = 4.0f, kGap = 2.0f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  dl->AddRectFilled(p, ImVec2(p.x + cols, p.y + kStripH), colours::kLaneEven);
  for (int i = 0; i < cols; ++i) {
    const float h = static_cast<float>(busy[static_cast<std::size_t>(i)] / peak) * (kStripH - 2.0f);
    if (h > 0.0f)
      dl->AddRectFilled(ImVec2(p.x + i, p.y + kStripH - h), ImVec2(p.x + i + 1, p.y + kStripH),
                        colours::kBusy);
  }
  float y = p.y + kStripH + kGap;
  for (const Finding& f : findings) {
    const float x0 = p.x + static_cast<float>(std::clamp((f.begin_ns - run.begin_ns) / col_ns, 0.0,
                                                         static_cast<double>(cols)));
    const float x1 = p.x + static_cast<float>(std::clamp((f.end_ns - run.begin_ns) / col_ns, 0.0,
                                                         static_cast<double>(cols)));
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(std::max(x1, x0 + 2.0f), y + kBandH),
                      ImGui::ColorConvertFloat4ToU32(severity_colour(f.severity)));
    y += kBandH + kGap;
  }
  ImGui::Dummy(ImVec2(static_cast<float>(cols), y - p.y));
  ImGui::TextDisabled(
      "busy workers over the run (green), each finding's range below it, in the list's order");
}

void list(const char* id, const char* caption, const TraceModel& a, const TraceModel& model,
          const std::vector<Finding>& findings, bool compare, ViewState& vs) {
  ImGui::TextColored(ImVec4(0.86f, 0.87f, 0.9f, 1), "%s", caption);
  run_strip(model, findings, ImGui::GetContentRegionAvail().x);
  if (findings.empty()) {
    ImGui::TextDisabled(
        "  Nothing stands out: no long tail, no idle SM, no gap, no starved queue.");
    return;
  }
  const double origin = run_span(model).begin_ns;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    ImGui::PushID(id);
    ImGui::PushID(static_cast<int>(i));
    ImGui::TextColored(severity_colour(f.severity), "%-13s", finding_kind_name(f.kind));
    ImGui::SameLine();
    const std::string when =
        format_time(f.begin_ns - origin) + " .. " + format_time(f.end_ns - origin);
    if (ImGui::SmallButton(when.c_str())) show_finding(a, model, f, compare, vs);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Zoom the %s there", compare ? "compare view" : "timeline");
    ImGui::SameLine();
    text_wrapped(display_text(f.text));
    ImGui::PopID();
    ImGui::PopID();
  }
}

}  // namespace

void show_finding(const TraceModel& a, const TraceModel& model, const Finding& f, bool compare,
                  ViewState& vs) {
  const TimeSpan r = finding_view_range(model, f);
  if (compare) {  // Compare counts from each run's first launch
    show_moment(a, model, MomentRange{{f.begin_ns, f.end_ns}, r}, vs);
  } else {
    vs.pending_range = Selection{r.begin_ns, r.end_ns};
    vs.selection = Selection{f.begin_ns, f.end_ns};
    vs.switch_view = "timeline";
  }
}

void draw_findings(const TraceModel& a, const std::vector<Finding>& fa, const TraceModel* b,
                   const std::vector<Finding>* fb, ViewState& vs, ImVec2 size) {
  ImGui::BeginChild("findings view", size, false);
  ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1),
                     "What the trace shows, from its events alone. Orange: costs a visible share "
                     "of the run. Click a time "
                     "to zoom there. Times count from the run's start.");
  ImGui::Spacing();
  const bool compare = b && fb;
  list("a", compare ? "Trace A" : "This trace", a, a, fa, compare, vs);
  if (compare) {
    ImGui::Spacing();
    ImGui::Separator();
    list("b", "Trace B", a, *b, *fb, true, vs);
  }
  ImGui::EndChild();
}

}  // namespace gpulb::viewer
