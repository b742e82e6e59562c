// A lesson's series: its claim measured at several values of one parameter (the patterns P0-P4,
// the lookaheads 4-7, 1, 2 and 4 GPUs), both sides at each, as the paper's own figure does. A
// recording is a small JSON file made by `gpulb lesson record NAME` on the machine it describes
// (the shipped ones on an H100 or several GPUs: scenarios/lessons/); the viewer's key figure and
// `gpulb lesson show --json` read it through this one model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpulb/builtin/lessons.hpp"

namespace gpulb::builtin {

// One run of one side at one value.
struct SeriesRun {
  double makespan_ns = 0.0;
  std::map<std::string, std::uint64_t> metrics;  // the policy's (peak_task_slots, launches, ...)
  std::vector<double> device_busy_ns;            // per GPU, mean over its workers; traced runs only
};

// Every run of one side at one value; the figure reads the median run.
struct SeriesCell {
  std::vector<SeriesRun> runs;
  // The run with the median makespan (the lower middle one of an even count); nullptr when empty.
  const SeriesRun* median() const;
};

struct SeriesPoint {
  std::string value;  // the parameter's value: "P4", "7", "4"
  SeriesCell a, b;
};

struct SeriesRecording {
  std::string lesson, parameter;
  std::string recorded;  // the date, "2026-11-28"
  std::string device;    // "NVIDIA H100 80GB HBM3", "4 x NVIDIA H200"
  std::string gpulb;     // the version that recorded it
  std::string command;   // how to record it again
  int repeats = 1;
  bool traced = false;
  std::vector<SeriesPoint> points;
};

// Thrown for a recording that cannot be read or is not one: names the file and what is wrong.
struct SeriesError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string series_to_json(const SeriesRecording& recording);
SeriesRecording series_from_json(const std::string& text, const std::string& source);
SeriesRecording read_series(const std::filesystem::path& file);
// Writes whole or not at all (trace::AtomicWrite).
void write_series(const std::filesystem::path& file, const SeriesRecording& recording);

// The lesson's shipped recording (found as its traces are: shipped_trace_dirs() and the lessons
// folder beside them); nullopt where the lesson has no series or its file is not here.
std::optional<std::filesystem::path> find_series_recording(const Lesson& lesson);

// Runs the lesson's series: at each value, both sides `repeats` times in turn (A, B, A, B, ...),
// traced only where the figure needs events. `progress(done, total)` after each run.
// Throws ConfigError where the lesson has no series or a side has no recipe.
SeriesRecording record_series(const Lesson& lesson, Backend backend, int repeats,
                              const std::function<void(int, int)>& progress = {});

// What the key figure draws, computed from a recording: one row a value.
struct SeriesFigureRow {
  std::string value;
  std::optional<double> a, b;  // the figure's quantity (see SeriesFigure): time, share, speedup
  std::optional<double> a_slots, b_slots;  // TimeAndSlots: peak task slots
  std::optional<double> ideal;  // ShareOfFirst: the work left; GpuScaling: linear speedup
  std::optional<double> paper_a, paper_b, paper_a_slots,
      paper_b_slots;  // the paper's figures (PaperMark)
};
struct SeriesFigureData {
  SeriesFigure figure;
  std::string quantity;  // "runtime, share of P0's", "time", "speedup over A on 1 GPU"
  std::vector<SeriesFigureRow> rows;
  std::vector<double> a_device_busy_ns, b_device_busy_ns;  // GpuScaling: the last point's, per GPU
  std::string measured;  // the series in one line: "P4: A 26.7% of P0, B 31.8% (ideal 25%)"
};
SeriesFigureData series_figure(const Lesson& lesson, const SeriesRecording& recording);

}  // namespace gpulb::builtin
