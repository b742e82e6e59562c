// Chunks of tasks that moved between the ranks of a distributed run: each RankLend on
// the victim's host track paired with the RankSteal on the thief's host track that received it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include "trace_model.hpp"

namespace gpulb::viewer {

inline constexpr std::uint32_t kNoTransferTrack = 0xFFFFFFFFu;

struct RankTransfer {
  std::uint32_t from_rank = 0;                    // the victim (lender)
  std::uint32_t to_rank = 0;                      // the thief
  std::uint32_t tasks = 0;                        // aux of the events (saturating at 65535)
  std::uint64_t lend_ns = 0;                      // RankLend on the victim's host track
  std::uint64_t arrive_ns = 0;                    // RankSteal on the thief's host track
  std::uint32_t lend_track = kNoTransferTrack;    // index into Trace::tracks
  std::uint32_t arrive_track = kNoTransferTrack;  // index into Trace::tracks
  // false: only one side was recorded (a dropped event, a rank's trace cut short). The missing
  // side's track is kNoTransferTrack and its time is the recorded side's.
  bool paired = false;
};

// Every RankLend paired with the next RankSteal on a host track of the thief's rank that names
// the same victim and task count, in message order per (victim, thief) (MPI does not reorder one
// sender's messages to one receiver), not by time: the ranks' clocks are aligned by an estimate,
// and an arrival may read a little before its lend. Sorted by lend time (arrival time where no
// lend was recorded).
std::vector<RankTransfer> rank_transfers(const TraceModel& model);

struct RankPairCount {
  std::size_t chunks = 0;  // transfers, paired or not
  std::uint64_t tasks = 0;
  std::size_t unpaired = 0;
};
// Per (from_rank, to_rank).
std::map<std::pair<std::uint32_t, std::uint32_t>, RankPairCount> count_by_pair(
    std::span<const RankTransfer> transfers);

// Arrows in the timeline, lender's host track at lend time -> thief's at arrival: drawn while few
// enough are in view to read (as steal arrows), and otherwise said so.
inline constexpr std::size_t kMaxRankArrows = 60;

struct RankTransfersInView {
  std::vector<std::size_t>
      shown;                // paired transfers whose arrow crosses [t0, t1] (indices), when drawn
  std::size_t in_view = 0;  // paired transfers whose arrow crosses [t0, t1]
  bool arrows = true;       // drawn: at most kMaxRankArrows
  // transfers with one side only whose time is in [t0, t1]: never drawn
  std::size_t unpaired_in_view = 0;
  // Why not, when not: "900 rank transfers in view: arrows drawn at 60 or fewer (zoom in)"; and
  // transfers with one side only, which no arrow shows: "2 rank transfers with one side only ...".
  std::string note;
};

RankTransfersInView rank_transfers_in_view(std::span<const RankTransfer> transfers, double t0_ns,
                                           double t1_ns);

// An arrow as drawn: from the lend (x0, y0) to the arrival (x1, y1), screen pixels.
struct RankArrow {
  std::size_t transfer = 0;  // index into the transfers
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
inline constexpr float kRankArrowHoverPx = 4.0f;

// The arrow within `tolerance` px of (x, y), the nearest where several are: an index into
// `arrows`, or -1.
int rank_arrow_at(std::span<const RankArrow> arrows, float x, float y,
                  float tolerance = kRankArrowHoverPx);

// The hovered arrow's tooltip, a line each: what moved, from which rank to which, when it left
// and when it arrived (times since `origin_ns`), and how long it took or, where the arrival
// reads before the lend, that the ranks' clocks disagree by that much.
std::vector<std::string> rank_transfer_lines(const RankTransfer& t, double origin_ns);

}  // namespace gpulb::viewer
