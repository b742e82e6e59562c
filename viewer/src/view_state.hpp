// State the views share and keep between frames (not data: the data is in the TraceModel).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "counter_tracks.hpp"
#include "heat_scale.hpp"
#include "rank_transfers.hpp"
#include "task_details.hpp"
#include "time_axis.hpp"

namespace gpulb::viewer {

enum class ColourMode { ByKind, ByDuration };

struct RangeStats;  // range_stats.hpp
// The selection's statistics, kept until the selection or the trace changes (selection_view.cpp).
struct RangeStatsCache {
  const void* model = nullptr;
  double begin_ns = 0.0, end_ns = 0.0;
  std::shared_ptr<const RangeStats> stats;
  std::vector<std::size_t> order;  // of its SM rows, by the table's sort column
};

// A time interval chosen by the user: zoom to it, export it.
struct Selection {
  double begin_ns = 0.0, end_ns = 0.0;
};

// The folded rows' heat maps (heat_scale.hpp) of the last frame, by (device, group), kept while
// the frame's columns stay the same: a still view redraws them without recomputing them.
struct HeatRowCache {
  const void* model = nullptr;
  double view_col_ns = 0.0;  // the last frame's 3 px: another one now is a zoom in progress
  double origin_ns = 0.0, col_ns = 0.0;  // the rows' grid
  std::int64_t first = 0;
  int columns = 0;
  using Rows = std::map<std::pair<std::uint32_t, int>, HeatRow>;
  Rows rows;
};

// The counter tracks' column summaries (grid_columns) of the last frame, by series: a still frame
// redraws them, a pan computes the columns it uncovers.
struct SeriesColumnsCache {
  std::map<const StepSeries*, GridColumns> series;
};

// One timeline's own state; compare draws two of them against one shared TimeAxis.
struct TimelineState {
  std::map<std::uint64_t, bool> collapsed;  // fold key -> folded (timeline_layout.hpp)
  bool unfold = false;                      // --unfold: open with every SM group unfolded
  bool auto_fold = true;   // groups open when zoomed in to see tasks, until folded by hand
  bool counters = true;    // counter tracks under the lanes
  float label_w = 150.0f;  // label_column_width of the trace it was measured for
  const void* label_w_model = nullptr;
  float scroll_y = 0.0f;
  bool defaults_set = false;
  // Search (timeline_tools.cpp): the query as typed, what it found, which one is shown.
  char search[48] = "";
  std::string searched;        // the query `found` answers
  std::vector<RunTask> found;  // compare's search: A's matches, then B's
  bool found_capped = false;   // a run had kMaxFound matches or more
  int found_at = -1;
  std::string search_note;
  bool focus_search = false;      // Ctrl+F: put the cursor in the search field
  std::optional<TaskRef> reveal;  // zoom and scroll to this task on the next frame
  // Chunks moved between ranks (rank_transfers.hpp), paired once per trace, with the lanes of
  // their two host tracks (-1: the track has no lane).
  const void* transfers_model = nullptr;
  std::vector<RankTransfer> transfers;
  std::vector<std::pair<int, int>> transfer_lanes;
  HeatRowCache heat;
  SeriesColumnsCache counter_columns;
};

// The replay playhead, shared by every view.
struct Playhead {
  double time_ns = 0.0;
  bool active = false;  // off: the views show the whole run (the playhead sits at the end)
  bool playing = false;
  float speed = 1.0f;  // 1: the whole run plays in 10 s
};

struct ViewState {
  TimeAxis axis;            // the time shown by the timeline and the occupancy plots
  bool fit_pending = true;  // fit the axis to the trace on the next frame (needs the view's width)
  std::optional<Selection> pending_range;  // --range: applied once the view's width is known
  ColourMode colour = ColourMode::ByKind;
  // the counter tracks' and occupancy plots' scales
  CounterScale counter_scale = CounterScale::Shared;
  std::optional<Selection> selection;
  TimelineState timeline, compare_a, compare_b;
  TimeAxis compare_axis;  // compare: time since each run's first kernel launch
  std::optional<Selection>
      compare_range;  // --range in compare (times since the launches), applied once
  bool compare_fit_pending = true;
  Playhead playhead;
  RangeStatsCache range_cache;
  std::optional<RunTask>
      picked;  // the task clicked (of trace A, or of compare's B): its details in the side panel
  std::vector<double> marks;  // times marked with M (trace clock)
  std::string
      switch_view;  // a view asks for another (a finding's click): its --view name, served after the frame's panel
};

}  // namespace gpulb::viewer
