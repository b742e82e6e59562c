// The views, one file each (Tracy's TracyView_*.cpp). Each draws into the current ImGui window
// from a TraceModel it does not own, plus the shared ViewState.
#pragma once

#include <imgui.h>

#include <functional>

#include <optional>

#include "findings.hpp"
#include "gpulb/builtin/lesson_series.hpp"
#include "gpulb/builtin/lesson_verdict.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "moments.hpp"
#include "replay.hpp"
#include "trace_model.hpp"
#include "view_state.hpp"

namespace gpulb::viewer {

// timeline_view.cpp. Draws toolbar, ruler and lanes in `size`. `axis` may be shared (compare).
struct TimelineOptions {
  const char* id = "timeline";
  bool toolbar = true;            // fit / colour / legend row
  const char* caption = nullptr;  // a title above the lanes (compare)
  std::optional<double>
      origin_ns;  // where the ruler counts from (compare: the launch); else the run's start
  float label_width = 0.0f;
  bool counters = true;  // counter tracks under the lanes (compare: off, for room)
  bool keys = true;  // W/A/S/D, M, N, Ctrl+F and Esc (compare: off; both panels would take them)
  int run = 0;  // which run a click picks a task of: 0 trace A, 1 trace B (compare's lower panel)
  // the playhead and the selection are on A's clock: B's panel draws them this much later (compare)
  double playhead_shift_ns = 0.0;
};
void draw_timeline(const TraceModel& model, ViewState& vs, TimelineState& ts, TimeAxis& axis,
                   ImVec2 size, const TimelineOptions& options);
// Fit, find, fold, zoom to selection, (counters,) colour mode and legend: what draw_timeline puts
// above its lanes with `toolbar`; compare draws it once above both panels, its search then
// covering trace B (b, with B's panel state ts_b) too. Returns true or false where Fold SMs or
// Unfold SMs was pressed (compare folds B as well).
std::optional<bool> draw_timeline_toolbar(const TraceModel& model, ViewState& vs, TimelineState& ts,
                                          bool counters, const TraceModel* b = nullptr,
                                          TimelineState* ts_b = nullptr);
// The legend for the current colour mode (kinds present, or the duration scale).
void draw_legend(const TraceModel& model, ColourMode mode);

// histograms_view.cpp: load per worker, SM and device, and task durations, at the playhead.
void draw_histograms(const TraceModel& model, const ReplayState& state, ImVec2 size);

// occupancy_view.cpp: queue levels and busy workers over the timeline's time range.
void draw_occupancy(const TraceModel& model, ViewState& vs, const ReplayState& state, ImVec2 size);

// summary_view.cpp: the run's figures. Compact for the side panel, full for the Summary tab.
void draw_summary(const TraceModel& model, bool compact);
float summary_name_width(bool compact);  // the table's name column

// selection_view.cpp: statistics of the selected range per GPU and SM, a table to copy.
void draw_selection_stats(const TraceModel& model, ViewState& vs, ImVec2 size);

// compare_view.cpp: two traces one above the other on one time scale, summaries side by side.
void draw_compare(const TraceModel& a, const TraceModel& b, ViewState& vs, ImVec2 size);
// What Compare shows while there is no trace B: how to get one.
void draw_compare_hint(ImVec2 size);
// Whether A and B ran one input, their scenario's own parameters told apart by the registry.
InputMatch compare_inputs(const TraceModel& a, const TraceModel& b);

// findings_view.cpp: trace A's findings (and B's, where chosen); a click zooms there.
void draw_findings(const TraceModel& a, const std::vector<Finding>& fa, const TraceModel* b,
                   const std::vector<Finding>* fb, ViewState& vs, ImVec2 size);

// What a finding's click does (and --finding N): zoom the timeline to it and select its range, or,
// with `compare`, zoom Compare there and select it (the finding of `model`, trace A or B; `a` is
// trace A, whose clock the selection keeps); switches to that view.
void show_finding(const TraceModel& a, const TraceModel& model, const Finding& f, bool compare,
                  ViewState& vs);

// lesson_view.cpp: a lesson's text and its two traces' figures (the side panel, in lesson mode).
// a and b: the lesson's traces where they are A and B now, else null. verdict_on_recording: the
// lesson's verdict is its recording's, so the traces' figures are the evidence, not the verdict's.
void draw_lesson(const builtin::Lesson& lesson, const TraceModel* a, const TraceModel* b,
                 const std::vector<Finding>* findings_a, const std::vector<Finding>* findings_b,
                 bool verdict_on_recording, ViewState& vs);
// Whether two traces hold one input, the lesson's own contrast (P0 against P4) left out.
InputMatch lesson_inputs(const builtin::Lesson& lesson, const TraceModel& a, const TraceModel& b);
// The verdict the Lesson view shows: on the recording at the claim's value where `shipped` (A and
// B the lesson's shipped traces) and the recording is here, else on A and B.
builtin::LessonVerdict shown_verdict(const builtin::Lesson& lesson, const TraceModel& a,
                                     const TraceModel& b, bool shipped);
bool measured_on_recording(const builtin::LessonVerdict& v);

// lesson_figure_view.cpp: the Lesson view, the lesson on one screen: verdict, key figure, claim,
// its look-here steps and buttons to the evidence. a and b: the lesson's two runs (b null until
// both are open), with their findings. run_controls: the key parameter's field and "Run both on
// this CPU" (the App's), drawn in its footer. shipped: A and B are the lesson's shipped traces, so
// its verdict is measured where its claim is (its recording's claim value); otherwise on A and B.
void draw_lesson_figure(const builtin::Lesson& lesson, const TraceModel& a, const TraceModel* b,
                        const std::vector<Finding>& findings_a,
                        const std::vector<Finding>* findings_b, ViewState& vs, ImVec2 size,
                        const std::function<void()>& run_controls = {}, bool shipped = false);
// A lesson's two runs and their findings, as its steps find their moments in them.
struct LessonTraces {
  const TraceModel& a;
  const TraceModel& b;
  const std::vector<Finding>& findings_a;
  const std::vector<Finding>& findings_b;
};
// Compare zoomed to a moment (moments.hpp) of `side` (A or B), the moment selected.
void show_moment(const TraceModel& a, const TraceModel& side, const MomentRange& m, ViewState& vs);
// The lesson's step `index` (0 = its first) as a click on its button does; "" where it did, else why not.
std::string show_lesson_step(const builtin::Lesson& lesson, const LessonTraces& t,
                             std::size_t index, ViewState& vs);
// The lesson's series recording, read once (a shipped file); null where it has none or it is not here.
const builtin::SeriesRecording* lesson_recording(const builtin::Lesson& lesson);
// The key figure of a lesson with a series (lesson_series_view.cpp), in `size`; false where the
// lesson has none or its recording is not here (a line says so).
bool draw_lesson_series(const builtin::Lesson& lesson, ImVec2 size);
// The key figure of a lesson drawn from its two traces (lesson_trace_figure_view.cpp); false where
// the lesson has none.
bool draw_lesson_trace_figure(const builtin::Lesson& lesson, const TraceModel& a,
                              const TraceModel& b, ImVec2 size);
void draw_lesson_hint(ImVec2 size);

// replay_bar.cpp: play/pause, speed and scrubbing over `span` (the view's: run_span, or in Compare
// compare_replay_span), its times counted from the span's start as the view's ruler counts them.
// Advances the playhead by dt seconds.
void draw_replay_bar(const TimeSpan& span, Playhead& playhead, float dt_s);
// Where the views take their state from: the playhead when replay is on, else the end of the run.
double effective_playhead(const TraceModel& model, const Playhead& playhead);

}  // namespace gpulb::viewer
