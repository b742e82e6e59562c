#include "panels.hpp"

#include <algorithm>

#include "replay.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

// Each row adapts the panel context to its view's own signature; the views stay callable on their
// own (compare draws two timelines, the side panel a compact summary).
const Panel kPanels[] = {
    {"Lesson", "lesson",
     "the open lesson on one screen: its verdict, key figure and claim, and the way to its "
     "evidence",
     [](const PanelContext& c) {
       if (c.lesson) {
         draw_lesson_figure(*c.lesson, c.model, c.compare, c.findings, c.compare_findings, c.vs,
                            c.size, c.lesson_run_controls, c.lesson_shipped);
       } else {
         draw_lesson_hint(c.size);
       }
     }},
    {"Timeline", "timeline",
     "a lane per worker under its SM and device (folded SMs as heat maps), tasks as zones, steals "
     "as arrows, counter tracks",
     [](const PanelContext& c) {
       draw_timeline(c.model, c.vs, c.vs.timeline, c.vs.axis, c.size, {});
     }},
    {"Histograms", "histograms", "tasks and busy time per worker, SM and device; task durations",
     [](const PanelContext& c) {
       draw_histograms(c.model, replay_state_at(c.model, c.playhead_ns), c.size);
     }},
    {"Occupancy", "occupancy", "queue levels and busy workers over time",
     [](const PanelContext& c) {
       draw_occupancy(c.model, c.vs, replay_state_at(c.model, c.playhead_ns), c.size);
     }},
    {"Selection", "selection",
     "the selected time range: busy/idle share, tasks, steals per GPU and SM (a table to copy)",
     [](const PanelContext& c) { draw_selection_stats(c.model, c.vs, c.size); }},
    {"Compare", "compare", "two traces one above the other on one time scale",
     [](const PanelContext& c) {
       if (c.compare) {
         draw_compare(c.model, *c.compare, c.vs, c.size);
       } else {
         draw_compare_hint(c.size);
       }
     }},
    {"Findings", "findings",
     "what the trace shows (a long tail, idle SMs, gaps, starved queues, steal victims); a click "
     "zooms there",
     [](const PanelContext& c) {
       draw_findings(c.model, c.findings, c.compare, c.compare_findings, c.vs, c.size);
     }},
    {"Summary", "summary", "the run's figures: makespan, efficiency, imbalance, steals",
     [](const PanelContext& c) {
       ImGui::BeginChild("summary view", c.size, false);
       draw_summary(c.model, false);
       ImGui::EndChild();
     }},
};

}  // namespace

std::span<const Panel> panels() { return kPanels; }

std::optional<std::size_t> find_panel(std::string_view cli_name) {
  for (std::size_t i = 0; i < std::size(kPanels); ++i) {
    if (cli_name == kPanels[i].cli_name) return i;
  }
  return std::nullopt;
}

std::vector<std::string> panel_cli_names() {
  std::vector<std::string> names;
  for (const Panel& p : kPanels) names.emplace_back(p.cli_name);
  return names;
}

std::string panels_help() {
  std::string out = "Views (--view NAME, also the window's tabs):\n";
  for (const Panel& p : kPanels) {
    std::string name = p.cli_name;
    name.resize(std::max<std::size_t>(name.size() + 2, 12), ' ');
    out += "  " + name + p.summary + "\n";
  }
  return out;
}

}  // namespace gpulb::viewer
