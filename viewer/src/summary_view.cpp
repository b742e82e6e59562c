// The run's figures: what ran where, how long, how well balanced, and whether the result verified.
// Every figure comes from trace::compute_statistics, the implementation `gpulb info` prints.
#include <algorithm>
#include <cstdio>
#include <string>

#include "device_names.hpp"
#include "display_text.hpp"
#include "draw.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {


// Every value may hold trace strings: clipped before ImGui sees them (display_text.hpp).
void row(const char* name, const std::string& value, ImVec4 colour = ImVec4(0.86f, 0.87f, 0.9f, 1)) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "%s", name);
  ImGui::TableSetColumnIndex(1);
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::TextWrapped("%s", display_text(value).c_str());
  ImGui::PopStyleColor();
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

void draw_summary(const TraceModel& model, bool compact) {
  const trace::Trace& t = model.trace();
  const trace::TraceStatistics& st = model.stats();
  const ImVec4 good(0.45f, 0.85f, 0.55f, 1), bad(1.0f, 0.45f, 0.45f, 1);
  if (!ImGui::BeginTable("summary", 2, ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, compact ? 86.0f : 130.0f);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  // Device rows: a file can claim 100,000 devices; the side panel has room for a few.
  const std::size_t listed = compact ? 8 : 64;
  std::string params;  // each part clipped first: the row would keep only the first long one
  for (const auto& [k, v] : t.meta.parameters) params += (params.empty() ? "" : " ") + display_label(k) + "=" + display_label(v);
  row("scenario", display_label(t.meta.scenario) + (params.empty() ? "" : "  " + params));
  row("policy", t.meta.policy + " on " + t.meta.backend);
  for (std::size_t i = 0; i < std::min(t.devices.size(), listed); ++i) {
    row("device", device_line(t.devices[i]));
  }
  if (t.devices.size() > listed) row("", "(" + std::to_string(t.devices.size() - listed) + " more devices not listed)");
  if (!model.omitted().empty()) row("shown", model.omitted(), bad);
  row("makespan", format_time(static_cast<double>(st.makespan_ns)) + "   lower bound " + format_time(st.lower_bound_ns));
  row("", "(lower bound = total busy / workers: the makespan of a perfect balance)", ImVec4(0.6f, 0.62f, 0.67f, 1));
  row("efficiency", fmt("%.1f%%", 100.0 * st.efficiency));
  row("imbalance", fmt("%.3f max/mean busy", st.load.imbalance) + "  (min " + format_time(static_cast<double>(st.load.min_busy_ns)) +
                       ", max " + format_time(static_cast<double>(st.load.max_busy_ns)) + ")");
  row("tasks", std::to_string(st.tasks) + " on " + std::to_string(st.workers) + " workers");
  row("steals", std::to_string(st.steals) + " (" + std::to_string(st.failed_steals) + " failed)");
  row("idle polls", std::to_string(st.failed_dequeues) + " failed dequeues");
  row("events", std::to_string(st.events) + " recorded, " + std::to_string(st.dropped_events) + " dropped",
      st.dropped_events ? bad : ImVec4(0.86f, 0.87f, 0.9f, 1));
  // Three outcomes: verified, failed, or nothing compared the result (meta.checked false).
  const ImVec4 unchecked(0.95f, 0.75f, 0.3f, 1);
  // The verification text of an unchecked run already begins "not checked: ".
  const char* outcome = t.meta.verified ? "yes: " : (t.meta.checked ? "NO: " : "");
  row("verified", outcome + t.meta.verification, t.meta.verified ? good : (t.meta.checked ? bad : unchecked));
  if (!compact) {
    row("clock", t.meta.clock_source);
    row("recorded", t.meta.created_utc + " by gpulb " + t.meta.gpulb_version);
    for (std::size_t i = 0; i < std::min(st.per_device.size(), listed); ++i) {
      const trace::GroupStats& g = st.per_device[i];
      row(g.label.c_str(), std::to_string(g.tasks) + " tasks, busy " + format_time(static_cast<double>(g.busy_ns)) + " over " +
                               std::to_string(g.workers) + " workers");
    }
    if (!t.meta.result_json.empty() && t.meta.result_json != "{}") row("result", t.meta.result_json);
  }
  ImGui::EndTable();
}

}  // namespace gpulb::viewer
