#include "moments.hpp"

#include <algorithm>
#include <cmath>

#include "run_span.hpp"
#include "steal_arrows.hpp"

namespace gpulb::viewer {
namespace {

TimeSpan widened(TimeSpan s, double share) {
  const double pad = std::max((s.end_ns - s.begin_ns) * share, 1.0);
  return {s.begin_ns - pad, s.end_ns + pad};
}

// Host events of one kind on every device, in time order.
std::vector<double> host_times(const TraceModel& m, trace::EventKind kind) {
  std::vector<double> out;
  for (const Lane& l : m.lanes()) {
    if (l.role != trace::TrackRole::Host) continue;
    for (const Marker& k : l.markers) {
      if (k.kind == kind) out.push_back(static_cast<double>(k.time_ns));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// `count` + 1 consecutive times from the middle of `times` (at least two), as a range.
std::optional<TimeSpan> middle_stretch(const std::vector<double>& times, std::size_t count) {
  if (times.size() < 2) return std::nullopt;
  count = std::min(count, times.size() - 1);
  const std::size_t first = (times.size() - 1 - count) / 2;
  if (!(times[first + count] > times[first])) return std::nullopt;
  return TimeSpan{times[first], times[first + count]};
}

std::optional<MomentRange> spread(const TraceModel& m, const TimeSpan& run) {
  std::vector<double> first_task;
  for (const Lane& l : m.lanes()) {
    if (l.role == trace::TrackRole::Worker && l.zones.size() > 0)
      first_task.push_back(static_cast<double>(l.zones.begin_ns(0)));
  }
  if (first_task.empty()) return std::nullopt;
  std::sort(first_task.begin(), first_task.end());
  const double ninth = first_task[(first_task.size() - 1) * 9 / 10];
  const TimeSpan s{run.begin_ns,
                   std::max(ninth, run.begin_ns + 0.01 * (run.end_ns - run.begin_ns))};
  return MomentRange{s, widened(s, 0.2)};
}

std::optional<MomentRange> tail(const TimeSpan& run, const std::vector<Finding>& findings) {
  const auto f = std::find_if(findings.begin(), findings.end(),
                              [](const Finding& x) { return x.kind == FindingKind::Tail; });
  const TimeSpan s = f != findings.end()
                         ? TimeSpan{f->begin_ns, run.end_ns}
                         : TimeSpan{run.end_ns - 0.1 * (run.end_ns - run.begin_ns), run.end_ns};
  return MomentRange{s, widened(s, 0.25)};
}

std::optional<MomentRange> steals(const TraceModel& m) {
  std::vector<double> times;
  for (const DeviceGroup& d : m.devices()) {
    for (const LaneGroup& g : d.groups) {
      for (std::uint64_t t : g.steals) times.push_back(static_cast<double>(t));
    }
  }
  std::sort(times.begin(), times.end());
  const std::optional<TimeSpan> s = middle_stretch(times, 30);
  if (!s) return std::nullopt;
  TimeSpan shown = widened(*s, 0.1);
  if (m.steals_between(shown.begin_ns, shown.end_ns) > kMaxStealArrows)
    shown = *s;  // the arrows stay drawn
  return MomentRange{*s, shown};
}

}  // namespace

std::optional<Moment> moment_from_name(std::string_view name) {
  if (name == "run") return Moment::Run;
  if (name == "spread") return Moment::Spread;
  if (name == "tail") return Moment::Tail;
  if (name == "batches") return Moment::Batches;
  if (name == "launches") return Moment::Launches;
  if (name == "steals") return Moment::Steals;
  return std::nullopt;
}

std::optional<MomentRange> find_moment(const TraceModel& model,
                                       const std::vector<Finding>& findings, Moment moment) {
  const TimeSpan run = run_span(model);
  if (!(run.end_ns > run.begin_ns)) return std::nullopt;
  switch (moment) {
    case Moment::Run: return MomentRange{run, fit_span(model)};
    case Moment::Spread: return spread(model, run);
    case Moment::Tail: return tail(run, findings);
    case Moment::Batches:
      if (const auto s = middle_stretch(host_times(model, trace::EventKind::HostEnqueue), 3))
        return MomentRange{*s, widened(*s, 0.25)};
      return std::nullopt;
    case Moment::Launches:
      if (const auto s = middle_stretch(host_times(model, trace::EventKind::KernelLaunch), 2))
        return MomentRange{*s, widened(*s, 0.25)};
      return std::nullopt;
    case Moment::Steals: return steals(model);
  }
  return std::nullopt;
}

CompareJump compare_jump(const TraceModel& a, const TraceModel& side, const MomentRange& m) {
  const double origin = launch_ns(side), a_origin = launch_ns(a);
  return {{m.shown.begin_ns - origin, m.shown.end_ns - origin},
          {m.selected.begin_ns - origin + a_origin, m.selected.end_ns - origin + a_origin}};
}

}  // namespace gpulb::viewer
