#include "rank_transfers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "time_format.hpp"

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
      (k == trace::EventKind::RankLend ? lends : steals)
          .push_back({ev.time_ns(j), rank, ev.arg(j), ev.aux(j), i});
    }
  }
  const auto by_time = [](const HostEvent& a, const HostEvent& b) {
    return std::tie(a.time_ns, a.track) < std::tie(b.time_ns, b.track);
  };
  std::stable_sort(lends.begin(), lends.end(), by_time);
  std::stable_sort(steals.begin(), steals.end(), by_time);

  // Arrivals per (victim, thief), in the thief's time order. MPI delivers one sender's messages
  // to one receiver in the order sent (non-overtaking), so the k-th chunk lent to a thief is the
  // k-th it received from that victim: pair in that order, not by time. The two times come from
  // two clocks aligned by an estimated offset, and an arrival may read before its lend.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::size_t>> arrivals;
  for (std::size_t s = 0; s < steals.size(); ++s)
    arrivals[{steals[s].other_rank, steals[s].self_rank}].push_back(s);
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t>
      next_arrival;  // per pair: first not yet passed
  std::vector<bool> matched(steals.size(), false);

  std::vector<RankTransfer> out;
  out.reserve(std::max(lends.size(), steals.size()));
  for (const HostEvent& l : lends) {
    RankTransfer t{l.self_rank, l.other_rank, l.tasks,          l.time_ns,
                   l.time_ns,   l.track,      kNoTransferTrack, false};
    const std::pair<std::uint32_t, std::uint32_t> key{l.self_rank, l.other_rank};
    if (const auto it = arrivals.find(key); it != arrivals.end()) {
      // The next arrival that carries as many tasks; ones passed over (a lend event dropped) stay
      // unpaired. At most kLookAhead on: a hostile trace of lends that match nothing must not cost
      // lends x arrivals.
      constexpr std::size_t kLookAhead = 64;
      std::size_t& from = next_arrival[key];
      for (std::size_t k = from; k < it->second.size() && k < from + kLookAhead; ++k) {
        const std::size_t s = it->second[k];
        if (steals[s].tasks != l.tasks) continue;
        matched[s] = true;
        t.arrive_ns = steals[s].time_ns;
        t.arrive_track = steals[s].track;
        t.paired = true;
        from = k + 1;
        break;
      }
    }
    out.push_back(t);
  }
  for (std::size_t s = 0; s < steals.size(); ++s) {
    if (matched[s]) continue;
    const HostEvent& a = steals[s];
    out.push_back({a.other_rank, a.self_rank, a.tasks, a.time_ns, a.time_ns, kNoTransferTrack,
                   a.track, false});
  }
  std::stable_sort(out.begin(), out.end(), [](const RankTransfer& a, const RankTransfer& b) {
    return a.lend_ns < b.lend_ns;
  });
  return out;
}

std::map<std::pair<std::uint32_t, std::uint32_t>, RankPairCount> count_by_pair(
    std::span<const RankTransfer> transfers) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, RankPairCount> counts;
  for (const RankTransfer& t : transfers) {
    RankPairCount& c = counts[{t.from_rank, t.to_rank}];
    ++c.chunks;
    c.tasks += t.tasks;
    c.unpaired += t.paired ? 0 : 1;
  }
  return counts;
}

RankTransfersInView rank_transfers_in_view(std::span<const RankTransfer> transfers, double t0_ns,
                                           double t1_ns) {
  RankTransfersInView v;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const RankTransfer& t = transfers[i];
    // An arrival that reads before its lend (the clocks' error) still spans [earlier, later].
    const auto lo = static_cast<double>(std::min(t.lend_ns, t.arrive_ns)),
               hi = static_cast<double>(std::max(t.lend_ns, t.arrive_ns));
    if (lo > t1_ns || hi < t0_ns) continue;
    if (!t.paired) {
      ++v.unpaired_in_view;
      continue;
    }
    ++v.in_view;
    if (v.shown.size() < kMaxRankArrows) v.shown.push_back(i);
  }
  v.arrows = v.in_view <= kMaxRankArrows;
  if (!v.arrows) {
    v.shown.clear();
    v.note = std::to_string(v.in_view) + " rank transfers in view: arrows drawn at " +
             std::to_string(kMaxRankArrows) + " or fewer (zoom in)";
  }
  if (v.unpaired_in_view > 0) {
    // Drawn nowhere otherwise: the reader must know the arrows are not all there is.
    if (!v.note.empty()) v.note += "; ";
    v.note += std::to_string(v.unpaired_in_view) +
              (v.unpaired_in_view == 1 ? " rank transfer" : " rank transfers") +
              " with one side only (its lend or its arrival missing from the trace): no arrow";
  }
  return v;
}

int rank_arrow_at(std::span<const RankArrow> arrows, float x, float y, float tolerance) {
  int best = -1;
  float best_d = std::numeric_limits<float>::max();
  for (std::size_t i = 0; i < arrows.size(); ++i) {
    const RankArrow& a = arrows[i];
    // Distance from (x, y) to the segment: the nearest point's parameter, clamped to [0, 1].
    const float dx = a.x1 - a.x0, dy = a.y1 - a.y0, len2 = dx * dx + dy * dy;
    const float u =
        len2 > 0 ? std::clamp(((x - a.x0) * dx + (y - a.y0) * dy) / len2, 0.0f, 1.0f) : 0.0f;
    const float d = std::hypot(x - (a.x0 + u * dx), y - (a.y0 + u * dy));
    if (d <= tolerance && d < best_d) {
      best = static_cast<int>(i);
      best_d = d;
    }
  }
  return best;
}

std::vector<std::string> rank_transfer_lines(const RankTransfer& t, double origin_ns) {
  std::vector<std::string> lines;
  lines.push_back(std::to_string(t.tasks) + (t.tasks == 1 ? " task" : " tasks") +
                  " moved from rank " + std::to_string(t.from_rank) + " to rank " +
                  std::to_string(t.to_rank));
  lines.push_back("lent     " + format_time(static_cast<double>(t.lend_ns) - origin_ns) +
                  " (rank " + std::to_string(t.from_rank) + ")");
  lines.push_back("arrived  " + format_time(static_cast<double>(t.arrive_ns) - origin_ns) +
                  " (rank " + std::to_string(t.to_rank) + ")");
  if (t.arrive_ns >= t.lend_ns) {
    lines.push_back("in transit " + format_time(static_cast<double>(t.arrive_ns - t.lend_ns)));
  } else {
    lines.push_back("arrival reads " + format_time(static_cast<double>(t.lend_ns - t.arrive_ns)) +
                    " before the lend: the ranks' clocks are aligned by an estimate");
  }
  return lines;
}

}  // namespace gpulb::viewer
