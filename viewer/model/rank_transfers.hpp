// Chunks of tasks that moved between the ranks of a distributed run (issue 15): each RankLend on
// the victim's host track paired with the RankSteal on the thief's host track that received it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "trace_model.hpp"

namespace gpulb::viewer {

inline constexpr std::uint32_t kNoTransferTrack = 0xFFFFFFFFu;

struct RankTransfer {
  std::uint32_t from_rank = 0;  // the victim (lender)
  std::uint32_t to_rank = 0;    // the thief
  std::uint32_t tasks = 0;      // aux of the events (saturating at 65535)
  std::uint64_t lend_ns = 0;    // RankLend on the victim's host track
  std::uint64_t arrive_ns = 0;  // RankSteal on the thief's host track
  std::uint32_t lend_track = kNoTransferTrack;    // index into Trace::tracks
  std::uint32_t arrive_track = kNoTransferTrack;  // index into Trace::tracks
  // false: only one side was recorded (a dropped event, a rank's trace cut short). The missing
  // side's track is kNoTransferTrack and its time is the recorded side's.
  bool paired = false;
};

// Every RankLend paired with the first unmatched RankSteal on a host track of the thief's rank
// that names the same victim and task count, at or after the lend (first in, first out per
// victim and thief). Sorted by lend time (arrival time where no lend was recorded).
std::vector<RankTransfer> rank_transfers(const TraceModel& model);

struct RankPairCount {
  std::size_t chunks = 0;    // transfers, paired or not
  std::uint64_t tasks = 0;
  std::size_t unpaired = 0;
};
// Per (from_rank, to_rank).
std::map<std::pair<std::uint32_t, std::uint32_t>, RankPairCount> count_by_pair(std::span<const RankTransfer> transfers);

}  // namespace gpulb::viewer
