// Statistics of a time range (the timeline's selection): per GPU and per SM, how busy and how idle
// the workers were within it, how many tasks began in it, steals and failed dequeues. Computed
// once per selection (not per frame) from the lanes' zones, idle spells and markers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace_model.hpp"

namespace gpulb::viewer {

struct RangeRow {
  std::string label;          // "all", "GPU 0", "GPU 0 SM 17", "CPU workers"
  std::uint32_t workers = 0;  // worker lanes alive at some point of the range
  double alive_ns = 0;        // summed over the workers: time alive within the range
  double busy_ns = 0;         // in a task
  double idle_ns = 0;         // in an idle spell (failed dequeue to next task)
  std::uint64_t tasks = 0;    // tasks that began in the range
  // failed_dequeues: DequeueFailed events, which a worker writes once an idle spell (the summary's
  // "idle polls" count every attempt, from WorkerEnd: not placeable in time).
  std::uint64_t steals = 0, failed_steals = 0, failed_dequeues = 0;

  double busy_pct() const { return alive_ns > 0 ? 100.0 * busy_ns / alive_ns : 0.0; }
  double idle_pct() const { return alive_ns > 0 ? 100.0 * idle_ns / alive_ns : 0.0; }
};

struct RangeStats {
  double begin_ns = 0, end_ns = 0;
  RangeRow all;
  std::vector<RangeRow> devices;  // one per device with workers
  std::vector<RangeRow> groups;   // one per SM (or per device's worker group)
};

RangeStats range_stats(const TraceModel& model, double begin_ns, double end_ns);

// The table's columns, and the order of `rows` by one of them (stable: ties keep SM order), for
// the Selection tab's sortable table: sorted by busy %, the SMs that idled come first.
enum class RangeColumn { Where, Workers, Busy, Idle, Tasks, Steals, FailedSteals, FailedDequeues };
std::vector<std::size_t> range_order(const std::vector<RangeRow>& rows, RangeColumn by,
                                     bool ascending);

// The statistics as tab-separated text with a header line (to paste into a spreadsheet); times in
// microseconds since `origin_ns`.
std::string range_stats_table(const RangeStats& stats, double origin_ns);

}  // namespace gpulb::viewer
