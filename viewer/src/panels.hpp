// The views the main window offers, in one table: the tab and View-menu title, the name `--view`
// takes, a line for `--help`, and how to draw it. Adding a view is its file plus one row in
// panels.cpp; the tabs, the menu, the command line and its help all read this table.
#pragma once

#include <imgui.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "findings.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "trace_model.hpp"
#include "view_state.hpp"

namespace gpulb::viewer {

// What a panel draws from. Views own no data (Tracy's rule): it all comes in here, each frame.
struct PanelContext {
  const TraceModel& model;
  const TraceModel* compare;             // trace B when one is chosen and differs from A, else null
  const std::vector<Finding>& findings;  // trace A's (computed on load)
  const std::vector<Finding>* compare_findings;  // trace B's, with compare
  ViewState& vs;
  double playhead_ns;  // effective_playhead: where histograms and occupancy take their state
  ImVec2 size;         // the panel's area, above the replay bar
  const builtin::Lesson* lesson = nullptr;  // the open lesson where A and B are its two runs
  std::function<void()>
      lesson_run_controls;  // its key parameter and "Run both on this CPU" (the App's)
  // A and B are the lesson's shipped traces (its verdict: at its recording's claim value)
  bool lesson_shipped = false;
};

struct Panel {
  const char* title;     // tab and View menu: "Timeline"
  const char* cli_name;  // `--view NAME`: "timeline"
  const char* summary;   // one line for `--help`
  void (*draw)(const PanelContext&);
};

std::span<const Panel> panels();

// The panel `--view NAME` means, as an index into panels(); nullopt for an unknown name.
std::optional<std::size_t> find_panel(std::string_view cli_name);

std::vector<std::string> panel_cli_names();

// A "Views" block for `--help`: one line per panel, its --view name and summary.
std::string panels_help();

}  // namespace gpulb::viewer
