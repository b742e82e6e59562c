#include "launches.hpp"

#include <algorithm>
#include <cstdio>

#include "labels.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

LaunchSeries launch_series(const TraceModel& model) {
  LaunchSeries s;
  const auto& tracks = model.header().tracks;
  double blocks = 0.0;
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    if (tracks[t].role != trace::TrackRole::Host) continue;
    const EventColumns& ev = model.events(t);
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (ev.kind(i) != trace::EventKind::KernelLaunch) continue;
      const std::uint64_t at =
          ev.time_ns(i) > model.begin_ns() ? ev.time_ns(i) - model.begin_ns() : 0;
      Launch l{at, ev.arg(i), launch_reason_name(ev.aux(i) & 0xFFu)};
      s.largest = std::max(s.largest, l.blocks);
      blocks += l.blocks;
      ++s.by_reason[l.reason.empty() ? "launch" : l.reason];
      s.launches.push_back(std::move(l));
    }
  }
  std::sort(s.launches.begin(), s.launches.end(),
            [](const Launch& x, const Launch& y) { return x.at_ns < y.at_ns; });
  if (!s.launches.empty()) s.mean_blocks = blocks / static_cast<double>(s.launches.size());
  return s;
}

std::string launch_summary(const LaunchSeries& s) {
  char head[96];
  std::snprintf(head, sizeof head, "%zu launch%s, %.0f blocks each on average", s.launches.size(),
                s.launches.size() == 1 ? "" : "es", s.mean_blocks);
  std::string out = head;
  std::string reasons;
  for (const auto& [reason, count] : s.by_reason)
    reasons += (reasons.empty() ? ": " : ", ") + reason + " " + std::to_string(count);
  return out + reasons;
}

}  // namespace gpulb::viewer
