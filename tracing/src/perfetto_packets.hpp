// How the Perfetto export spends its bytes: one packet sequence per track, so that a packet
// omits what its sequence already said (perfetto_trace.proto, TracePacket):
//   - the sequence's first packet clears its incremental state and sets its defaults: the track
//     (TrackEventDefaults.track_uuid), the device's busy-workers counter (its
//     extra_counter_track_uuids, whose values ride on the slice packets) and the clock: a
//     ClockSnapshot ties a sequence-scoped incremental clock (id 64) to BOOTTIME at the export's
//     time 0, so each packet's timestamp is the delta from the sequence's previous packet;
//   - names (event names and annotation names) are interned: written once per sequence, in the
//     packet that first uses them, and referred to by iid after;
//   - every later packet says SEQ_NEEDS_INCREMENTAL_STATE, as the schema requires of packets that
//     rely on defaults or interned data.
// A packet whose time is before its sequence's previous one (a hand-made trace out of order)
// carries an absolute BOOTTIME timestamp instead, leaving the incremental clock where it was.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "perfetto_fields.hpp"
#include "protobuf_writer.hpp"

namespace gpulb::trace::detail {

class PerfettoPackets {
 public:
  explicit PerfettoPackets(std::ostream& out) : out_(out) {}

  // The buffer the track descriptors go into, before any event.
  std::string& buffer() { return buffer_; }

  // Sequence i (one per trace track) and its defaults: its track, and the counter whose value
  // extra_counter_value() sets (0: none).
  void add_sequence(std::uint64_t track_uuid, std::uint64_t extra_counter_uuid) {
    Sequence& s = sequences_.emplace_back();
    s.track_uuid = track_uuid;
    s.extra_counter_uuid = extra_counter_uuid;
  }

  // A TrackEvent of `type` on sequence `seq`'s track, or on `track_uuid` where it is not 0.
  void begin_event(std::size_t seq, std::uint64_t type, std::uint64_t track_uuid = 0) {
    seq_ = seq;
    event_.clear();
    interned_.clear();
    event_.uint(pf::event::kType, type);
    if (track_uuid != 0) event_.uint(pf::event::kTrackUuid, track_uuid);
  }
  // Names by iid, for a writer that looks each name up once (a task kind's, an event kind's).
  std::uint64_t event_name_iid(std::string_view name) { return iid_of(names_, name); }
  std::uint64_t annotation_name_iid(std::string_view name) {
    return iid_of(annotation_names_, name);
  }
  void name(std::uint64_t iid) {
    event_.uint(pf::event::kNameIid, mark(names_, iid, pf::interned::kEventNames));
  }
  void annotate(std::uint64_t name_iid, std::uint64_t value) {
    annotation_.clear();
    annotation_.uint(pf::annotation::kNameIid,
                     mark(annotation_names_, name_iid, pf::interned::kAnnotationNames));
    annotation_.uint(pf::annotation::kUintValue, value);
    event_.message(pf::event::kDebugAnnotations, annotation_);
  }
  void name(std::string_view name) { this->name(event_name_iid(name)); }
  void annotate(std::string_view name, std::uint64_t value) {
    annotate(annotation_name_iid(name), value);
  }
  void counter_value(std::int64_t v) { event_.int64(pf::event::kCounterValue, v); }
  void extra_counter_value(std::int64_t v) { event_.int64(pf::event::kExtraCounterValues, v); }
  void flow(std::uint64_t id) { event_.fixed64(pf::event::kFlowIds, id); }
  void terminating_flow(std::uint64_t id) { event_.fixed64(pf::event::kTerminatingFlowIds, id); }
  // Writes the event at `time_ns` on the export's clock.
  void emit(std::uint64_t time_ns);

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  struct Sequence {
    std::uint64_t track_uuid = 0, extra_counter_uuid = 0;
    std::uint64_t last_ns = 0;
    bool started = false;
    std::vector<bool> names, annotation_names;  // by iid: interned on this sequence
  };
  struct Names {
    std::map<std::string, std::uint64_t, std::less<>> iids;
    std::vector<std::string_view> by_iid{""};  // iid 0 is no name
  };
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  // Sequence 1 is the tracing service's own in a recorded trace (its clock snapshots and stats),
  // which some readers treat apart; a track's sequence is its index + 2.
  static constexpr std::size_t kFirstSequenceId = 2;

  static std::uint64_t iid_of(Names& names, std::string_view name);
  // Interns `iid` on the current sequence where it is new there; returns it.
  std::uint64_t mark(const Names& names, std::uint64_t iid, std::uint32_t interned_field);
  void start(std::size_t seq);

  std::ostream& out_;
  std::string buffer_;
  std::vector<Sequence> sequences_;
  Names names_, annotation_names_;
  std::size_t seq_ = 0;
  proto::Message event_, interned_, annotation_, entry_, packet_;
};

}  // namespace gpulb::trace::detail
