// Perfetto's own trace format (perfetto_trace.proto: a Trace of TracePackets), written without the
// Perfetto SDK: track descriptors nested rank -> device -> SM -> worker, task slices, markers as
// instants with named arguments, steals as flows from the victim to the thief, queue and pool
// levels as counter tracks. Names are interned once, in the sequence's first packet. Each packet
// is built and written on its own, so the output never sits in memory; the trace processor orders
// packets by their timestamps, so each track is written whole, one after the other.
#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "export_args.hpp"
#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "protobuf_writer.hpp"

namespace gpulb::trace {
namespace {

// Field numbers of perfetto_trace.proto.
namespace packet {
constexpr std::uint32_t kTimestamp = 8, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13, kSequenceId = 10,
                        kTrackDescriptor = 60;
}
namespace descriptor {
constexpr std::uint32_t kUuid = 1, kName = 2, kParentUuid = 5, kCounter = 8, kChildOrdering = 11, kSiblingOrderRank = 12;
constexpr std::uint64_t kOrderExplicit = 3;
}
namespace event {
constexpr std::uint32_t kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11, kCounterValue = 30,
                        kFlowIds = 47, kTerminatingFlowIds = 48;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
}
namespace interned {
constexpr std::uint32_t kEventNames = 2, kAnnotationNames = 3, kIid = 1, kName = 2;
}
namespace annotation {
constexpr std::uint32_t kNameIid = 1, kUintValue = 3;
}
constexpr std::uint32_t kTraceTracePacket = 1;
constexpr std::uint32_t kSequence = 1;
constexpr std::uint64_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;

constexpr const char* kStolenFrom = "stolen_from";
constexpr const char* kThiefWorker = "thief_worker";
constexpr const char* kThiefDevice = "thief_device";

std::string task_name(std::uint16_t kind) { return "task kind " + std::to_string(kind); }

std::string device_name(const Trace& t, std::uint32_t device) {
  if (device >= t.devices.size()) return "device " + std::to_string(device);
  const Device& d = t.devices[device];
  return d.kind == DeviceKind::Gpu ? "GPU " + std::to_string(d.index) + ": " + d.name : d.name;
}

class PerfettoWriter {
 public:
  PerfettoWriter(std::ostream& out, const Trace& trace, TimeRange range) : out_(out), trace_(trace), range_(range) {}

  void write() {
    write_interned_names();
    write_track_tree();
    for (std::size_t i = 0; i < trace_.tracks.size(); ++i) write_track_events(i);
  }

 private:
  // --- names, interned in the first packet ------------------------------------------------------
  void write_interned_names() {
    std::set<std::string> names = {kStolenFrom};
    std::set<std::string> args = {kThiefWorker, kThiefDevice};
    for (int k = 1; k < static_cast<int>(EventKind::Count); ++k) {
      const auto kind = static_cast<EventKind>(k);
      names.insert(event_kind_name(kind));
      const EventArgNames a = event_arg_names(kind);
      for (const char* n : {a.arg, a.aux}) {
        if (*n) args.insert(n);
      }
    }
    for (const Track& tr : trace_.tracks) {
      for (const Event& e : tr.events) {
        if (e.kind == EventKind::TaskBegin) names.insert(task_name(e.aux));
      }
    }
    proto::Message data;
    for (const std::string& n : names) intern(data, interned::kEventNames, event_iids_, n);
    for (const std::string& n : args) intern(data, interned::kAnnotationNames, arg_iids_, n);
    proto::Message p;
    p.uint(packet::kSequenceId, kSequence);
    p.uint(packet::kSequenceFlags, kIncrementalStateCleared);
    p.message(packet::kInternedData, data);
    p.write_as_field(out_, kTraceTracePacket);
  }

  static void intern(proto::Message& data, std::uint32_t field, std::map<std::string, std::uint64_t>& iids, const std::string& name) {
    const std::uint64_t iid = iids.size() + 1;
    iids.emplace(name, iid);
    proto::Message entry;
    entry.uint(interned::kIid, iid);
    entry.string(interned::kName, name);
    data.message(field, entry);
  }

  // --- the track tree ----------------------------------------------------------------------------
  std::uint64_t new_uuid() { return ++last_uuid_; }

  void describe(std::uint64_t uuid, const std::string& name, std::uint64_t parent, std::int64_t order, bool counter = false) {
    proto::Message d;
    d.uint(descriptor::kUuid, uuid);
    d.string(descriptor::kName, name);
    if (parent != 0) d.uint(descriptor::kParentUuid, parent);
    d.uint(descriptor::kChildOrdering, descriptor::kOrderExplicit);
    d.sint64(descriptor::kSiblingOrderRank, order);
    if (counter) d.message(descriptor::kCounter, proto::Message{});
    proto::Message p;
    p.message(packet::kTrackDescriptor, d);
    p.write_as_field(out_, kTraceTracePacket);
  }

  void write_track_tree() {
    std::map<std::uint32_t, std::uint64_t> rank_uuid;
    if (trace_.meta.ranks > 1) {
      for (const Device& d : trace_.devices) {
        if (rank_uuid.count(d.rank)) continue;
        rank_uuid[d.rank] = new_uuid();
        describe(rank_uuid[d.rank], "rank " + std::to_string(d.rank), 0, d.rank);
      }
    }
    for (std::uint32_t d = 0; d < trace_.devices.size(); ++d) {
      device_uuid_[d] = new_uuid();
      const auto r = rank_uuid.find(trace_.devices[d].rank);
      describe(device_uuid_[d], device_name(trace_, d), r == rank_uuid.end() ? 0 : r->second, d);
    }
    // Under each device: its host tracks, its counters, its SMs (each with its workers), then the
    // workers of no known SM.
    std::map<std::uint32_t, std::int64_t> order;
    track_uuid_.resize(trace_.tracks.size());
    describe_tracks(order, [](const Track& tr) { return tr.role == TrackRole::Host; });
    for (const Track& tr : trace_.tracks) add_counter_tracks(tr, order[tr.device]);
    describe_tracks(order, [](const Track& tr) { return tr.role != TrackRole::Host && tr.sm != Track::kNoSm; });
    describe_tracks(order, [](const Track& tr) { return tr.role != TrackRole::Host && tr.sm == Track::kNoSm; });
  }

  template <typename Which>
  void describe_tracks(std::map<std::uint32_t, std::int64_t>& order, Which which) {
    for (std::size_t i = 0; i < trace_.tracks.size(); ++i) {
      const Track& tr = trace_.tracks[i];
      if (!which(tr)) continue;
      std::int64_t& next = order[tr.device];
      track_uuid_[i] = new_uuid();
      describe(track_uuid_[i], tr.name, parent_of(tr, next), next++);
      if (tr.role == TrackRole::Worker) worker_track_[{tr.device, tr.worker}] = i;
    }
  }

  // An SM's rows are grouped under "SM n"; host tracks and workers of unknown SM sit on the device.
  std::uint64_t parent_of(const Track& tr, std::int64_t& order) {
    const std::uint64_t device = device_or_root(tr.device);
    if (tr.role == TrackRole::Host || tr.sm == Track::kNoSm) return device;
    auto [it, added] = sm_uuid_.try_emplace({tr.device, tr.sm}, 0);
    if (added) {
      it->second = new_uuid();
      describe(it->second, "SM " + std::to_string(tr.sm), device, order++);
    }
    return it->second;
  }

  std::uint64_t device_or_root(std::uint32_t device) const {
    const auto it = device_uuid_.find(device);
    return it == device_uuid_.end() ? 0 : it->second;
  }

  // One counter track per queue and for the host pool of each device, made where a level of it is.
  void add_counter_tracks(const Track& tr, std::int64_t& order) {
    for (const Event& e : tr.events) {
      const LevelSource source = event_traits(e.kind).level;
      if (source != LevelSource::Queue && source != LevelSource::Pool) continue;
      const std::uint16_t aux = source == LevelSource::Pool ? 0 : e.aux;
      auto [it, added] = counter_uuid_.try_emplace({tr.device, source, aux}, 0);
      if (!added) continue;
      it->second = new_uuid();
      describe(it->second, source == LevelSource::Pool ? "host pool (tasks)" : "queue " + std::to_string(aux) + " (tasks)",
               device_or_root(tr.device), order++, true);
    }
  }

  // --- events --------------------------------------------------------------------------------------
  proto::Message event_packet(std::uint64_t time_ns) const {
    proto::Message p;
    p.uint(packet::kTimestamp, time_ns);
    p.uint(packet::kSequenceId, kSequence);
    p.uint(packet::kSequenceFlags, kNeedsIncrementalState);
    return p;
  }

  void emit(std::uint64_t time_ns, const proto::Message& track_event) {
    proto::Message p = event_packet(time_ns);
    p.message(packet::kTrackEvent, track_event);
    p.write_as_field(out_, kTraceTracePacket);
  }

  proto::Message track_event(std::uint64_t type, std::uint64_t track, const std::string& name) const {
    proto::Message e;
    e.uint(event::kType, type);
    e.uint(event::kTrackUuid, track);
    if (!name.empty()) e.uint(event::kNameIid, event_iids_.at(name));
    return e;
  }

  void annotate(proto::Message& e, std::string_view name, std::uint64_t value) const {
    proto::Message a;
    a.uint(annotation::kNameIid, arg_iids_.at(std::string(name)));
    a.uint(annotation::kUintValue, value);
    e.message(event::kDebugAnnotations, a);
  }

  void write_track_events(std::size_t index) {
    const Track& tr = trace_.tracks[index];
    const std::uint64_t uuid = track_uuid_[index];
    for (const TaskSpan& s : task_spans(tr)) {
      if (!range_.overlaps(s.begin_ns, s.end_ns)) continue;
      proto::Message begin = track_event(event::kSliceBegin, uuid, task_name(s.kind));
      annotate(begin, "task_id", s.id);  // the kind is in the slice's name
      emit(s.begin_ns, begin);
      emit(s.end_ns, track_event(event::kSliceEnd, uuid, ""));
    }
    for (const Event& e : tr.events) {
      if (!range_.contains(e.time_ns)) continue;
      const EventTraits k = event_traits(e.kind);
      if (k.level == LevelSource::Queue || k.level == LevelSource::Pool) {
        proto::Message c = track_event(event::kCounter, counter_uuid_.at({tr.device, k.level, k.level == LevelSource::Pool ? std::uint16_t{0} : e.aux}), "");
        c.sint64(event::kCounterValue, e.arg);
        emit(e.time_ns, c);
      } else if (k.marker) {
        write_marker(tr, uuid, e);
      }
    }
  }

  void write_marker(const Track& tr, std::uint64_t uuid, const Event& e) {
    proto::Message m = track_event(event::kInstant, uuid, event_kind_name(e.kind));
    for (const detail::NamedArg& a : detail::named_args(e, tr.device)) annotate(m, a.name, a.value);
    if (e.kind == EventKind::Steal) {
      const auto victim = worker_track_.find({steal_victim_device(e, tr.device), e.arg});
      if (victim != worker_track_.end()) {
        const std::uint64_t flow = ++last_flow_;
        proto::Message from = track_event(event::kInstant, track_uuid_[victim->second], kStolenFrom);
        annotate(from, kThiefWorker, tr.worker);
        annotate(from, kThiefDevice, tr.device);
        from.fixed64(event::kFlowIds, flow);
        emit(e.time_ns, from);
        m.fixed64(event::kTerminatingFlowIds, flow);
      }
    }
    emit(e.time_ns, m);
  }

  std::ostream& out_;
  const Trace& trace_;
  TimeRange range_;
  std::map<std::string, std::uint64_t> event_iids_, arg_iids_;
  std::uint64_t last_uuid_ = 0, last_flow_ = 0;
  std::map<std::uint32_t, std::uint64_t> device_uuid_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> sm_uuid_;
  std::map<std::tuple<std::uint32_t, LevelSource, std::uint16_t>, std::uint64_t> counter_uuid_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> worker_track_;  // (device, worker) -> track
  std::vector<std::uint64_t> track_uuid_;
};

}  // namespace

void write_perfetto(std::ostream& out, const Trace& trace, TimeRange range) { PerfettoWriter(out, trace, range).write(); }

}  // namespace gpulb::trace
