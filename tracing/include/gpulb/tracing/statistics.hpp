// What a trace says about load balance: the one implementation behind `gpulb info`, `gpulb run`'s
// summary and the viewer's summary and histograms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpulb/tracing/critical_path.hpp"
#include "gpulb/tracing/event_kinds.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb::trace {

// One executed task, from a TaskBegin/TaskEnd pair on one track.
struct TaskSpan {
  std::uint64_t begin_ns;
  std::uint64_t end_ns;
  std::uint32_t id;
  std::uint16_t kind;
};

// fn(span) for each task span of a track, in time order. A begin without its end (a dropped
// event) is skipped. Nothing is kept: a worker's spans as a vector took half its events' memory
// again at the peak of a traced run (gpulb run's statistics).
template <class Fn>
void for_each_task_span(const Track& track, Fn&& fn) {
  bool open = false;
  TaskSpan current{};
  for (const Event& e : track.events) {
    const ZoneEdge edge = event_traits(e.kind).zone;
    if (edge == ZoneEdge::Opens) {
      current = TaskSpan{e.time_ns, e.time_ns, e.arg, e.aux};
      open = true;
    } else if (edge == ZoneEdge::Closes && open && e.arg == current.id) {
      current.end_ns = e.time_ns;
      fn(current);
      open = false;
    }
  }
}

// The task spans of a track, as for_each_task_span finds them.
std::vector<TaskSpan> task_spans(const Track& track);

struct WorkerStats {
  std::uint32_t track = 0;  // index into Trace::tracks
  std::uint32_t device = 0;
  std::uint32_t sm = Track::kNoSm;
  std::uint64_t tasks = 0;
  std::uint64_t busy_ns = 0;
  std::uint64_t failed_dequeues = 0;
  std::uint64_t steals = 0;
  std::uint64_t steals_across_devices = 0;  // Steal events whose victim is on another device
  std::uint64_t failed_steals = 0;
  std::uint64_t spawned = 0;        // children its tasks created (Spawn and SpawnBatch events)
  std::uint64_t spawned_named = 0;  // of those, the ones a SpawnBatch names by id
};

// Aggregate over a group of workers (an SM, a device, or all of them).
struct LoadSummary {
  std::uint64_t tasks = 0;
  std::uint64_t busy_ns = 0;
  std::uint64_t min_busy_ns = 0, max_busy_ns = 0;
  std::uint64_t min_tasks = 0, max_tasks = 0;
  double mean_busy_ns = 0.0;
  double imbalance = 0.0;  // max busy / mean busy; 1.0 is perfect balance
};

struct GroupStats {
  std::string label;  // "GPU 0", "SM 17", "CPU"
  std::uint32_t device = 0;
  std::uint32_t sm = Track::kNoSm;
  std::uint32_t workers = 0;
  std::uint64_t tasks = 0;
  std::uint64_t busy_ns = 0;
};

// What bounds the makespan from below: the work shared perfectly among the workers, or the
// longest chain of tasks that must run one after the other (critical_path.hpp).
enum class LowerBound { Balance, CriticalPath };

struct TraceStatistics {
  std::uint64_t begin_ns = 0;     // earliest worker event
  std::uint64_t end_ns = 0;       // latest worker event
  std::uint64_t makespan_ns = 0;  // end - begin
  std::uint32_t workers = 0;
  std::uint64_t tasks = 0;
  std::uint64_t events = 0;
  std::uint64_t dropped_events = 0;
  std::uint64_t steals = 0;
  // from another GPU's workers (Steal aux: steal_aux_for_device)
  std::uint64_t steals_across_devices = 0;
  std::uint64_t failed_steals = 0;
  std::uint64_t failed_dequeues = 0;
  std::uint64_t spawned = 0;  // tasks created by tasks (WorkerStats::spawned summed)
  // of those, named by id: what the Perfetto export can link to a parent
  std::uint64_t spawned_named = 0;
  // chunks that moved between ranks (RankSteal, host tracks of a distributed run)
  std::uint64_t rank_steals = 0;
  std::uint64_t rank_tasks_moved = 0;  // the tasks in them (aux, saturating per chunk)
  double efficiency = 0.0;             // busy / (workers x makespan)
  double balance_bound_ns = 0.0;       // total busy / workers: the makespan of a perfect balance
  CriticalPath critical_path;          // bound_ns 0 where the trace proves no chain
  double lower_bound_ns = 0.0;  // the larger of the two: no schedule of this run's tasks is shorter
  LowerBound lower_bound = LowerBound::Balance;
  LoadSummary load;  // over workers
  std::vector<WorkerStats> per_worker;
  std::vector<GroupStats> per_sm;  // only where SM ids are known
  std::vector<GroupStats> per_device;
};

TraceStatistics compute_statistics(const Trace& trace);

// A small text histogram of tasks per worker, for terminals: one line per bin.
std::string tasks_per_worker_histogram(const TraceStatistics& stats, int bins = 8, int width = 40);

}  // namespace gpulb::trace
