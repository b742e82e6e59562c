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

// One process per device ("GPU 0: NVIDIA H100 ...", "CPU (8 threads)"), one named thread per
// track; X events for tasks (args: task id, kind), C counters for queue levels, i instants for
// failed dequeues and steals with their arguments by name; timestamps in microseconds with
// nanosecond digits.
void write_chrome_json(std::ostream& out, const Trace& trace, TimeRange range = {});

// Perfetto's Trace protobuf (export_perfetto.cpp): tracks nested rank -> device -> SM -> worker,
// task slices, markers as instants with named arguments, steals as flows from the victim to the
// thief, queue and host pool levels as counter tracks. Timestamps are the trace's, in ns.
void write_perfetto(std::ostream& out, const Trace& trace, TimeRange range = {});

// Tasks: "device,worker,sm,task_id,kind,start_ns,end_ns,duration_ns", one row per task.
void write_tasks_csv(std::ostream& out, const Trace& trace, TimeRange range = {});
// Workers: "device,worker,sm,name,tasks,busy_ns,failed_dequeues,steals,dropped_events".
void write_workers_csv(std::ostream& out, const Trace& trace);

enum class ExportFormat { Chrome, Csv, Perfetto };
// The files an export to `path` writes. For CSV, `path` receives the tasks and
// "<stem>.workers.csv" beside it the per-worker summary.
std::vector<std::filesystem::path> export_paths(ExportFormat format, const std::filesystem::path& path);
// Writes each file through a temporary file and a rename (safe_write.hpp); throws WriteError, or
// OutputPathError for a path that must not be written, naming the path. Returns the files written.
std::vector<std::filesystem::path> export_trace(const Trace& trace, ExportFormat format,
                                                const std::filesystem::path& path, TimeRange range = {});

}  // namespace gpulb::trace
