// Exports of a trace for other tools: Perfetto's own protobuf format (Perfetto UI), Chrome Trace
// Event Format JSON (Perfetto UI, chrome://tracing) and CSV. Each can be limited to a time range
// [begin_ns, end_ns).
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <ostream>
#include <vector>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::trace {

struct TimeRange {
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = std::numeric_limits<std::uint64_t>::max();
  bool contains(std::uint64_t t) const { return t >= begin_ns && t < end_ns; }
  bool overlaps(std::uint64_t b, std::uint64_t e) const { return b < end_ns && e >= begin_ns; }
};

// Every export covers the export window (export_window.hpp: the run and the host work around it)
// cut to `range`, and counts time in ns from the window's start, the same clock in every format.

// One process per device ("GPU 0: NVIDIA H100 ...", "CPU (8 threads)"), one named thread per
// track; X events for tasks (args: task id, kind), C counters for queue levels, i instants for
// failed dequeues and steals with their arguments by name; timestamps in microseconds with
// nanosecond digits.
void write_chrome_json(std::ostream& out, const Trace& trace, TimeRange range = {});

// Perfetto's Trace protobuf (export_perfetto.cpp): tracks nested rank -> device -> SM -> worker,
// task slices, markers as instants with named arguments, steals as flows from the victim to the
// thief, queue and host pool levels, each device's busy workers and deque sum as counter tracks.
void write_perfetto(std::ostream& out, const Trace& trace, TimeRange range = {});

// The CSV tables (export_csv.cpp; docs/viewer.md documents every column). Tasks, one row each:
// "device,worker,sm,task_id,kind,start_ns,end_ns,duration_ns".
void write_tasks_csv(std::ostream& out, const Trace& trace, TimeRange range = {});
// Workers, a summary row each: "device,worker,sm,name,tasks,busy_ns,failed_dequeues,steals,dropped_events".
void write_workers_csv(std::ostream& out, const Trace& trace);
// Events, one row each for every event that is neither a task's edge nor a level (steals, failed
// dequeues and steals, spawns, launches, transfers, ...): where and when, the event's name, and a
// column for each argument name of event_arg_names, empty where the event has no such argument.
void write_events_csv(std::ostream& out, const Trace& trace, TimeRange range = {});
// Levels, one row per recorded level of a queue, a deque or the host pool:
// "device,worker,sm,role,time_ns,source,queue,owner,tasks,interpolated".
void write_levels_csv(std::ostream& out, const Trace& trace, TimeRange range = {});

enum class ExportFormat { Chrome, Csv, Perfetto };
// The files an export to `path` writes. For CSV, `path` receives the tasks and beside it go
// "<stem>.workers.csv", "<stem>.events.csv" and "<stem>.levels.csv". A CSV path already named as
// one of those ("run.events.csv") is refused with OutputPathError: it would hold the tasks.
std::vector<std::filesystem::path> export_paths(ExportFormat format,
                                                const std::filesystem::path& path);
// Writes each file through a temporary file and a rename (safe_write.hpp); throws WriteError, or
// OutputPathError for a path that must not be written, naming the path. Returns the files written.
std::vector<std::filesystem::path> export_trace(const Trace& trace, ExportFormat format,
                                                const std::filesystem::path& path,
                                                TimeRange range = {});

}  // namespace gpulb::trace
