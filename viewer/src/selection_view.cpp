// The selection's statistics (range_stats.hpp): busy and idle share, tasks, steals and failed
// dequeues within the selected time range, for the run, each GPU and each SM, as a table that
// copies as tab-separated text.
#include <cstdio>
#include <string>

#include "range_stats.hpp"
#include "run_span.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

// Computed once per selection: a range over millions of failed dequeues is not a per-frame cost.
const RangeStats& stats_for(const TraceModel& model, ViewState& vs, const Selection& sel) {
  RangeStatsCache& c = vs.range_cache;
  if (!c.stats || c.model != &model || c.begin_ns != sel.begin_ns || c.end_ns != sel.end_ns) {
    c.stats = std::make_shared<const RangeStats>(range_stats(model, sel.begin_ns, sel.end_ns));
    c.order.clear();
    c.model = &model;
    c.begin_ns = sel.begin_ns;
    c.end_ns = sel.end_ns;
  }
  return *c.stats;
}

void stats_row(const RangeRow& r, bool strong) {
  ImGui::TableNextRow();
  const ImVec4 text = strong ? ImVec4(0.95f, 0.95f, 0.97f, 1) : ImVec4(0.8f, 0.81f, 0.85f, 1);
  ImGui::TableSetColumnIndex(0);
  ImGui::TextColored(text, "%s", r.label.c_str());
  ImGui::TableSetColumnIndex(1);
  ImGui::Text("%u", r.workers);
  ImGui::TableSetColumnIndex(2);
  // The busy share as a bar behind its figure: a column of SMs reads at a glance.
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(
      p, ImVec2(p.x + w * static_cast<float>(r.busy_pct() / 100.0), p.y + h),
      IM_COL32(90, 190, 130, 90));
  ImGui::Text("%.1f", r.busy_pct());
  ImGui::TableSetColumnIndex(3);
  ImGui::Text("%.1f", r.idle_pct());
  ImGui::TableSetColumnIndex(4);
  ImGui::Text("%llu", static_cast<unsigned long long>(r.tasks));
  ImGui::TableSetColumnIndex(5);
  ImGui::Text("%llu", static_cast<unsigned long long>(r.steals));
  ImGui::TableSetColumnIndex(6);
  ImGui::Text("%llu", static_cast<unsigned long long>(r.failed_steals));
  ImGui::TableSetColumnIndex(7);
  ImGui::Text("%llu", static_cast<unsigned long long>(r.failed_dequeues));
}

}  // namespace

void draw_selection_stats(const TraceModel& model, ViewState& vs, ImVec2 size) {
  ImGui::BeginChild("selection stats", size, false);
  // Without a selection: the whole run (first to last event), and how to choose a range.
  const Selection whole{static_cast<double>(model.begin_ns()),
                        static_cast<double>(model.end_ns()) + 1};
  const RangeStats& s = stats_for(model, vs, vs.selection.value_or(whole));
  const double origin = run_span(model).begin_ns;
  if (vs.selection) {
    ImGui::Text("Selection %s .. %s (%s)", format_time(s.begin_ns - origin).c_str(),
                format_time(s.end_ns - origin).c_str(), format_time(s.end_ns - s.begin_ns).c_str());
  } else {
    ImGui::Text(
        "The whole trace. Shift+drag or right-drag in the timeline (or --select START:END) for a "
        "range.");
  }
  ImGui::SameLine(0, 20);
  if (ImGui::Button("Copy table")) ImGui::SetClipboardText(range_stats_table(s, origin).c_str());
  ImGui::SameLine();
  ImGui::BeginDisabled(!vs.selection);
  if (ImGui::Button("Zoom to it")) vs.pending_range = vs.selection;
  ImGui::SameLine();
  if (ImGui::Button("Clear")) vs.selection.reset();
  ImGui::EndDisabled();
  ImGui::TextColored(
      ImVec4(0.6f, 0.62f, 0.67f, 1),
      "busy/idle: share of the workers' time alive within the range; tasks: begun within it; idle "
      "spells: failed\n"
      "dequeues that began one (a worker records the first failure of a spell, not every poll).");
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                     ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp |
                                     ImGuiTableFlags_Sortable;
  if (ImGui::BeginTable("range", 8, kFlags, ImGui::GetContentRegionAvail())) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* c : {"where", "workers", "busy %", "idle %", "tasks", "steals",
                          "failed steals", "idle spells"}) {
      ImGui::TableSetupColumn(c);
    }
    ImGui::TableHeadersRow();
    // The SM rows sort by the clicked column (the run's and the devices' stay on top); the order
    // is kept until the sort or the selection changes.
    RangeStatsCache& c = vs.range_cache;
    if (ImGuiTableSortSpecs* spec = ImGui::TableGetSortSpecs();
        spec && (spec->SpecsDirty || c.order.size() != s.groups.size())) {
      const bool any = spec->SpecsCount > 0;
      const auto column =
          any ? static_cast<RangeColumn>(spec->Specs[0].ColumnIndex) : RangeColumn::Where;
      c.order = range_order(s.groups, column,
                            !any || spec->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
      spec->SpecsDirty = false;
    }
    stats_row(s.all, true);
    for (const RangeRow& r : s.devices) stats_row(r, true);
    ImGuiListClipper clip;  // 264 SM rows on 2 GPUs: draw the visible ones
    clip.Begin(static_cast<int>(s.groups.size()));
    while (clip.Step()) {
      for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
        const std::size_t k = i < static_cast<int>(c.order.size())
                                  ? c.order[static_cast<std::size_t>(i)]
                                  : static_cast<std::size_t>(i);
        stats_row(s.groups[k], false);
      }
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
}

}  // namespace gpulb::viewer
