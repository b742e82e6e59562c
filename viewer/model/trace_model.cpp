// TraceModel: a trace reorganised once for the views (see trace_model.hpp).
//
// [SECTION] One lane from one track
// [SECTION] The pieces of TraceModel's constructor, in the order it runs them
// [SECTION] TraceModel
#include "trace_model.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <thread>
#include <tuple>

#include "display_text.hpp"
#include "parallel.hpp"
#include "queue_levels.hpp"

namespace gpulb::viewer {

using trace::Track;
using trace::TrackRole;

namespace {

// -------------------------------------------------------------------------------------------------
// [SECTION] One lane from one track
// -------------------------------------------------------------------------------------------------

Lane build_lane(const Track& tr, const EventColumns& ev, std::uint32_t index) {
  Lane lane;
  lane.track = index;
  lane.role = tr.role;
  lane.device = tr.device;
  lane.sm = tr.sm;
  lane.worker = tr.worker;
  lane.label = display_label(tr.name);
  lane.markers = MarkerList(&ev);
  const std::size_t n = ev.size();
  if (n > 0) {
    lane.start_ns = ev.time_ns(0);
    lane.end_ns = ev.time_ns(n - 1);
  }
  // Task zones pair as trace::task_spans pairs them (a begin without its end is skipped). Idle
  // spells start at a failed dequeue or steal and end at the next task or the worker's end.
  bool open = false, idle = false;
  Zone current{};
  std::uint64_t idle_from = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const trace::EventKind kind = ev.kind(i);
    const trace::EventTraits k = trace::event_traits(kind);
    if (k.zone == trace::ZoneEdge::Opens) {
      current = Zone{ev.time_ns(i), ev.time_ns(i), ev.arg(i), ev.aux(i)};
      open = true;
    } else if (k.zone == trace::ZoneEdge::Closes && open && ev.arg(i) == current.id) {
      current.end_ns = ev.time_ns(i);
      lane.zones.push_back(current);
      open = false;
    }
    if (k.marker) lane.markers.push_back(static_cast<std::uint32_t>(i));
    if (k.idle == trace::IdleEdge::Starts && !idle) {
      idle = true;
      idle_from = ev.time_ns(i);
    } else if (k.idle == trace::IdleEdge::Ends && idle) {
      idle = false;
      lane.idle.push_back(idle_from, ev.time_ns(i));
    }
  }
  if (idle) lane.idle.push_back(idle_from, lane.end_ns);
  lane.zones.shrink_to_fit();
  lane.idle.shrink_to_fit();
  lane.markers.shrink_to_fit();
  return lane;
}

// Sorted +1/-1 keys of one lane's zones or idle spells (see busy_series_from_keys).
template <class Intervals>
void append_busy_keys(const Intervals& spans, std::vector<std::uint64_t>& keys) {
  for (std::size_t i = 0; i < spans.size(); ++i) {
    keys.push_back(spans.begin_ns(i) * 2 + 1);
    keys.push_back(spans.end_ns(i) * 2);
  }
}

std::string device_label(const trace::Device& d) {
  if (d.kind == trace::DeviceKind::Gpu)
    return "GPU " + std::to_string(d.index) + ": " + display_label(d.name);
  return d.name.empty() ? std::string("CPU") : display_label(d.name);
}

std::string device_short(const trace::Device& d) {
  return d.kind == trace::DeviceKind::Gpu ? "GPU " + std::to_string(d.index) : std::string("CPU");
}

// -------------------------------------------------------------------------------------------------
// [SECTION] The pieces of TraceModel's constructor, in the order it runs them
// -------------------------------------------------------------------------------------------------

// Whether a track gets a lane: not where its device is past the limit. A track naming no listed
// device keeps its lane (hand-made traces); the lane limit bounds those.
bool track_shown(const trace::Trace& t, const Track& tr, std::size_t shown_devices) {
  return tr.device < shown_devices || tr.device >= t.devices.size();
}

// Lanes in display order (device, host lanes first, then SM, then rank), so that the views walk
// them top to bottom without sorting per frame; at most max_lanes of them, the first in that order.
std::vector<Lane> build_lanes(const trace::Trace& t, const std::vector<EventColumns>& events,
                              std::size_t shown_devices, std::size_t max_lanes) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < t.tracks.size(); ++i) {
    if (track_shown(t, t.tracks[i], shown_devices)) order.push_back(i);
  }
  auto sort_key = [&t](std::uint32_t i) {
    const Track& tr = t.tracks[i];
    return std::make_tuple(tr.device, tr.role == TrackRole::Host ? 0 : 1, tr.sm, tr.worker, i);
  };
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return sort_key(a) < sort_key(b); });
  order.resize(std::min(order.size(), max_lanes));
  std::vector<Lane> lanes(order.size());
  parallel_for(order.size(), [&](std::size_t i) {
    lanes[i] = build_lane(t.tracks[order[i]], events[order[i]], order[i]);
  });
  return lanes;
}

// What the views fit their axes and colour scales to.
struct LaneTotals {
  std::uint64_t begin_ns = 0, end_ns = 0, task_count = 0;
  std::uint64_t min_task_ns = 0, max_task_ns = 0, busy_ns = 0;
  std::uint16_t max_kind = 0;
  std::vector<bool> kind_present;
};

// Time range, task durations and kinds. Empty tracks carry no time: they must not pull begin to 0.
LaneTotals measure_lanes(const std::vector<EventColumns>& events, const std::vector<Lane>& lanes) {
  LaneTotals m;
  m.begin_ns = std::numeric_limits<std::uint64_t>::max();
  m.min_task_ns = std::numeric_limits<std::uint64_t>::max();
  for (const Lane& lane : lanes) {
    if (events[lane.track].empty()) continue;
    m.begin_ns = std::min(m.begin_ns, lane.start_ns);
    m.end_ns = std::max(m.end_ns, lane.end_ns);
    m.task_count += lane.zones.size();
    m.busy_ns += lane.zones.busy_ns();
    for (const Zone z : lane.zones) {
      m.min_task_ns = std::min(m.min_task_ns, z.end_ns - z.begin_ns);
      m.max_task_ns = std::max(m.max_task_ns, z.end_ns - z.begin_ns);
      if (z.kind >= m.kind_present.size()) m.kind_present.resize(z.kind + 1u, false);
      m.kind_present[z.kind] = true;
      m.max_kind = std::max(m.max_kind, z.kind);
    }
  }
  if (m.begin_ns > m.end_ns) m.begin_ns = m.end_ns = 0;
  if (m.task_count == 0) m.min_task_ns = 0;
  return m;
}

// Device -> (one group per SM | one group of all workers) -> lanes; host lanes hang off the device.
// One pass over the lanes: they are sorted by device, so each device's keep their order.
std::vector<DeviceGroup> group_lanes(const trace::Trace& t, const std::vector<Lane>& lanes,
                                     std::size_t shown_devices) {
  std::vector<DeviceGroup> devices(shown_devices);
  std::vector<std::map<std::uint32_t, LaneGroup>> groups(shown_devices);
  for (std::uint32_t i = 0; i < lanes.size(); ++i) {
    const Lane& lane = lanes[i];
    if (lane.device >= shown_devices) continue;
    DeviceGroup& dev = devices[lane.device];
    if (lane.role == TrackRole::Host) {
      dev.host_lanes.push_back(i);
      continue;
    }
    ++dev.workers;
    LaneGroup& g = groups[lane.device][lane.sm];
    g.sm = lane.sm;
    g.lanes.push_back(i);
    if (lane.sm != Track::kNoSm) dev.has_sms = true;
  }
  for (std::uint32_t d = 0; d < shown_devices; ++d) {
    devices[d].label = device_label(t.devices[d]);
    devices[d].device = d;
    for (auto& [sm, g] : groups[d]) {
      g.label =
          sm == Track::kNoSm ? device_short(t.devices[d]) + " workers" : "SM " + std::to_string(sm);
      devices[d].groups.push_back(std::move(g));
    }
  }
  return devices;
}

// Busy series: each lane's keys are sorted, so a group's are a merge of runs, and a device's a
// merge of its groups' (a lone group's series is shared, not rebuilt).
void attach_busy_series(std::vector<DeviceGroup>& devices, const std::vector<Lane>& lanes) {
  struct GroupRef {
    std::uint32_t device, group;
  };
  std::vector<GroupRef> refs;
  for (std::uint32_t d = 0; d < devices.size(); ++d) {
    for (std::uint32_t g = 0; g < devices[d].groups.size(); ++g) refs.push_back({d, g});
  }
  std::vector<std::vector<std::uint64_t>> group_keys(refs.size());
  parallel_for(refs.size(), [&](std::size_t r) {
    LaneGroup& g = devices[refs[r].device].groups[refs[r].group];
    std::vector<std::uint64_t>& keys = group_keys[r];
    std::vector<std::size_t> bounds{0};
    for (const std::uint32_t l : g.lanes) {
      append_busy_keys(lanes[l].zones, keys);
      bounds.push_back(keys.size());
    }
    merge_sorted_runs_by_key(keys, bounds, [](std::uint64_t k) { return k; });
    g.busy = std::make_shared<const StepSeries>(busy_series_from_keys(keys));
    std::vector<std::uint64_t> idle_keys;
    std::vector<std::size_t> idle_bounds{0};
    for (const std::uint32_t l : g.lanes) {
      append_busy_keys(lanes[l].idle, idle_keys);
      idle_bounds.push_back(idle_keys.size());
    }
    merge_sorted_runs_by_key(idle_keys, idle_bounds, [](std::uint64_t k) { return k; });
    g.idle = std::make_shared<const StepSeries>(busy_series_from_keys(idle_keys));
    std::vector<std::size_t> steal_bounds{0};
    for (const std::uint32_t l : g.lanes) {
      for (const Marker m : lanes[l].markers) {
        if (m.kind == trace::EventKind::Steal) g.steals.push_back(m.time_ns);
      }
      steal_bounds.push_back(g.steals.size());
    }
    g.steals.shrink_to_fit();
    merge_sorted_runs_by_key(g.steals, steal_bounds, [](std::uint64_t k) { return k; });
  });
  std::size_t r = 0;
  for (DeviceGroup& dev : devices) {
    if (dev.groups.empty()) continue;  // no worker lanes (host lanes only): no busy series
    if (dev.groups.size() == 1) {
      dev.busy = dev.groups[0].busy;
      ++r;
      continue;
    }
    std::vector<std::uint64_t> keys;
    std::vector<std::size_t> bounds{0};
    for (std::size_t g = 0; g < dev.groups.size(); ++g, ++r) {
      keys.insert(keys.end(), group_keys[r].begin(), group_keys[r].end());
      std::vector<std::uint64_t>().swap(group_keys[r]);  // free as we go: big traces have big keys
      bounds.push_back(keys.size());
    }
    merge_sorted_runs_by_key(keys, bounds, [](std::uint64_t k) { return k; });
    dev.busy = std::make_shared<const StepSeries>(busy_series_from_keys(keys));
  }
}

// A deque's level is recorded only by its owner (DequeLevel after a push or pop). Other events
// change it or prove it empty: a steal takes one task from the victim's top, and a worker that
// fails a dequeue, tries a steal or ends has just found its own deque empty (Grossman's lookup
// tries the own deque first). Without them a sum of the owners' last levels stays high after a
// run whose tasks were all stolen (uts: ~1,700 after the end).
enum class LevelOp : std::uint8_t { Set, TakeOne };

// 16 bytes: a 10 M-event trace gathers millions of these before merging them by time.
struct Level {
  std::uint64_t time_ns;
  std::uint32_t value;  // an event's arg
  std::uint16_t owner;  // deque owner (DequeLevel, deque edits): 16 bits, as DequeLevel's aux
  LevelOp op = LevelOp::Set;
  LevelRecord::Writer writer = LevelRecord::Writer::Worker;
};
using LevelKey = std::tuple<std::uint32_t, int, std::uint32_t>;  // device, source, queue
// Levels as sorted runs, one run per track that wrote them, and the runs' bounds.
using Runs = std::pair<std::vector<Level>, std::vector<std::size_t>>;
struct CollectedLevels {
  std::map<LevelKey, Runs> series;
  std::map<std::uint32_t, Runs> deque_edits;  // per device; used where the device has deque levels
};

// The edits a worker's event makes to deques (see LevelOp); false where it makes none.
bool deque_edits(const Track& tr, const EventColumns& ev, std::size_t i, std::vector<Level>& out) {
  const trace::Event e = ev[i];
  const std::uint32_t self = tr.worker & 0xFFFFu;  // DequeLevel's owner is the rank's low 16 bits
  switch (e.kind) {
    case trace::EventKind::Steal:
      // A steal from another GPU's deque (work-stealing across GPUs) is not taken from this
      // device's sum; the victim's owner records its level again at its next push or pop.
      if (!trace::steal_crosses_devices(e, tr.device)) {
        out.push_back(
            {e.time_ns, 0, static_cast<std::uint16_t>(e.arg & 0xFFFFu), LevelOp::TakeOne});
      }
      [[fallthrough]];
    case trace::EventKind::StealFailed:
    case trace::EventKind::DequeueFailed:
    case trace::EventKind::WorkerEnd:
      out.push_back({e.time_ns, 0, static_cast<std::uint16_t>(self), LevelOp::Set});
      return true;
    default: return false;
  }
}

// Appends one run (a track's) to `runs`, when it added anything.
void close_run(Runs& runs, std::size_t start) {
  auto& [vec, bounds] = runs;
  if (vec.size() == start) return;
  if (bounds.empty()) bounds.push_back(start);
  bounds.push_back(vec.size());
}

// Each track's level events are in time order: gather them per series as one run per track. Only
// for the devices shown, and no new series past max_series (`truncated` says so).
CollectedLevels collect_levels(const trace::Trace& t, const std::vector<EventColumns>& events,
                               std::size_t shown_devices, std::size_t max_series, bool& truncated) {
  CollectedLevels out;
  auto& levels = out.series;
  for (std::size_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& tr = t.tracks[ti];
    const EventColumns& ev = events[ti];
    if (!track_shown(t, tr, shown_devices)) continue;
    std::map<LevelKey, bool> touched;
    Runs* edits = tr.role == TrackRole::Worker ? &out.deque_edits[tr.device] : nullptr;
    const std::size_t edits_start = edits ? edits->first.size() : 0;
    trace::Event
        enqueued{};  // the host's last HostEnqueue: a level after it of its size is that batch's
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const trace::EventKind kind = ev.kind(i);
      // a batch's size, read with its queue's levels
      const bool enqueue = kind == trace::EventKind::HostEnqueue;
      if (enqueue) enqueued = ev[i];
      if (trace::event_traits(kind).level == trace::LevelSource::None && !edits && !enqueue)
        continue;
      if (edits && deque_edits(tr, ev, i, edits->first)) continue;
      const trace::Event e = ev[i];
      LevelKey key;
      switch (enqueue ? trace::LevelSource::Queue : trace::event_traits(e.kind).level) {
        case trace::LevelSource::Queue:
          key = {tr.device, static_cast<int>(QueueSeries::Source::Queue), e.aux};
          break;
        case trace::LevelSource::Deque:
          key = {tr.device, static_cast<int>(QueueSeries::Source::Deques), 0};
          break;
        case trace::LevelSource::Pool:
          key = {tr.device, static_cast<int>(QueueSeries::Source::Pool), 0};
          break;
        case trace::LevelSource::None: continue;
      }
      if (levels.size() >= max_series && !levels.contains(key)) {
        truncated = true;
        continue;
      }
      auto& [vec, bounds] = levels[key];
      if (!touched[key]) {
        if (bounds.empty()) bounds.push_back(0);
        touched[key] = true;
      }
      const bool batch = enqueued.kind == trace::EventKind::HostEnqueue && enqueued.arg == e.arg &&
                         enqueued.aux == e.aux && e.kind == trace::EventKind::QueueLevel;
      using Writer = LevelRecord::Writer;
      const Writer writer = tr.role != TrackRole::Host ? Writer::Worker
                            : enqueue                  ? Writer::Enqueue
                            : batch                    ? Writer::HostBatch
                                                       : Writer::Host;
      vec.push_back({e.time_ns, e.arg, e.aux, LevelOp::Set, writer});
    }
    for (auto& [key, unused] : touched) levels[key].second.push_back(levels[key].first.size());
    if (edits) close_run(*edits, edits_start);
  }
  return out;
}

// A device's deques summed: each event sets its owner's level or takes one task from it.
std::vector<StepSeries::Point> sum_of_deques(const std::vector<Level>& levels) {
  std::vector<StepSeries::Point> points;
  points.reserve(levels.size());
  std::vector<std::int64_t> per_owner(std::size_t{1} << 16,
                                      0);  // owners are 16 bits (DequeLevel's aux)
  std::int64_t total = 0;
  for (const Level& l : levels) {
    std::int64_t& mine = per_owner[l.owner];
    const std::int64_t next =
        l.op == LevelOp::Set ? std::int64_t{l.value} : std::max<std::int64_t>(mine - 1, 0);
    total += next - mine;
    mine = next;
    points.push_back({l.time_ns, total});
  }
  return points;
}

// Where each device stopped taking tasks: its last kernel end, or its workers' last event where
// that is later (or no kernel end was recorded: the CPU backend).
std::map<std::uint32_t, std::uint64_t> device_ends(const trace::Trace& t,
                                                   const std::vector<EventColumns>& events,
                                                   std::size_t shown_devices) {
  std::map<std::uint32_t, std::uint64_t> ends;
  for (std::size_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& tr = t.tracks[ti];
    const EventColumns& ev = events[ti];
    if (!track_shown(t, tr, shown_devices) || ev.size() == 0) continue;
    std::uint64_t& end = ends[tr.device];
    if (tr.role != TrackRole::Host) {
      end = std::max(end, ev.time_ns(ev.size() - 1));
      continue;
    }
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (ev.kind(i) == trace::EventKind::KernelEnd) end = std::max(end, ev.time_ns(i));
    }
  }
  return ends;
}

std::vector<StepSeries::Point> queue_points(const std::vector<Level>& levels) {
  std::vector<LevelRecord> records;
  records.reserve(levels.size());
  for (const Level& l : levels) records.push_back({l.time_ns, std::int64_t{l.value}, l.writer});
  return queue_level_points(records);
}

QueueSeries make_queue_series(const trace::Trace& t, const LevelKey& key,
                              const std::vector<Level>& levels, std::uint64_t device_end) {
  QueueSeries q;
  q.device = std::get<0>(key);
  q.source = static_cast<QueueSeries::Source>(std::get<1>(key));
  q.queue = std::get<2>(key);
  std::string dev = q.device < t.devices.size() ? device_short(t.devices[q.device]) : "device";
  // Four ranks' "CPU queue 0" read alike: a distributed trace's series name their rank ("rank 2
  // queue 0", short enough for the label column; a GPU keeps its name: "rank 2 GPU 1 queue 0").
  if (t.meta.ranks > 1 && q.device < t.devices.size()) {
    const trace::Device& d = t.devices[q.device];
    dev = "rank " + std::to_string(d.rank) + (d.kind == trace::DeviceKind::Gpu ? " " + dev : "");
  }
  std::vector<StepSeries::Point> points;
  if (q.source == QueueSeries::Source::Deques) {
    points = sum_of_deques(levels);
    q.label = dev + " deques (sum)";
  } else {
    points = queue_points(levels);
    q.label = q.source == QueueSeries::Source::Pool ? dev + " host pool"
                                                    : dev + " queue " + std::to_string(q.queue);
  }
  // A device's queues and deques live in its kernel; the host pool outlives it.
  if (q.source != QueueSeries::Source::Pool && device_end > 0) {
    end_level_at(points, device_end);
    q.end_ns = device_end;
  }
  q.level = StepSeries(std::move(points));
  return q;
}

// One series per queue, per device's deques and per host pool, merged across writers by time.
std::vector<QueueSeries> build_queue_series(const trace::Trace& t,
                                            const std::vector<EventColumns>& events,
                                            std::size_t shown_devices, std::size_t max_series,
                                            bool& truncated) {
  std::vector<QueueSeries> queues;
  CollectedLevels collected = collect_levels(t, events, shown_devices, max_series, truncated);
  const std::map<std::uint32_t, std::uint64_t> ends = device_ends(t, events, shown_devices);
  for (auto& [key, entry] : collected.series) {
    auto& [vec, bounds] = entry;
    const auto edits = collected.deque_edits.find(std::get<0>(key));
    if (std::get<1>(key) == static_cast<int>(QueueSeries::Source::Deques) &&
        edits != collected.deque_edits.end()) {
      auto& [edit_vec, edit_bounds] = edits->second;
      const std::size_t offset = vec.size();
      vec.insert(vec.end(), edit_vec.begin(), edit_vec.end());
      for (std::size_t i = 1; i < edit_bounds.size(); ++i)
        bounds.push_back(offset + edit_bounds[i]);
    }
    // Stable by time within a track, merged across tracks by time.
    merge_sorted_runs_by_key(vec, bounds, [](const Level& l) { return l.time_ns; });
    const auto end = ends.find(std::get<0>(key));
    QueueSeries q = make_queue_series(t, key, vec, end == ends.end() ? 0 : end->second);
    if (!q.level.empty())
      queues.push_back(std::move(q));  // a queue with batches written but no level recorded
  }
  return queues;
}

// Devices by the rank that drove them, in rank order, where the trace names more than one rank.
std::vector<RankGroup> group_ranks(const trace::Trace& t, const std::vector<DeviceGroup>& devices) {
  std::map<std::uint32_t, RankGroup> by_rank;
  for (const DeviceGroup& d : devices) {
    RankGroup& g = by_rank[t.devices[d.device].rank];
    g.rank = t.devices[d.device].rank;
    g.devices.push_back(d.device);
    g.host_lanes.insert(g.host_lanes.end(), d.host_lanes.begin(), d.host_lanes.end());
  }
  if (t.meta.ranks <= 1 && by_rank.size() <= 1) return {};
  std::vector<RankGroup> out;
  for (auto& [r, g] : by_rank) {
    std::uint64_t workers = 0;
    for (const std::uint32_t d : g.devices) workers += devices[d].workers;
    g.label = "rank " + std::to_string(r) + ": " + std::to_string(g.devices.size()) +
              (g.devices.size() == 1 ? " device, " : " devices, ") + std::to_string(workers) +
              (workers == 1 ? " worker" : " workers");
    out.push_back(std::move(g));
  }
  return out;
}

// What the limits left out, for the views to say. `queue_limit` is 0 where no series was left out.
std::string omitted_note(const trace::Trace& t, std::size_t shown_devices, std::size_t lanes,
                         std::size_t lane_limit, std::size_t queue_limit) {
  std::vector<std::string> parts;
  if (shown_devices < t.devices.size()) {
    parts.push_back("the first " + std::to_string(shown_devices) + " of " +
                    std::to_string(t.devices.size()) + " devices");
  }
  if (lanes == lane_limit && lanes < t.tracks.size()) {
    parts.push_back(std::to_string(lanes) + " of " + std::to_string(t.tracks.size()) + " tracks");
  }
  if (queue_limit > 0)
    parts.push_back("the first " + std::to_string(queue_limit) + " queue series");
  std::string note;
  for (const std::string& p : parts) note += (note.empty() ? "showing " : ", ") + p;
  return note;
}

}  // namespace

// -------------------------------------------------------------------------------------------------
// [SECTION] TraceModel
// -------------------------------------------------------------------------------------------------

TraceModel::TraceModel(trace::Trace trace, const ModelLimits& limits) {
  build(trace, &trace, limits);
}

TraceModel::TraceModel(std::shared_ptr<const trace::Trace> trace, const ModelLimits& limits) {
  build(*trace, nullptr, limits);
}

void TraceModel::build(const trace::Trace& t, trace::Trace* owned, const ModelLimits& limits) {
  stats_ = trace::compute_statistics(t);
  header_.meta = t.meta;
  header_.devices = t.devices;
  header_.tracks.resize(t.tracks.size());
  events_.resize(t.tracks.size());
  // Each track to columns, and (when the trace is ours) its 16-byte events freed at once.
  parallel_for(t.tracks.size(), [&](std::size_t i) {
    const Track& tr = t.tracks[i];
    Track& h = header_.tracks[i];
    h.role = tr.role;
    h.device = tr.device;
    h.worker = tr.worker;
    h.sm = tr.sm;
    h.name = tr.name;
    h.dropped = tr.dropped;
    events_[i] = EventColumns(tr.events);
    if (owned) std::vector<trace::Event>().swap(owned->tracks[i].events);
  });
  const trace::Trace& h = header_;
  const std::size_t shown_devices = std::min(h.devices.size(), limits.max_devices);
  lanes_ = build_lanes(h, events_, shown_devices, limits.max_lanes);

  const LaneTotals totals = measure_lanes(events_, lanes_);
  begin_ns_ = totals.begin_ns;
  end_ns_ = totals.end_ns;
  task_count_ = totals.task_count;
  min_task_ns_ = totals.min_task_ns;
  max_task_ns_ = totals.max_task_ns;
  mean_task_ns_ = totals.task_count
                      ? static_cast<double>(totals.busy_ns) / static_cast<double>(totals.task_count)
                      : 0.0;
  max_kind_ = totals.max_kind;
  kind_present_ = totals.kind_present;

  for (std::uint32_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i].role == TrackRole::Worker)
      worker_lanes_.emplace(std::make_pair(lanes_[i].device, lanes_[i].worker), i);
  }
  devices_ = group_lanes(h, lanes_, shown_devices);
  ranks_ = group_ranks(h, devices_);
  for (std::uint32_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i].role == TrackRole::Host || lanes_[i].device >= shown_devices)
      ungrouped_lanes_.push_back(i);
  }
  // The queue series (one long merge per device's deques) and the busy series (merges per group,
  // then per device) read different parts of the model: build them side by side.
  bool queues_truncated = false;
  {
    std::jthread queues([&] {
      queues_ =
          build_queue_series(h, events_, shown_devices, limits.max_queue_series, queues_truncated);
    });
    attach_busy_series(devices_, lanes_);
  }
  omitted_ = omitted_note(h, shown_devices, lanes_.size(), limits.max_lanes,
                          queues_truncated ? limits.max_queue_series : 0);
}

trace::Trace TraceModel::to_trace() const {
  trace::Trace t = header_;
  for (std::size_t i = 0; i < t.tracks.size(); ++i) t.tracks[i].events = events_[i].to_events();
  return t;
}

TraceModel::Bytes TraceModel::bytes_by_part() const {
  Bytes b;
  b.events = events_.capacity() * sizeof(EventColumns);
  for (const EventColumns& e : events_) b.events += e.bytes();
  b.lanes = lanes_.capacity() * sizeof(Lane);
  for (const Lane& l : lanes_)
    b.lanes += l.zones.bytes() + l.idle.bytes() + l.markers.bytes() + l.label.capacity();
  auto series = [](const StepSeries* s) { return s ? s->bytes() : 0; };
  for (const DeviceGroup& d : devices_) {
    b.series += series(d.busy.get());
    for (const LaneGroup& g : d.groups) {
      b.series += g.lanes.capacity() * 4 + g.steals.capacity() * 8 + series(g.idle.get());
      if (g.busy != d.busy) b.series += series(g.busy.get());
    }
  }
  for (const QueueSeries& q : queues_) b.series += q.level.bytes();
  return b;
}

std::vector<std::uint16_t> TraceModel::kinds() const {
  std::vector<std::uint16_t> out;
  for (std::size_t k = 0; k < kind_present_.size(); ++k) {
    if (kind_present_[k]) out.push_back(static_cast<std::uint16_t>(k));
  }
  return out;
}

std::size_t TraceModel::steals_between(double t0_ns, double t1_ns) const {
  std::size_t n = 0;
  for (const DeviceGroup& d : devices_) {
    for (const LaneGroup& g : d.groups) {
      const auto from =
          std::partition_point(g.steals.begin(), g.steals.end(),
                               [t0_ns](std::uint64_t t) { return static_cast<double>(t) < t0_ns; });
      const auto to = std::partition_point(from, g.steals.end(), [t1_ns](std::uint64_t t) {
        return static_cast<double>(t) <= t1_ns;
      });
      n += static_cast<std::size_t>(to - from);
    }
  }
  for (const std::uint32_t l : ungrouped_lanes_) {
    const MarkerList& m = lanes_[l].markers;
    for (std::size_t i = m.first_at_or_after(t0_ns), end = m.first_after(t1_ns); i < end; ++i) {
      n += m[i].kind == trace::EventKind::Steal ? 1 : 0;
    }
  }
  return n;
}

int TraceModel::worker_lane(std::uint32_t device, std::uint32_t worker) const {
  const auto it = worker_lanes_.find({device, worker});
  return it == worker_lanes_.end() ? -1 : it->second;
}

}  // namespace gpulb::viewer
