// The timeline's tools beyond zoom and pan: keys (W/S zoom, A/D pan, M mark, Ctrl+F search, Esc),
// marks, the search field, picking a task and revealing one (zoom to it, open its group, scroll).
#pragma once

#include <imgui.h>

#include "timeline_layout.hpp"
#include "trace_model.hpp"
#include "view_state.hpp"

namespace gpulb::viewer {

// Keys, for the main timeline while no text field has the keyboard.
void timeline_keys(ViewState& vs, TimelineState& ts, TimeAxis& axis, float left, float right);

// Runs the query in ts.search (parse_task_query) over trace A and, in compare, trace B too: picks
// and reveals the first match (in ts, or in ts_b for one of B), or the next one where the same
// query ran before. At most kMaxFound matches of each run are kept.
inline constexpr std::size_t kMaxFound = 100'000;
void search_tasks(const TraceModel& a, const TraceModel* b, ViewState& vs, TimelineState& ts,
                  TimelineState* ts_b = nullptr);
// Forgets the query's results (another trace, Esc).
void clear_search(TimelineState& ts);

// The search field and its result count (the toolbar's); Enter searches, Enter again goes on.
void draw_search_bar(const TraceModel& a, const TraceModel* b, ViewState& vs, TimelineState& ts,
                     TimelineState* ts_b);

// Zooms to ts.reveal (where the task is off screen or too narrow to see) and opens its group;
// call before the layout. Then scroll_to_revealed, after it.
void begin_reveal(const TraceModel& model, TimelineState& ts, TimeAxis& axis, float left,
                  float right);
void scroll_to_revealed(TimelineState& ts, const TimelineLayout& layout, float view_h);

void draw_marks(ImDrawList* dl, const ViewState& vs, const TimeAxis& axis, float left, float right,
                float top, float bottom);
// A frame around the picked task where it is of this panel's run and its lane is on screen.
void draw_picked(ImDrawList* dl, const TraceModel& model, int run, const ViewState& vs,
                 const TimelineLayout& layout, const TimeAxis& axis, float y_base, float left,
                 float right);

// The side panel's "Task" section: the picked task's details (`model`: the trace it is of).
void draw_task_details(const TraceModel& model, ViewState& vs);

}  // namespace gpulb::viewer
