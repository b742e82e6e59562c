// Spawn flows of the Perfetto export: an arrow from the instant where a task's SpawnBatch names its
// children to each child's slice.
//
// Perfetto's trace processor sorts events by timestamp, equal timestamps by their place in the file
// (TraceSorter's TimestampedEvent order), before it reads them, and drops a terminating flow id
// whose flow it has not seen start (TrackEventParser ends only an active flow): an end read before
// its start draws nothing, and the start then dangles. The export writes no such end. It writes
// packets in the order it reads events (merged in time, ties in track order), so a child's slice
// ends its flow where its parent's batch was read before it, at a time no later than the child's
// begin: Perfetto then reads the start first as well. (The time check matters only for a track out
// of time order, which no writer makes.) Which ids were announced is kept without a table per
// task, as merged ranges: ids come from one counter in consecutive blocks (gpulb/spawn.hpp), so
// neighbouring batches merge and the set stays a few ranges; a cap bounds it for a trace whose
// batches never merge (hand-made or damaged), after which no further flow starts (nor, so, ends).
// A start whose child never shows (its begin dropped, outside the range, before its
// parent in time) is harmless: Perfetto draws no arrow for a flow with one end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace gpulb::trace::detail {

class SpawnFlows {
 public:
  // About 64 bytes a range in a std::map: 16 MB at the cap.
  static constexpr std::size_t kMaxRanges = std::size_t{1} << 18;
  // Steal flows count up from 1 (export_perfetto.cpp); a spawn flow is its child's id with the top
  // bit set, so the two never meet.
  static constexpr std::uint64_t kSpawnFlowBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t flow_id(std::uint32_t child) { return kSpawnFlowBit | child; }

  explicit SpawnFlows(std::size_t max_ranges = kMaxRanges) : max_ranges_(max_ranges) {}

  // Children first .. first + count - 1 spawned at time_ns (ids past 2^32 - 1 do not exist and are
  // cut off). Returns how many of them get a flow: all of those, or 0 where the set is full.
  std::uint32_t announce(std::uint32_t first, std::uint32_t count, std::uint64_t time_ns);

  // Whether a flow to `child` was announced, at time_ns or before, by an earlier call.
  bool started(std::uint32_t child, std::uint64_t time_ns);

  std::size_t ranges() const { return ranges_.size() + fresh_.size(); }

 private:
  struct Fresh {
    std::uint64_t begin, end, time_ns;
  };
  void promote(std::uint64_t now_ns);  // makes the ranges announced at now_ns or before visible
  void add(std::uint64_t begin, std::uint64_t end);

  std::map<std::uint64_t, std::uint64_t> ranges_;  // [begin, end): disjoint, none touching another
  std::vector<Fresh> fresh_;                       // announced at a time later than an event read since
  std::size_t max_ranges_;
};

}  // namespace gpulb::trace::detail
