#include "rank_transfers.hpp"

#include <algorithm>
#include <tuple>

namespace gpulb::viewer {

namespace {

struct HostEvent {
  std::uint64_t time_ns;
  std::uint32_t self_rank, other_rank, tasks, track;
};

}  // namespace

std::vector<RankTransfer> rank_transfers(const TraceModel& model) {
  const trace::Trace& h = model.header();
  std::vector<HostEvent> lends, steals;
  for (std::uint32_t i = 0; i < h.tracks.size(); ++i) {
    const trace::Track& tr = h.tracks[i];
    if (tr.role != trace::TrackRole::Host) continue;
    const std::uint32_t rank = tr.device < h.devices.size() ? h.devices[tr.device].rank : 0;
    const EventColumns& ev = model.events(i);
    for (std::size_t j = 0; j < ev.size(); ++j) {
      const trace::EventKind k = ev.kind(j);
      if (k != trace::EventKind::RankLend && k != trace::EventKind::RankSteal) continue;
      (k == trace::EventKind::RankLend ? lends : steals).push_back({ev.time_ns(j), rank, ev.arg(j), ev.aux(j), i});
    }
  }
  const auto by_time = [](const HostEvent& a, const HostEvent& b) { return std::tie(a.time_ns, a.track) < std::tie(b.time_ns, b.track); };
  std::stable_sort(lends.begin(), lends.end(), by_time);
  std::stable_sort(steals.begin(), steals.end(), by_time);

  // Arrivals per (victim, thief), in time order; matched ones are taken out of the running.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> arrivals;
  for (std::size_t s = 0; s < steals.size(); ++s) arrivals[{steals[s].other_rank, steals[s].self_rank}].push_back(s);
  std::vector<bool> matched(steals.size(), false);

  std::vector<RankTransfer> out;
  out.reserve(std::max(lends.size(), steals.size()));
  for (const HostEvent& l : lends) {
    RankTransfer t{l.self_rank, l.other_rank, l.tasks, l.time_ns, l.time_ns, l.track, kNoTransferTrack, false};
    if (const auto it = arrivals.find({l.self_rank, l.other_rank}); it != arrivals.end()) {
      for (const std::size_t s : it->second) {
        if (matched[s] || steals[s].time_ns < l.time_ns || steals[s].tasks != l.tasks) continue;
        matched[s] = true;
        t.arrive_ns = steals[s].time_ns;
        t.arrive_track = steals[s].track;
        t.paired = true;
        break;
      }
    }
    out.push_back(t);
  }
  for (std::size_t s = 0; s < steals.size(); ++s) {
    if (matched[s]) continue;
    const HostEvent& a = steals[s];
    out.push_back({a.other_rank, a.self_rank, a.tasks, a.time_ns, a.time_ns, kNoTransferTrack, a.track, false});
  }
  std::stable_sort(out.begin(), out.end(), [](const RankTransfer& a, const RankTransfer& b) { return a.lend_ns < b.lend_ns; });
  return out;
}

std::map<std::pair<std::uint32_t, std::uint32_t>, RankPairCount> count_by_pair(std::span<const RankTransfer> transfers) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, RankPairCount> counts;
  for (const RankTransfer& t : transfers) {
    RankPairCount& c = counts[{t.from_rank, t.to_rank}];
    ++c.chunks;
    c.tasks += t.tasks;
    c.unpaired += t.paired ? 0 : 1;
  }
  return counts;
}

RankTransfersInView rank_transfers_in_view(std::span<const RankTransfer> transfers, double t0_ns, double t1_ns) {
  RankTransfersInView v;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const RankTransfer& t = transfers[i];
    if (!t.paired || static_cast<double>(t.lend_ns) > t1_ns || static_cast<double>(t.arrive_ns) < t0_ns) continue;
    ++v.in_view;
    if (v.shown.size() < kMaxRankArrows) v.shown.push_back(i);
  }
  v.arrows = v.in_view <= kMaxRankArrows;
  if (!v.arrows) {
    v.shown.clear();
    v.note = std::to_string(v.in_view) + " rank transfers in view: arrows drawn at " + std::to_string(kMaxRankArrows) +
             " or fewer (zoom in)";
  }
  return v;
}

}  // namespace gpulb::viewer
