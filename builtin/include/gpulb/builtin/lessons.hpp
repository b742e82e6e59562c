// The lessons: each seed paper's headline claim as two runs side by side.
// `gpulb lesson list|run NAME` and `gpulb-viewer --lesson NAME` read this one table.
//
// It lives in builtin/ because a lesson names scenarios and policies (its CPU recipe), which
// nothing below the composition root may do (docs/architecture.md), and because both front ends
// may include builtin/ while neither may include the other.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpulb/run.hpp"

namespace gpulb::builtin {

// One side of a lesson: a shipped real GPU trace, and how to make a comparable run on the CPU.
struct LessonRun {
  std::string_view label;  // what this side is: "hardware block scheduler"
  std::string_view trace;  // a file in the shipped traces folder (scenarios/traces)
  // The CPU recipe: scenario, policy and "name=value" parameters; empty scenario where the policy
  // or variant needs a GPU (the lesson then has the traces only).
  std::string_view scenario;
  std::string_view policy;
  std::vector<std::string_view> params;
};

// A quantity a claim is about, how it is read from a trace, and what the claim needs of it.
enum class Quantity {
  Makespan,          // the run's time
  PeakTaskSlots,     // task slots the run needed (the policy's metric peak_task_slots)
  TasksPerSmMaxMin,  // tasks on the busiest SM over the idlest (Grossman's balance)
  DeviceBusyMaxMin,  // busy time of the busiest GPU over the idlest (Chen's balance between GPUs)
};
enum class Expectation {
  BBelowA,       // B's value under A's
  ABelowB,       // A's value under B's
  AtMost,        // both sides at most `bound`
  AAtMost,       // A at most `bound`, B the reference beside it (a policy without the mechanism)
  BOverAAtMost,  // B's value over A's at most `bound` (a run with less work against the full one)
  AOverBAtMost,  // A's value over B's at most `bound` (A shorter by at least the paper's margin)
};
struct ClaimQuantity {
  Quantity quantity;
  Expectation expectation;
  double bound = 0.0;      // AtMost's limit
  std::string_view paper;  // the paper's figure for it: "2x faster at 7 moves of lookahead"
};

// How a lesson's series (lesson_series.hpp) is drawn as its key figure.
enum class SeriesFigure {
  ShareOfFirst,  // each side's time as a share of its own time at the first value, beside the work left (Chen Figure 7)
  TimeAndSlots,  // time and peak task slots, both sides, at each value (Mohan Figures 6 and 7)
  GpuScaling,  // speedup over A's one-GPU time against GPUs, and busy time per GPU at the most (Chen Figures 9 and 10)
  Time,  // both sides' time at each value, with B's ideal where B does a known share of A's work
};

// A figure the paper states at one value of a series, in the key figure's own units (a share of
// P0's time, task slots), drawn as an outline beside today's bar.
struct PaperMark {
  std::string_view value;     // "P4", "7"
  double a = -1.0, b = -1.0;  // negative: the paper gives none for that side
  bool slots = false;         // TimeAndSlots: a figure of the slots chart, not the time chart
};

// The claim at several values of one recipe parameter, recorded by `gpulb lesson record`.
struct LessonSeries {
  std::string_view parameter;  // "pattern", "lookahead", or "gpus" (a run's GPU count)
  std::vector<std::string_view> values;
  std::vector<std::string_view>
      record_params;  // the recording's sizes on top of the recipe: "blocks=100000"
  SeriesFigure figure = SeriesFigure::ShareOfFirst;
  std::string_view recording;  // the shipped recording: "chen-fig7-h100.json" in scenarios/lessons
  bool traced = false;         // the figure needs events (busy time per GPU)
  std::vector<PaperMark> paper_marks;
  // The value the claim names (the paper's lookahead 7, a tree as big as T1): the verdict is
  // measured there, on the recording, where it is here; empty: on the two traces.
  std::string_view verdict_at;
};

// A key figure drawn from the lesson's two traces themselves, for a lesson without a series.
enum class TraceFigure {
  None,
  TasksPerSm,  // tasks each SM ran, A above B, with the busiest over the idlest (Grossman Figure 3)
  Launches,    // the host's launches over the run, their sizes and reasons, A above B (G-Charm)
};

// A "look here" step: a button that opens Compare on a moment of one run, selected. The moment is
// found in that trace by the viewer (viewer/model/moments.hpp), not written here as a time, so a
// step lands on it in any recording of the lesson's runs.
struct LessonStep {
  std::string_view label;   // the button: "B: the host's batches arriving"
  int side = 0;             // 0: trace A, 1: trace B
  std::string_view moment;  // "run", "spread", "tail", "batches", "launches", "steals"
};

struct Lesson {
  std::string_view name;   // `--lesson NAME`: "chen-fig7"
  std::string_view title;  // one line
  std::string_view paper;  // the paper and where in it: "Chen et al., IPDPS 2010, Figure 7"
  std::string_view claim;  // what the paper says
  LessonRun a, b;
  std::string_view look_for;  // what to look at in the two timelines
  std::string_view
      today;  // what today's hardware shows (measured: docs/benchmarks.md, docs/papers.md)
  std::vector<ClaimQuantity> quantities;  // what the verdict measures (lesson_verdict.hpp)
  std::string_view
      key_parameter;  // the recipe's parameter a reader may vary ("lookahead"); empty: none
  std::optional<LessonSeries> series;  // the key figure's series; none: the two traces' bars alone
  TraceFigure trace_figure = TraceFigure::None;
  std::vector<LessonStep> steps;  // what look_for points at, each a button
};

std::span<const Lesson> lessons();

// nullptr for a name that is no lesson.
const Lesson* find_lesson(std::string_view name);

// "  chen-fig7       Chen et al. Figure 7: ...\n" for each lesson: `lesson list` and the message
// for a bad name.
std::string lessons_help();

// Where the shipped traces are: share/gpulb/traces beside the running program's bin/, the install
// prefix's copy, then the source tree. The first that holds `file`; nullopt where none does.
std::optional<std::filesystem::path> find_shipped_trace(std::string_view file);
std::vector<std::filesystem::path> shipped_trace_dirs();
// The same places' lessons folders (share/gpulb/lessons, scenarios/lessons): the series recordings.
std::vector<std::filesystem::path> shipped_lesson_dirs();

// The RunConfig of a side's recipe on `backend` (traced), its parameters overridden by `overrides`
// (a lesson's key parameter, e.g. lookahead=5); nullopt where the side has no recipe.
std::optional<RunConfig> lesson_recipe(const LessonRun& run, Backend backend = Backend::Cpu,
                                       const ParamMap& overrides = {});
inline std::optional<RunConfig> cpu_recipe(const LessonRun& run) { return lesson_recipe(run); }

// "name=value" entries (a recipe's params, a series' record_params) as a ParamMap.
ParamMap param_list(const std::vector<std::string_view>& name_values);

// The recipe's value of one parameter ("5" for lookahead=5); "" where the recipe does not set it.
std::string recipe_value(const LessonRun& run, std::string_view name);

// The recipe as a command line: "gpulb run patterns --backend cpu --policy hardware --param ...".
std::string recipe_command(const LessonRun& run, Backend backend = Backend::Cpu,
                           const ParamMap& overrides = {});

}  // namespace gpulb::builtin
