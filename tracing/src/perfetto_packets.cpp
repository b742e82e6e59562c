#include "perfetto_packets.hpp"

namespace gpulb::trace::detail {

std::uint64_t PerfettoPackets::iid_of(Names& names, std::string_view name) {
  auto it = names.iids.find(name);
  if (it == names.iids.end()) {
    it = names.iids.emplace(std::string(name), names.by_iid.size()).first;
    names.by_iid.push_back(it->first);  // a map's keys stay where they are
  }
  return it->second;
}

std::uint64_t PerfettoPackets::mark(const Names& names, std::uint64_t iid,
                                    std::uint32_t interned_field) {
  Sequence& s = sequences_[seq_];
  std::vector<bool>& seen =
      interned_field == pf::interned::kEventNames ? s.names : s.annotation_names;
  if (seen.size() <= iid) seen.resize(iid + 1);
  if (!seen[iid]) {
    seen[iid] = true;
    entry_.clear();
    entry_.uint(pf::interned::kIid, iid);
    entry_.string(pf::interned::kName, names.by_iid[iid]);
    interned_.message(interned_field, entry_);
  }
  return iid;
}

// The sequence's first packet: its state cleared, its defaults, and its incremental clock at 0.
void PerfettoPackets::start(std::size_t seq) {
  Sequence& s = sequences_[seq];
  s.started = true;
  proto::Message event_defaults, defaults, boottime, incremental, snapshot;
  event_defaults.uint(pf::defaults::kTrackUuid, s.track_uuid);
  if (s.extra_counter_uuid != 0)
    event_defaults.uint(pf::defaults::kExtraCounterTrackUuids, s.extra_counter_uuid);
  defaults.uint(pf::defaults::kTimestampClockId, pf::clock::kSequenceIncremental);
  defaults.message(pf::defaults::kTrackEventDefaults, event_defaults);
  boottime.uint(pf::clock::kClockId, pf::clock::kBoottime);
  boottime.uint(pf::clock::kTimestamp, 0);
  incremental.uint(pf::clock::kClockId, pf::clock::kSequenceIncremental);
  incremental.uint(pf::clock::kTimestamp, 0);
  incremental.boolean(pf::clock::kIsIncremental, true);
  snapshot.message(pf::clock::kClocks, boottime);
  snapshot.message(pf::clock::kClocks, incremental);
  snapshot.uint(pf::clock::kPrimaryTraceClock, pf::clock::kBoottime);
  packet_.clear();
  packet_.uint(pf::packet::kSequenceId, seq + kFirstSequenceId);
  packet_.uint(pf::packet::kSequenceFlags, pf::packet::kIncrementalStateCleared);
  packet_.message(pf::packet::kDefaults, defaults);
  packet_.message(pf::packet::kClockSnapshot, snapshot);
  packet_.append_as_field(buffer_, pf::kTracePacket);
}

void PerfettoPackets::emit(std::uint64_t time_ns) {
  Sequence& s = sequences_[seq_];
  if (!s.started) start(seq_);
  packet_.clear();
  if (time_ns >= s.last_ns) {
    packet_.uint(pf::packet::kTimestamp, time_ns - s.last_ns);
    s.last_ns = time_ns;
  } else {
    packet_.uint(pf::packet::kTimestamp, time_ns);
    packet_.uint(pf::packet::kTimestampClockId, pf::clock::kBoottime);
  }
  packet_.uint(pf::packet::kSequenceId, seq_ + kFirstSequenceId);
  packet_.uint(pf::packet::kSequenceFlags, pf::packet::kNeedsIncrementalState);
  if (!interned_.empty()) packet_.message(pf::packet::kInternedData, interned_);
  packet_.message(pf::packet::kTrackEvent, event_);
  packet_.append_as_field(buffer_, pf::kTracePacket);
  if (buffer_.size() >= kFlushBytes) flush();
}

}  // namespace gpulb::trace::detail
