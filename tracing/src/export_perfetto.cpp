// Perfetto's own trace format (perfetto_trace.proto: a Trace of TracePackets), written without the
// Perfetto SDK. The track tree is perfetto_tracks.cpp, the packets' encoding perfetto_packets.hpp;
// this file turns events into track events: a task is a slice named by its kind with its task_id,
// a marker an instant with its arguments by name, a steal a flow from an instant `stolen_from` on
// the victim's track to the thief's `steal`, a SpawnBatch a flow from its instant to each child's
// slice (spawn_flows.hpp), queue and pool levels counter values, and each
// device's busy workers and deque sum counters kept here as the events go by.
//
// The tracks are read merged in time order (a heap of one cursor per track), so that a device's
// counters see every track's events in order and every packet sequence's timestamps grow; the
// writer keeps a cursor per track, each device's counters and the spawned ids as merged ranges,
// never the output or a track's tasks.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <queue>
#include <string>
#include <vector>

#include "export_args.hpp"
#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/export_window.hpp"
#include "perfetto_packets.hpp"
#include "perfetto_tracks.hpp"
#include "spawn_flows.hpp"

namespace gpulb::trace {
namespace {

using detail::PerfettoPackets;
using detail::PerfettoTracks;
using detail::SpawnFlows;

constexpr const char* kStolenFrom = "stolen_from";
constexpr const char* kThiefWorker = "thief_worker";
constexpr const char* kThiefDevice = "thief_device";

// A device's deques summed as the viewer sums them (viewer/model/trace_model.cpp): a DequeLevel
// sets its owner's level, a steal takes one task from the victim's, and a worker that fails a
// dequeue or a steal, or ends, has just found its own deque empty.
class DequeSum {
 public:
  void set(std::uint16_t owner, std::int64_t level) {
    std::int64_t& mine = slot(owner);
    total_ += level - mine;
    mine = level;
  }
  void take_one(std::uint16_t owner) {
    std::int64_t& mine = slot(owner);
    if (mine > 0) {
      --mine;
      --total_;
    }
  }
  std::int64_t total() const { return total_; }

 private:
  std::int64_t& slot(std::uint16_t owner) {
    if (owner >= per_owner_.size()) per_owner_.resize(std::size_t{owner} + 1, 0);
    return per_owner_[owner];
  }
  std::vector<std::int64_t> per_owner_;
  std::int64_t total_ = 0;
};

struct DeviceCounters {
  std::uint64_t busy_uuid = 0, deques_uuid = 0;
  std::int64_t busy = 0, busy_shown = -1;
  DequeSum deques;
  std::int64_t deques_shown = 0;
};

// Each child begins once: no trace needs more spawn flows than it has task begins.
std::uint64_t task_begins(const Trace& trace) {
  std::uint64_t n = 0;
  for (const Track& tr : trace.tracks) {
    for (const Event& e : tr.events) n += event_traits(e.kind).zone == ZoneEdge::Opens ? 1 : 0;
  }
  return n;
}

std::string device_note(const ExportWindow& w) {
  if (w.left_out == 0) return "";
  return std::to_string(w.left_out) + (w.left_out == 1 ? " host event" : " host events") +
         " far from the run left out of this export (gpulb's export window: the run and the host "
         "work around it)";
}

class PerfettoWriter {
 public:
  PerfettoWriter(std::ostream& out, const Trace& trace, TimeRange range)
      : trace_(trace),
        window_(export_window(trace, range)),
        packets_(out),
        tracks_(trace, packets_.buffer(), device_note(window_)),
        next_(trace.tracks.size(), 0),
        open_(trace.tracks.size()),
        spawns_(task_begins(trace)) {
    for (std::size_t i = 0; i < trace.tracks.size(); ++i) {
      const Track& tr = trace.tracks[i];
      DeviceCounters& d = devices_[tr.device];
      d.busy_uuid = tracks_.busy_counter(tr.device);
      d.deques_uuid = tracks_.deques_counter(tr.device);
      device_of_.push_back(&d);
      packets_.add_sequence(tracks_.track(i), tr.role == TrackRole::Host ? 0 : d.busy_uuid);
    }
    task_id_iid_ = packets_.annotation_name_iid("task_id");
  }

  void write() {
    using Next = std::pair<std::uint64_t, std::size_t>;  // (time, track)
    std::priority_queue<Next, std::vector<Next>, std::greater<>> heap;
    for (std::size_t i = 0; i < trace_.tracks.size(); ++i) {
      if (!trace_.tracks[i].events.empty()) heap.push({trace_.tracks[i].events[0].time_ns, i});
    }
    while (!heap.empty()) {
      const std::size_t i = heap.top().second;
      heap.pop();
      on_event(i, next_[i]++);
      if (next_[i] < trace_.tracks[i].events.size())
        heap.push({trace_.tracks[i].events[next_[i]].time_ns, i});
    }
    packets_.flush();
  }

 private:
  void on_event(std::size_t track, std::size_t index) {
    const Event& e = trace_.tracks[track].events[index];
    const EventTraits k = event_traits(e.kind);
    if (k.zone == ZoneEdge::Opens) task_begin(track, index);
    if (k.zone == ZoneEdge::Closes) task_end(track, e);
    if (k.level == LevelSource::Queue || k.level == LevelSource::Pool) level(track, e, k.level);
    deque_edits(track, e);
    if (k.marker && window_.keeps(e.time_ns)) marker(track, e);
  }

  // --- tasks and busy workers ---------------------------------------------------------------------
  // The end of the task that `index` begins, as statistics' task_spans pairs them: the next
  // TaskEnd of its id, unless another TaskBegin comes first (a dropped end).
  std::optional<std::uint64_t> end_of(const Track& tr, std::size_t index) const {
    const Event& begin = tr.events[index];
    for (std::size_t j = index + 1; j < tr.events.size(); ++j) {
      const ZoneEdge edge = event_traits(tr.events[j].kind).zone;
      if (edge == ZoneEdge::Opens) return std::nullopt;
      if (edge == ZoneEdge::Closes && tr.events[j].arg == begin.arg) return tr.events[j].time_ns;
    }
    return std::nullopt;
  }

  void task_begin(std::size_t track, std::size_t index) {
    const Track& tr = trace_.tracks[track];
    const Event& e = tr.events[index];
    open_[track].reset();
    const std::optional<std::uint64_t> end = end_of(tr, index);
    if (!end || !window_.range.overlaps(e.time_ns, *end)) return;
    open_[track] = e.arg;
    packets_.begin_event(track, pf::event::kSliceBegin);
    packets_.name(task_name_iid(e.aux));
    packets_.annotate(task_id_iid_, e.arg);  // the kind is in the slice's name
    if (spawns_.started(e.arg)) packets_.terminating_flow(SpawnFlows::flow_id(e.arg));
    count_busy(track, +1);
    packets_.emit(window_.at(e.time_ns));
  }

  void task_end(std::size_t track, const Event& e) {
    if (!open_[track] || *open_[track] != e.arg) return;
    open_[track].reset();
    packets_.begin_event(track, pf::event::kSliceEnd);
    count_busy(track, -1);
    packets_.emit(window_.at(e.time_ns));
  }

  // The device's busy workers ride on the slice packets of its worker tracks, where they changed.
  void count_busy(std::size_t track, int step) {
    if (trace_.tracks[track].role == TrackRole::Host) return;
    DeviceCounters& d = *device_of_[track];
    d.busy += step;
    if (d.busy_uuid == 0 || d.busy == d.busy_shown) return;
    packets_.extra_counter_value(d.busy);
    d.busy_shown = d.busy;
  }

  std::uint64_t task_name_iid(std::uint16_t kind) {
    auto [it, added] = task_names_.try_emplace(kind, 0);
    if (added) it->second = packets_.event_name_iid("task kind " + std::to_string(kind));
    return it->second;
  }

  // --- levels ---------------------------------------------------------------------------------------
  void level(std::size_t track, const Event& e, LevelSource source) {
    const std::uint64_t uuid = tracks_.level_counter(trace_.tracks[track].device, source, e.aux);
    if (uuid == 0 || !window_.keeps(e.time_ns)) return;
    packets_.begin_event(track, pf::event::kCounter, uuid);
    packets_.counter_value(e.arg);
    packets_.emit(window_.at(e.time_ns));
  }

  void deque_edits(std::size_t track, const Event& e) {
    const Track& tr = trace_.tracks[track];
    DeviceCounters& d = *device_of_[track];
    if (d.deques_uuid == 0) return;
    const auto self = static_cast<std::uint16_t>(
        tr.worker & 0xFFFFu);  // DequeLevel's owner: the rank's low 16 bits
    const bool worker = tr.role == TrackRole::Worker;
    switch (e.kind) {
      case EventKind::DequeLevel: d.deques.set(e.aux, e.arg); break;
      case EventKind::Steal:
        if (!worker) return;
        // A steal from another GPU's deque is not taken from this device's sum.
        if (!steal_crosses_devices(e, tr.device))
          d.deques.take_one(static_cast<std::uint16_t>(e.arg & 0xFFFFu));
        d.deques.set(self, 0);
        break;
      case EventKind::StealFailed:
      case EventKind::DequeueFailed:
      case EventKind::WorkerEnd:
        if (!worker) return;
        d.deques.set(self, 0);
        break;
      default: return;
    }
    if (d.deques.total() == d.deques_shown || !window_.keeps(e.time_ns)) return;
    d.deques_shown = d.deques.total();
    packets_.begin_event(track, pf::event::kCounter, d.deques_uuid);
    packets_.counter_value(d.deques_shown);
    packets_.emit(window_.at(e.time_ns));
  }

  // --- markers and steals -------------------------------------------------------------------------
  void marker(std::size_t track, const Event& e) {
    const Track& tr = trace_.tracks[track];
    std::optional<std::uint64_t> flow;
    if (e.kind == EventKind::Steal) flow = stolen_from(tr, e);
    packets_.begin_event(track, pf::event::kInstant);
    packets_.name(event_kind_name(e.kind));
    for (const detail::NamedArg& a : detail::named_args(e, tr.device))
      packets_.annotate(a.name, a.value);
    if (flow) packets_.terminating_flow(*flow);
    if (spawn_names_children(e)) {
      const std::uint32_t children = spawns_.announce(e.arg, e.aux);
      for (std::uint32_t i = 0; i < children; ++i) packets_.flow(SpawnFlows::flow_id(e.arg + i));
    }
    packets_.emit(window_.at(e.time_ns));
  }

  // The steal's start on the victim's track, where the trace has it: an instant naming the thief,
  // the flow's first end.
  std::optional<std::uint64_t> stolen_from(const Track& thief, const Event& e) {
    const std::optional<std::size_t> victim =
        tracks_.worker_track(steal_victim_device(e, thief.device), e.arg);
    if (!victim) return std::nullopt;
    const std::uint64_t flow = ++last_flow_;
    packets_.begin_event(*victim, pf::event::kInstant);
    packets_.name(kStolenFrom);
    packets_.annotate(kThiefWorker, thief.worker);
    packets_.annotate(kThiefDevice, thief.device);
    packets_.flow(flow);
    packets_.emit(window_.at(e.time_ns));
    return flow;
  }

  const Trace& trace_;
  const ExportWindow window_;
  PerfettoPackets packets_;
  const PerfettoTracks tracks_;
  std::vector<std::size_t> next_;                      // per track: its next event
  std::vector<std::optional<std::uint32_t>> open_;     // per track: the task whose slice is open
  std::map<std::uint32_t, DeviceCounters> devices_;    // a map's entries stay where they are
  std::vector<DeviceCounters*> device_of_;             // per track
  std::map<std::uint16_t, std::uint64_t> task_names_;  // task kind -> name iid
  SpawnFlows spawns_;
  std::uint64_t task_id_iid_ = 0,
                last_flow_ = 0;  // steal flows: 1, 2, ... (spawn flows: SpawnFlows::flow_id)
};

}  // namespace

void write_perfetto(std::ostream& out, const Trace& trace, TimeRange range) {
  PerfettoWriter(out, trace, range).write();
}

}  // namespace gpulb::trace
