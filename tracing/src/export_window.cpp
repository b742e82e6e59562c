#include "gpulb/tracing/export_window.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

namespace gpulb::trace {
namespace {

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

struct Run {
  std::uint64_t begin = kNone, end = 0;
  bool empty() const { return begin == kNone; }
};

// First to last event of the tracks that are not host tracks (tracks are in time order).
Run worker_run(const Trace& t) {
  Run r;
  for (const Track& tr : t.tracks) {
    if (tr.role == TrackRole::Host || tr.events.empty()) continue;
    r.begin = std::min(r.begin, tr.events.front().time_ns);
    r.end = std::max(r.end, tr.events.back().time_ns);
  }
  return r;
}

Run every_event(const Trace& t) {
  Run r;
  for (const Track& tr : t.tracks) {
    if (tr.events.empty()) continue;
    r.begin = std::min(r.begin, tr.events.front().time_ns);
    r.end = std::max(r.end, tr.events.back().time_ns);
  }
  return r;
}

// The host events before `t` (in descending order) or after it (ascending): the stretch a window
// may grow over. Each host track is in time order, so only its part outside is read.
std::vector<std::uint64_t> host_times_outside(const Trace& trace, std::uint64_t t, bool before) {
  std::vector<std::uint64_t> out;
  for (const Track& tr : trace.tracks) {
    if (tr.role != TrackRole::Host) continue;
    const auto cut = std::partition_point(tr.events.begin(), tr.events.end(), [&](const Event& e) {
      return before ? e.time_ns < t : e.time_ns <= t;
    });
    if (before) {
      for (auto it = tr.events.begin(); it != cut; ++it) out.push_back(it->time_ns);
    } else {
      for (auto it = cut; it != tr.events.end(); ++it) out.push_back(it->time_ns);
    }
  }
  if (before) {
    std::sort(out.begin(), out.end(), std::greater<>());
  } else {
    std::sort(out.begin(), out.end());
  }
  return out;
}

// The earliest kernel launch and the latest kernel end on any host track (kNone / 0 where none).
Run launches(const Trace& t) {
  Run r;
  for (const Track& tr : t.tracks) {
    if (tr.role != TrackRole::Host) continue;
    for (const Event& e : tr.events) {
      if (e.kind == EventKind::KernelLaunch) r.begin = std::min(r.begin, e.time_ns);
      if (e.kind == EventKind::KernelEnd) r.end = std::max(r.end, e.time_ns);
    }
  }
  return r;
}

// From `edge`, over host events no more than `gap` from the last one taken.
std::uint64_t grow(std::uint64_t edge, const std::vector<std::uint64_t>& times, std::uint64_t gap,
                   bool before) {
  for (const std::uint64_t t : times) {
    if ((before ? edge - t : t - edge) > gap) break;
    edge = t;
  }
  return edge;
}

std::uint64_t events_outside(const Trace& t, TimeRange window) {
  std::uint64_t n = 0;
  for (const Track& tr : t.tracks) {
    const auto first =
        std::partition_point(tr.events.begin(), tr.events.end(),
                             [&](const Event& e) { return e.time_ns < window.begin_ns; });
    const auto end = std::partition_point(
        first, tr.events.end(), [&](const Event& e) { return e.time_ns < window.end_ns; });
    n += tr.events.size() - static_cast<std::size_t>(end - first);
  }
  return n;
}

}  // namespace

ExportWindow export_window(const Trace& trace, TimeRange requested) {
  Run run = worker_run(trace);
  if (run.empty()) run = every_event(trace);
  ExportWindow w;
  if (run.empty()) {
    w.range = requested;
    return w;
  }
  const Run host = launches(trace);
  const std::uint64_t gap = (run.end - run.begin) / 10;
  const std::uint64_t first =
      grow(std::min(run.begin, host.begin),
           host_times_outside(trace, std::min(run.begin, host.begin), true), gap, true);
  const std::uint64_t last =
      grow(std::max(run.end, host.end),
           host_times_outside(trace, std::max(run.end, host.end), false), gap, false);
  const TimeRange window{first, last == kNone ? kNone : last + 1};
  w.origin_ns = first;
  w.left_out = events_outside(trace, window);
  w.range = {std::max(window.begin_ns, requested.begin_ns),
             std::min(window.end_ns, requested.end_ns)};
  return w;
}

}  // namespace gpulb::trace
