// The Perfetto export's track tree (perfetto_tracks.cpp): one TrackDescriptor per rank (of a
// distributed run), device, SM, worker and host thread, nested with parent_uuid as the viewer's
// rows are, and the counter tracks of each device: its busy workers, the sum of its deques, each
// queue and the host pool. Written once, before any event; the events refer to the uuids.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::trace::detail {

class PerfettoTracks {
 public:
  // Appends the descriptors to `out`. `device_note` goes into each device's description ("" none).
  PerfettoTracks(const Trace& trace, std::string& out, const std::string& device_note);

  std::uint64_t track(std::size_t index) const { return track_uuid_[index]; }
  // The track of worker `worker` of `device` (a steal's victim), if the trace has it.
  std::optional<std::size_t> worker_track(std::uint32_t device, std::uint32_t worker) const;
  // A queue's or the host pool's counter (aux: the queue; 0 for the pool), 0 where there is none.
  std::uint64_t level_counter(std::uint32_t device, LevelSource source, std::uint16_t aux) const;
  // Workers of the device running a task; 0 where the device has no worker track.
  std::uint64_t busy_counter(std::uint32_t device) const { return find(busy_uuid_, device); }
  // The device's deques summed; 0 where no DequeLevel was recorded on it.
  std::uint64_t deques_counter(std::uint32_t device) const { return find(deques_uuid_, device); }

 private:
  static std::uint64_t find(const std::map<std::uint32_t, std::uint64_t>& m, std::uint32_t device) {
    const auto it = m.find(device);
    return it == m.end() ? 0 : it->second;
  }
  std::uint64_t new_uuid() { return ++last_uuid_; }
  void describe(std::uint64_t uuid, const std::string& name, std::uint64_t parent,
                std::int64_t order, bool counter = false, const std::string& description = "");
  void describe_devices(const std::string& device_note);
  void describe_counters(std::map<std::uint32_t, std::int64_t>& order);
  template <typename Which>
  void describe_tracks(std::map<std::uint32_t, std::int64_t>& order, Which which);
  std::uint64_t parent_of(const Track& tr, std::int64_t& order);
  std::uint64_t device_or_root(std::uint32_t device) const { return find(device_uuid_, device); }

  const Trace& trace_;
  std::string& out_;
  std::uint64_t last_uuid_ = 0;
  std::map<std::uint32_t, std::uint64_t> device_uuid_, busy_uuid_, deques_uuid_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> sm_uuid_;
  std::map<std::tuple<std::uint32_t, LevelSource, std::uint16_t>, std::uint64_t> level_uuid_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t>
      worker_track_;  // (device, worker) -> track
  std::vector<std::uint64_t> track_uuid_;
};

}  // namespace gpulb::trace::detail
