// Chunks that moved between ranks: RankLend on the victim's host track paired with the
// RankSteal on the thief's, first in first out per (victim, thief); unpaired sides kept and flagged.
#include <gtest/gtest.h>

#include <vector>

#include "rank_transfers.hpp"
#include "shipped_traces.hpp"
#include "timeline_layout.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;
using trace::make_event;

// One CPU device and one host track per rank; the host tracks are tracks 0 .. ranks-1.
trace::Trace ranks_trace(const std::vector<std::vector<trace::Event>>& host_events) {
  trace::Trace t;
  t.meta.ranks = static_cast<std::uint32_t>(host_events.size());
  for (std::uint32_t r = 0; r < host_events.size(); ++r) {
    trace::Device d{trace::DeviceKind::Cpu, 0, "CPU", 4, 1};
    d.rank = r;
    t.devices.push_back(d);
    trace::Track host;
    host.role = trace::TrackRole::Host;
    host.device = r;
    host.name = "host: rank " + std::to_string(r);
    host.events = host_events[r];
    t.tracks.push_back(host);
  }
  return t;
}

TEST(RankTransfers, PairsEachLendWithItsArrivalInOrder) {
  // Rank 0 lends to rank 1 twice (3 then 3 tasks) and to rank 2 once; arrivals come later.
  const TraceModel m(ranks_trace({
      {make_event(100, EventKind::RankLend, 1, 3), make_event(200, EventKind::RankLend, 2, 5),
       make_event(300, EventKind::RankLend, 1, 3)},
      {make_event(150, EventKind::RankSteal, 0, 3), make_event(350, EventKind::RankSteal, 0, 3)},
      {make_event(260, EventKind::RankSteal, 0, 5)},
  }));
  const std::vector<RankTransfer> t = rank_transfers(m);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].from_rank, 0u);
  EXPECT_EQ(t[0].to_rank, 1u);
  EXPECT_EQ(t[0].lend_ns, 100u);
  EXPECT_EQ(t[0].arrive_ns, 150u);  // FIFO: the first lend gets the first arrival
  EXPECT_EQ(t[0].lend_track, 0u);
  EXPECT_EQ(t[0].arrive_track, 1u);
  EXPECT_EQ(t[1].to_rank, 2u);
  EXPECT_EQ(t[1].tasks, 5u);
  EXPECT_EQ(t[1].arrive_ns, 260u);
  EXPECT_EQ(t[1].arrive_track, 2u);
  EXPECT_EQ(t[2].lend_ns, 300u);
  EXPECT_EQ(t[2].arrive_ns, 350u);
  for (const RankTransfer& x : t) EXPECT_TRUE(x.paired);
}

TEST(RankTransfers, ArrivalMustCarryTheLendsTasks) {
  // Rank 1's RankSteal at 120 carries 4 tasks, not 2: not the lend's. The one at 140 is; the
  // 4 tasks stay unpaired.
  const TraceModel m(ranks_trace({
      {make_event(100, EventKind::RankLend, 1, 2)},
      {make_event(120, EventKind::RankSteal, 0, 4), make_event(140, EventKind::RankSteal, 0, 2)},
  }));
  const std::vector<RankTransfer> t = rank_transfers(m);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(t[0].paired);
  EXPECT_EQ(t[0].lend_ns, 100u);
  EXPECT_EQ(t[0].arrive_ns, 140u);
  EXPECT_EQ(t[0].tasks, 2u);
  EXPECT_FALSE(t[1].paired);  // the 4 tasks at 120
  EXPECT_EQ(t[1].lend_track, kNoTransferTrack);
  EXPECT_EQ(t[1].tasks, 4u);
  EXPECT_EQ(t[1].from_rank, 0u);
  EXPECT_EQ(t[1].to_rank, 1u);
}

// The merged trace puts each rank on rank 0's clock by an estimated offset
// (ping-pong, docs/distributed.md), so an arrival can read earlier than its lend when the estimate
// is off by more than the chunk took to travel (over a network: tens of microseconds both). Such
// a transfer was left unpaired, and an unpaired one is never drawn: no arrow, and no note. MPI
// delivers the messages of one sender to one receiver in order (non-overtaking), so the k-th
// chunk rank v lent to rank t is the k-th that t received from v, whatever the clocks say.
TEST(RankTransfers, PairsByMessageOrderEvenWhereTheArrivalReadsBeforeTheLend) {
  const TraceModel m(ranks_trace({
      {make_event(1000, EventKind::RankLend, 1, 20), make_event(5000, EventKind::RankLend, 1, 20)},
      {make_event(970, EventKind::RankSteal, 0, 20), make_event(5040, EventKind::RankSteal, 0, 20)},
  }));
  const std::vector<RankTransfer> t = rank_transfers(m);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(t[0].paired);
  EXPECT_EQ(t[0].lend_ns, 1000u);
  EXPECT_EQ(t[0].arrive_ns, 970u);  // 30 ns "before": the clocks' error, drawn as it is
  EXPECT_TRUE(t[1].paired);
  EXPECT_EQ(t[1].lend_ns, 5000u);
  EXPECT_EQ(t[1].arrive_ns, 5040u);
  const RankTransfersInView v = rank_transfers_in_view(t, 0.0, 10000.0);
  EXPECT_EQ(v.shown, (std::vector<std::size_t>{0, 1}));
}

TEST(RankTransfers, UnpairedTransfersInViewAreSaidInTheNote) {
  // One side only (a dropped event, a rank's trace cut short): no arrow can be drawn, so the note
  // says how many, instead of nothing.
  std::vector<RankTransfer> t;
  t.push_back({0, 1, 3, 100, 150, 0, 1, true});
  t.push_back({2, 1, 5, 200, 200, kNoTransferTrack, 1, false});
  t.push_back({2, 3, 5, 9000, 9000, 2, kNoTransferTrack, false});  // out of view
  const RankTransfersInView v = rank_transfers_in_view(t, 0.0, 1000.0);
  EXPECT_EQ(v.shown, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(v.arrows);
  EXPECT_EQ(v.unpaired_in_view, 1u);
  EXPECT_NE(v.note.find("1 rank transfer with one side only"), std::string::npos) << v.note;
}

TEST(RankTransfers, LendWithoutArrivalIsKeptAndFlagged) {
  const TraceModel m(ranks_trace({
      {make_event(10, EventKind::RankLend, 1, 7)},
      {make_event(5, EventKind::KernelLaunch)},  // no arrival: rank 1's trace was cut short
  }));
  const std::vector<RankTransfer> t = rank_transfers(m);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0].paired);
  EXPECT_EQ(t[0].lend_track, 0u);
  EXPECT_EQ(t[0].arrive_track, kNoTransferTrack);
  EXPECT_EQ(t[0].arrive_ns, 10u);
  EXPECT_EQ(t[0].tasks, 7u);
}

TEST(RankTransfers, CountsPerPairOfRanks) {
  const TraceModel m(ranks_trace({
      {make_event(100, EventKind::RankLend, 1, 3), make_event(110, EventKind::RankLend, 1, 2),
       make_event(400, EventKind::RankSteal, 2, 6)},
      {make_event(130, EventKind::RankSteal, 0, 3), make_event(140, EventKind::RankSteal, 0, 2)},
      {make_event(390, EventKind::RankLend, 0, 6), make_event(500, EventKind::RankLend, 1, 1)},
  }));
  const auto counts = count_by_pair(rank_transfers(m));
  ASSERT_EQ(counts.size(), 3u);
  const RankPairCount& a = counts.at({0, 1});
  EXPECT_EQ(a.chunks, 2u);
  EXPECT_EQ(a.tasks, 5u);
  EXPECT_EQ(a.unpaired, 0u);
  const RankPairCount& b = counts.at({2, 0});
  EXPECT_EQ(b.chunks, 1u);
  EXPECT_EQ(b.tasks, 6u);
  EXPECT_EQ(b.unpaired, 0u);
  const RankPairCount& c = counts.at({2, 1});
  EXPECT_EQ(c.chunks, 1u);
  EXPECT_EQ(c.unpaired, 1u);
}

TEST(RankTransfers, OneProcessTraceHasNone) {
  const TraceModel m(ranks_trace({{make_event(1, EventKind::KernelLaunch)}}));
  EXPECT_TRUE(rank_transfers(m).empty());
}

TEST(RankTransfers, ArrowsInViewAreCappedWithANote) {
  std::vector<RankTransfer> t;
  for (std::uint64_t i = 0; i < kMaxRankArrows + 5; ++i)
    t.push_back({0, 1, 1, 100 * i, 100 * i + 50, 0, 1, true});
  t.push_back({0, 1, 1, 20, 20, 0, kNoTransferTrack, false});  // unpaired: never an arrow
  // An arrow that starts before the view and ends in it counts; one wholly before it does not.
  const RankTransfersInView few = rank_transfers_in_view(t, 120.0, 310.0);
  EXPECT_EQ(few.shown, (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(few.in_view, 3u);
  EXPECT_TRUE(few.arrows);
  EXPECT_TRUE(few.note.empty()) << few.note;
  const RankTransfersInView all = rank_transfers_in_view(t, 0.0, 1e9);
  EXPECT_EQ(all.in_view, kMaxRankArrows + 5);
  EXPECT_FALSE(all.arrows);
  EXPECT_TRUE(all.shown.empty());
  EXPECT_NE(all.note.find(std::to_string(kMaxRankArrows + 5) + " rank transfers in view"),
            std::string::npos)
      << all.note;
  EXPECT_NE(all.note.find("zoom in"), std::string::npos) << all.note;
}

// Hovering a rank arrow shows what moved, between which ranks, and when.
TEST(RankArrows, TheArrowUnderTheMouseIsFoundAndDescribed) {
  const std::vector<RankArrow> arrows = {{0, 100, 50, 140, 250}, {1, 300, 250, 310, 50}};
  EXPECT_EQ(rank_arrow_at(arrows, 120, 150), 0);   // on the first segment, halfway
  EXPECT_EQ(rank_arrow_at(arrows, 123, 150), 0);   // 3 px off it
  EXPECT_EQ(rank_arrow_at(arrows, 130, 150), -1);  // 10 px off: neither
  EXPECT_EQ(rank_arrow_at(arrows, 305, 150), 1);
  EXPECT_EQ(rank_arrow_at(arrows, 100, 45), -1);  // past the lend's end
  EXPECT_EQ(rank_arrow_at({}, 100, 50), -1);
  const RankTransfer t{3, 1, 20, 1'500'000, 1'710'000, 6, 2, true};
  const std::vector<std::string> lines = rank_transfer_lines(t, 1'000'000.0);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "20 tasks moved from rank 3 to rank 1");
  EXPECT_NE(lines[1].find("500"), std::string::npos) << lines[1];  // 0.5 ms after the origin
  EXPECT_NE(lines[1].find("rank 3"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("710"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("210"), std::string::npos) << lines[3];  // 210 us in transit
  const RankTransfer early{0, 2, 1, 1000, 970, 0, 4, true};
  EXPECT_NE(rank_transfer_lines(early, 0).back().find("before the lend"), std::string::npos);
}

// The shipped 4-rank trace (a real run: mpirun -np 4 ... --distributed): every chunk that moved is
// paired and in view at Fit, each rank's host row holds that rank's own lends and steals (what the
// file says, kind by kind), and the layout puts the 4 ranks, their host lanes first, on one axis.
TEST(RankTransfers, TheShipped4RankTraceDrawsAnArrowPerChunkBetweenItsRanksHostRows) {
  const TraceModel& m = testing::recorded(testing::kUts4Ranks);
  ASSERT_EQ(m.header().meta.ranks, 4u);
  const std::vector<RankTransfer> t = rank_transfers(m);
  ASSERT_GE(t.size(), 3u);
  const RankTransfersInView v =
      rank_transfers_in_view(t, static_cast<double>(m.begin_ns()), static_cast<double>(m.end_ns()));
  EXPECT_EQ(v.shown.size(), t.size()) << "an arrow for every chunk";
  EXPECT_TRUE(v.note.empty()) << v.note;
  const TimelineLayout l = layout_timeline(m, default_folds(m), 900.0f, 13.0f);
  for (const RankTransfer& x : t) {
    EXPECT_TRUE(x.paired);
    EXPECT_NE(x.from_rank, x.to_rank);
    // Its two ends are host lanes of the two ranks, laid out.
    for (const auto& [track, rank] :
         {std::pair{x.lend_track, x.from_rank}, std::pair{x.arrive_track, x.to_rank}}) {
      const trace::Track& tr = m.header().tracks.at(track);
      EXPECT_EQ(tr.role, trace::TrackRole::Host);
      EXPECT_EQ(m.header().devices.at(tr.device).rank, rank);
    }
  }
  // The counter tracks name their rank ("rank 2 CPU queue 0"), not four alike "CPU queue 0".
  ASSERT_FALSE(m.queues().empty());
  for (const QueueSeries& q : m.queues()) EXPECT_EQ(q.label.rfind("rank ", 0), 0u) << q.label;
  // Each rank's host lane: its markers of kinds 18 and 19 are its track's events, and name other ranks.
  std::size_t rank_rows = 0;
  for (const TimelineRow& r : l.rows) rank_rows += r.kind == RowKind::Rank;
  EXPECT_EQ(rank_rows, 4u);
  for (const RankGroup& g : m.ranks()) {
    ASSERT_EQ(g.host_lanes.size(), 1u);
    const Lane& lane = m.lanes()[g.host_lanes[0]];
    EXPECT_EQ(m.header().devices[lane.device].rank, g.rank);
    const EventColumns& ev = m.events(lane.track);
    std::size_t j = 0;
    for (const Marker& k : lane.markers) {
      if (k.kind != EventKind::RankSteal && k.kind != EventKind::RankLend) continue;
      while (j < ev.size() && ev.kind(j) != EventKind::RankSteal &&
             ev.kind(j) != EventKind::RankLend)
        ++j;
      ASSERT_LT(j, ev.size());
      EXPECT_EQ(k.kind, ev.kind(j));
      EXPECT_EQ(k.arg, ev.arg(j));
      EXPECT_EQ(k.aux, ev.aux(j));
      EXPECT_NE(k.arg, g.rank) << "the other rank";
      ++j;
    }
  }
}

}  // namespace
}  // namespace gpulb::viewer
