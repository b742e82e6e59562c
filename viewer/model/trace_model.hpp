// What the views read: a trace reorganised once, on load, for drawing (Tracy's rule: views own no
// data). No GL and no ImGui here, so all of it is testable without a window.
//
// Layout of the timeline, top to bottom:
//   [rank (a distributed run's process: its name, and its host lanes)]
//   device (GPU 0 / CPU)  -> its host lanes (producer, launcher; a distributed run's under the rank)
//                         -> groups: one per SM where SM ids are known, else one "workers" group
//                            -> lanes: one per worker (block / thread) or SM lane, sorted by rank
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace.hpp"
#include "columns.hpp"
#include "series.hpp"

namespace gpulb::viewer {

struct Lane {
  std::uint32_t track = 0;  // index into Trace::tracks
  trace::TrackRole role = trace::TrackRole::Worker;
  std::uint32_t device = 0;
  std::uint32_t sm = trace::Track::kNoSm;
  std::uint32_t worker = 0;
  std::string label;
  std::uint64_t start_ns = 0, end_ns = 0;  // first and last event: the worker's life
  ZoneList zones;                          // sorted, non-overlapping
  IntervalList idle;                       // sorted, non-overlapping
  MarkerList markers;                      // sorted by time (indices into the track's events)
};

// An SM, or all workers of a device whose SMs are unknown (CPU threads).
struct LaneGroup {
  std::string label;
  std::uint32_t sm = trace::Track::kNoSm;
  std::vector<std::uint32_t> lanes;        // indices into TraceModel::lanes()
  std::shared_ptr<const StepSeries> busy;  // lanes running a task
  std::shared_ptr<const StepSeries> idle;  // lanes in an idle spell (the folded row's heat map)
  std::vector<std::uint64_t> steals;  // times of its lanes' steals, sorted (the heat map's marks)
};

struct DeviceGroup {
  std::string label;  // "GPU 0: NVIDIA H100", "CPU (8 threads)"
  std::uint32_t device = 0;
  std::vector<std::uint32_t> host_lanes;
  std::vector<LaneGroup> groups;
  bool has_sms = false;  // groups are SMs
  std::uint32_t workers = 0;
  std::shared_ptr<const StepSeries> busy;  // workers running a task (shared with a lone group)
};

// A process of a distributed run (trace::Device::rank): the level above the device. Only a trace
// of more than one rank has them (one-process traces lay out as they always did).
struct RankGroup {
  std::uint32_t rank = 0;
  std::string label;                      // "rank 1: 1 device, 2 workers"
  std::vector<std::uint32_t> devices;     // indices into TraceModel::devices(), in order
  std::vector<std::uint32_t> host_lanes;  // its devices' host lanes (the rank's host threads)
};

// A queue level over time, from QueueLevel (per queue), DequeLevel (summed over a device's
// deques) or PoolLevel (the host task pool) events.
struct QueueSeries {
  enum class Source { Queue, Deques, Pool };
  Source source = Source::Queue;
  std::string label;  // "GPU 0 queue 1", "GPU 0 deques (sum)", "GPU 0 host pool"
  std::uint32_t device = 0;
  std::uint32_t queue = 0;
  StepSeries level;
  // Where the level stops meaning anything: its device's last kernel end (queues and deques live
  // in the kernel), 0 for none (the host pool). The level is 0 from there on.
  std::uint64_t end_ns = 0;
};

// What the model builds at most. A file's device and track counts are claims (CONVENTIONS 16):
// 100 KB can name 100,000 devices, and a plot per device grew the occupancy view to 7 GB. The
// model builds lanes, groups and series only for what a view can show, and says what it left out.
struct ModelLimits {
  std::size_t max_devices = 64;        // 8-GPU hosts and a CPU, with room to spare
  std::size_t max_lanes = 65'536;      // 8 GPUs x 132 SMs x 32 resident blocks is 33,792
  std::size_t max_queue_series = 256;  // plots in the occupancy view
};

// The model keeps the trace's events once, as compact columns (columns.hpp), and not the trace
// itself: lanes refer into those columns, so a TraceModel is not copied (moving it is fine).
class TraceModel {
 public:
  // Builds everything once (in parallel over tracks where there are many). Given the trace by
  // value, each track's events are freed as soon as its columns are built, so loading peaks well
  // under the trace plus the model.
  explicit TraceModel(trace::Trace trace, const ModelLimits& limits = {});
  explicit TraceModel(std::shared_ptr<const trace::Trace> trace, const ModelLimits& limits = {});
  TraceModel(const TraceModel&) = delete;
  TraceModel& operator=(const TraceModel&) = delete;
  TraceModel(TraceModel&&) = default;
  TraceModel& operator=(TraceModel&&) = default;

  // The trace's metadata, devices and tracks, each track without its events (those are events()).
  const trace::Trace& header() const { return header_; }
  // A track's events (index into header().tracks).
  const EventColumns& events(std::size_t track) const { return events_[track]; }
  // The whole trace again, events included: for saving and exporting (16 bytes an event while it lives).
  trace::Trace to_trace() const;
  // What the model holds on the heap, counted from its containers' capacities (the bench measures
  // the heap itself; this is for tests and the bench's breakdown).
  struct Bytes {
    std::size_t events = 0;  // the tracks' event columns
    std::size_t lanes = 0;   // zones, idle spells, markers, labels
    // busy and idle series of groups and devices, steal times, queue series
    std::size_t series = 0;
    std::size_t total() const { return events + lanes + series; }
  };
  Bytes bytes_by_part() const;
  std::size_t bytes() const { return bytes_by_part().total(); }

  const trace::TraceStatistics& stats() const { return stats_; }
  std::span<const Lane> lanes() const { return lanes_; }
  std::span<const DeviceGroup> devices() const { return devices_; }
  // The ranks of a distributed run in rank order; empty for a trace of one process.
  std::span<const RankGroup> ranks() const { return ranks_; }
  std::span<const QueueSeries> queues() const { return queues_; }

  // Every event of every track, host events around the run included. The views fit to and count
  // from the run instead (run_span.hpp).
  std::uint64_t begin_ns() const { return begin_ns_; }
  std::uint64_t end_ns() const { return end_ns_; }
  std::uint64_t task_count() const { return task_count_; }
  std::uint64_t min_task_ns() const { return min_task_ns_; }
  std::uint64_t max_task_ns() const { return max_task_ns_; }
  double mean_task_ns() const { return mean_task_ns_; }
  std::uint16_t max_kind() const { return max_kind_; }
  std::vector<std::uint16_t> kinds() const;  // task kinds present, ascending

  // What the limits left out: "" when the model shows everything, else e.g. "showing the first
  // 64 of 100000 devices" (the views print it).
  const std::string& omitted() const { return omitted_; }

  // Steal events in [t0, t1] on every lane: O(groups x log steals), from the groups' sorted steal
  // times (the timeline asks every frame; walking every lane's markers cost 5% of a frame).
  std::size_t steals_between(double t0_ns, double t1_ns) const;

  // The lane of a worker (device, rank), for steal arrows; -1 where there is none.
  int worker_lane(std::uint32_t device, std::uint32_t worker) const;

 private:
  void build(const trace::Trace& t, trace::Trace* owned, const ModelLimits& limits);

  trace::Trace header_;
  std::vector<EventColumns> events_;  // per track
  trace::TraceStatistics stats_;
  std::vector<Lane> lanes_;
  std::vector<DeviceGroup> devices_;
  std::vector<RankGroup> ranks_;
  std::vector<QueueSeries> queues_;
  std::uint64_t begin_ns_ = 0, end_ns_ = 0, task_count_ = 0;
  std::uint64_t min_task_ns_ = 0, max_task_ns_ = 0;
  double mean_task_ns_ = 0.0;
  std::uint16_t max_kind_ = 0;
  std::vector<bool> kind_present_;
  std::string omitted_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> worker_lanes_;  // (device, rank) -> lane
  std::vector<std::uint32_t>
      ungrouped_lanes_;  // lanes in no LaneGroup (host lanes, unlisted devices)
};

}  // namespace gpulb::viewer
