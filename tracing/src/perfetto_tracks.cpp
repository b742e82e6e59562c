#include "perfetto_tracks.hpp"

#include <set>

#include "perfetto_fields.hpp"
#include "protobuf_writer.hpp"

namespace gpulb::trace::detail {
namespace {

std::string device_name(const Trace& t, std::uint32_t device) {
  if (device >= t.devices.size()) return "device " + std::to_string(device);
  const Device& d = t.devices[device];
  return d.kind == DeviceKind::Gpu ? "GPU " + std::to_string(d.index) + ": " + d.name : d.name;
}

// What each device records: worker tracks, deque levels, queues and the host pool.
struct DeviceCounters {
  bool workers = false, deques = false, pool = false;
  std::set<std::uint16_t> queues;
};

std::map<std::uint32_t, DeviceCounters> counters_of(const Trace& t) {
  std::map<std::uint32_t, DeviceCounters> out;
  for (const Track& tr : t.tracks) {
    DeviceCounters& c = out[tr.device];
    if (tr.role != TrackRole::Host && !tr.events.empty()) c.workers = true;
    for (const Event& e : tr.events) {
      switch (event_traits(e.kind).level) {
        case LevelSource::Queue: c.queues.insert(e.aux); break;
        case LevelSource::Deque: c.deques = true; break;
        case LevelSource::Pool: c.pool = true; break;
        case LevelSource::None: break;
      }
    }
  }
  return out;
}

}  // namespace

PerfettoTracks::PerfettoTracks(const Trace& trace, std::string& out, const std::string& device_note)
    : trace_(trace), out_(out) {
  describe_devices(device_note);
  // Under each device: its host tracks, its counters, its SMs (each with its workers), then the
  // workers of no known SM.
  std::map<std::uint32_t, std::int64_t> order;
  track_uuid_.resize(trace_.tracks.size());
  describe_tracks(order, [](const Track& tr) { return tr.role == TrackRole::Host; });
  describe_counters(order);
  describe_tracks(
      order, [](const Track& tr) { return tr.role != TrackRole::Host && tr.sm != Track::kNoSm; });
  describe_tracks(
      order, [](const Track& tr) { return tr.role != TrackRole::Host && tr.sm == Track::kNoSm; });
}

std::optional<std::size_t> PerfettoTracks::worker_track(std::uint32_t device,
                                                        std::uint32_t worker) const {
  const auto it = worker_track_.find({device, worker});
  if (it == worker_track_.end()) return std::nullopt;
  return it->second;
}

std::uint64_t PerfettoTracks::level_counter(std::uint32_t device, LevelSource source,
                                            std::uint16_t aux) const {
  const auto it =
      level_uuid_.find({device, source, source == LevelSource::Pool ? std::uint16_t{0} : aux});
  return it == level_uuid_.end() ? 0 : it->second;
}

void PerfettoTracks::describe(std::uint64_t uuid, const std::string& name, std::uint64_t parent,
                              std::int64_t order, bool counter, const std::string& description) {
  proto::Message d;
  d.uint(pf::descriptor::kUuid, uuid);
  d.string(pf::descriptor::kName, name);
  if (parent != 0) d.uint(pf::descriptor::kParentUuid, parent);
  d.uint(pf::descriptor::kChildOrdering, pf::descriptor::kOrderExplicit);
  d.int64(pf::descriptor::kSiblingOrderRank, order);
  if (!description.empty()) d.string(pf::descriptor::kDescription, description);
  if (counter) {
    proto::Message c;
    c.uint(pf::descriptor::kCounterUnit, pf::descriptor::kUnitCount);
    d.message(pf::descriptor::kCounter, c);
  }
  proto::Message p;
  p.message(pf::packet::kTrackDescriptor, d);
  p.append_as_field(out_, pf::kTracePacket);
}

void PerfettoTracks::describe_devices(const std::string& device_note) {
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
    describe(device_uuid_[d], device_name(trace_, d), r == rank_uuid.end() ? 0 : r->second, d,
             false, device_note);
  }
}

void PerfettoTracks::describe_counters(std::map<std::uint32_t, std::int64_t>& order) {
  for (const auto& [device, c] : counters_of(trace_)) {
    std::int64_t& next = order[device];
    const std::uint64_t parent = device_or_root(device);
    if (c.workers) describe(busy_uuid_[device] = new_uuid(), "busy workers", parent, next++, true);
    if (c.deques)
      describe(deques_uuid_[device] = new_uuid(), "deques (sum, tasks)", parent, next++, true);
    for (const std::uint16_t q : c.queues) {
      const std::uint64_t uuid = level_uuid_[{device, LevelSource::Queue, q}] = new_uuid();
      describe(uuid, "queue " + std::to_string(q) + " (tasks)", parent, next++, true);
    }
    if (c.pool)
      describe(level_uuid_[{device, LevelSource::Pool, 0}] = new_uuid(), "host pool (tasks)",
               parent, next++, true);
  }
}

template <typename Which>
void PerfettoTracks::describe_tracks(std::map<std::uint32_t, std::int64_t>& order, Which which) {
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
std::uint64_t PerfettoTracks::parent_of(const Track& tr, std::int64_t& order) {
  const std::uint64_t device = device_or_root(tr.device);
  if (tr.role == TrackRole::Host || tr.sm == Track::kNoSm) return device;
  auto [it, added] = sm_uuid_.try_emplace({tr.device, tr.sm}, 0);
  if (added) {
    it->second = new_uuid();
    describe(it->second, "SM " + std::to_string(tr.sm), device, order++);
  }
  return it->second;
}

}  // namespace gpulb::trace::detail
