// Spawn flows of the Perfetto export: an arrow from the instant where a task's SpawnBatch names its
// children to each child's slice.
//
// Perfetto's trace processor sorts events by timestamp, equal timestamps by their place in the file
// (TraceSorter's TimestampedEvent order), before it reads them, and drops a terminating flow id
// whose flow it has not seen start (TrackEventParser ends only an active flow). The export reads
// events merged in time (ties in track order) and writes each packet as it reads its event, so a
// child's slice read after its parent's batch is read after it by Perfetto too, and ends its flow;
// one read before (a child the trace places before its parent) ends none: the export writes no end
// whose start it has not written. A start whose child never shows (its begin dropped, outside the
// range, before its parent) is harmless: Perfetto draws no arrow for a flow with one end.
//
// Which ids were announced is kept without a table per task, as merged ranges: ids come from one
// counter in consecutive blocks (gpulb/spawn.hpp), so neighbouring batches merge and the set stays
// a few ranges. What a damaged or hand-made trace can make of it is bounded: a batch naming an id
// already announced gets no flows (one flow per id, never a second start of a live one), the flows
// in all are at most the trace's task begins (each child begins once, so the output grows at most
// 20 bytes a task), and the ranges at most kMaxRanges; past a bound no further flow starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace gpulb::trace::detail {

class SpawnFlows {
 public:
  // About 64 bytes a range in a std::map: 16 MB at the cap.
  static constexpr std::size_t kMaxRanges = std::size_t{1} << 18;
  // Steal flows count up from 1 (export_perfetto.cpp); a spawn flow is its child's id with the top
  // bit set, so the two never meet.
  static constexpr std::uint64_t kSpawnFlowBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t flow_id(std::uint32_t child) { return kSpawnFlowBit | child; }

  // max_flows: the most flows to start in all (the trace's task begins).
  explicit SpawnFlows(std::uint64_t max_flows, std::size_t max_ranges = kMaxRanges)
      : max_flows_(max_flows), max_ranges_(max_ranges) {}

  // Children first .. first + count - 1 (ids past 2^32 - 1 do not exist and are cut off). Returns
  // how many of them get a flow: all of them, or 0 where one of them was announced already or a
  // bound (see the top) would be passed.
  std::uint32_t announce(std::uint32_t first, std::uint32_t count);

  // Whether an earlier announce started a flow to `child`.
  bool started(std::uint32_t child) const;

  std::size_t ranges() const { return ranges_.size(); }

 private:
  bool overlaps(std::uint64_t begin, std::uint64_t end) const;
  void add(std::uint64_t begin, std::uint64_t end);

  std::map<std::uint64_t, std::uint64_t> ranges_;  // [begin, end): disjoint, none touching another
  std::uint64_t flows_ = 0;
  std::uint64_t max_flows_;
  std::size_t max_ranges_;
};

}  // namespace gpulb::trace::detail
