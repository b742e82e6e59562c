// Findings and a lesson's figures (findings.hpp), from the model's series, lanes and markers.
//
// [SECTION] helpers: numbers as text, summed step series, intervals where a series holds a value
// [SECTION] the detectors
// [SECTION] a lesson's figures
#include "findings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>

#include "parallel.hpp"
#include "run_span.hpp"

namespace gpulb::viewer {
namespace {

// [SECTION] helpers

using Point = StepSeries::Point;

std::string count_text(std::uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

std::string percent(double share) {
  char buf[32];
  if (share > 0.0 && share < 0.0005) return "under 0.1%";
  // One decimal where rounding would say 0% or 100% of something that is neither.
  const bool fine = (share > 0.0 && share < 0.095) || (share > 0.995 && share < 1.0);
  std::snprintf(buf, sizeof buf, fine ? "%.1f%%" : "%.0f%%",
                std::floor(share * (fine ? 1000.0 : 100.0) + 0.5) / (fine ? 10.0 : 1.0));
  return buf;
}

// The sum of step series, as points (one per distinct time).
std::vector<Point> sum_series(const std::vector<const StepSeries*>& series) {
  std::vector<Point> deltas;
  std::vector<std::size_t> bounds{0};
  for (const StepSeries* s : series) {
    std::int64_t prev = 0;
    for (const Point& p : s->points()) {
      deltas.push_back({p.time_ns, p.value - prev});
      prev = p.value;
    }
    bounds.push_back(deltas.size());
  }
  // Each series is sorted: a merge of the runs (one device's: none at all), not a sort.
  merge_sorted_runs_by_key(deltas, bounds, [](const Point& p) { return p.time_ns; });
  std::vector<Point> out;
  std::int64_t v = 0;
  for (const Point& d : deltas) {
    v += d.value;
    if (!out.empty() && out.back().time_ns == d.time_ns) {
      out.back().value = v;
    } else {
      out.push_back({d.time_ns, v});
    }
  }
  return out;
}

// Intervals of [t0, t1) where pred(value) holds, for a step series given as points (0 before the first).
struct Intervals {
  double total = 0.0;
  double longest_begin = 0.0, longest_end = 0.0;
  void add(double a, double b) {
    if (b <= a) return;
    total += b - a;
    if (b - a > longest_end - longest_begin) longest_begin = a, longest_end = b;
  }
};

// Points: a std::span<const Point> or a StepSeries' own (both give point i by [i]).
template <class Points, class Pred>
Intervals intervals_where(const Points& pts, double t0, double t1, Pred pred) {
  Intervals out;
  double at = t0;
  std::int64_t v = 0;
  std::size_t i = 0;
  for (; i < pts.size() && static_cast<double>(pts[i].time_ns) <= t0; ++i) v = pts[i].value;
  double open = pred(v) ? at : -1.0;
  for (; i < pts.size() && static_cast<double>(pts[i].time_ns) < t1; ++i) {
    at = static_cast<double>(pts[i].time_ns);
    const bool now = pred(pts[i].value);
    if (open >= 0.0 && !now) {
      out.add(open, at);
      open = -1.0;
    } else if (open < 0.0 && now) {
      open = at;
    }
  }
  if (open >= 0.0) out.add(open, t1);
  return out;
}

std::string device_name(const TraceModel& m, std::uint32_t device) {
  for (const DeviceGroup& d : m.devices()) {
    if (d.device == device) {
      const std::string& l = d.label;
      const auto colon = l.find(':');
      return colon == std::string::npos ? l : l.substr(0, colon);
    }
  }
  return "device " + std::to_string(device);
}

std::uint32_t total_workers(const TraceModel& m) {
  std::uint32_t w = 0;
  for (const DeviceGroup& d : m.devices()) w += d.workers;
  return w;
}

// [SECTION] the detectors

template <class Points>
void tail(const TraceModel& m, const TimeSpan& run, const Points& busy, const FindingLimits& lim,
          std::vector<Finding>& out) {
  const double makespan = run.end_ns - run.begin_ns;
  std::int64_t peak = 0;
  for (const Point& p : busy) {
    if (static_cast<double>(p.time_ns) <= run.end_ns) peak = std::max(peak, p.value);
  }
  if (peak < 2) return;
  // The tail starts where busy last falls below half the peak.
  double start = run.begin_ns;
  for (const Point& p : busy) {
    const double t = static_cast<double>(p.time_ns);
    if (t >= run.end_ns) break;
    if (p.value * 2 >= peak)
      start = -1.0;
    else if (start < 0.0)
      start = t;
  }
  if (start < 0.0) return;
  const double share = (run.end_ns - start) / makespan;
  if (share < lim.tail_min_share) return;
  std::int64_t most = 0;
  double area = 0.0, prev_t = start;
  std::int64_t prev_v = 0;
  for (const Point& p : busy) {
    const double t = static_cast<double>(p.time_ns);
    if (t <= start) {
      prev_v = p.value;
      continue;
    }
    if (t >= run.end_ns) break;
    area += static_cast<double>(prev_v) * (t - prev_t);
    most = std::max(most, p.value);
    prev_t = t;
    prev_v = p.value;
  }
  most = std::max(most, prev_v);
  area += static_cast<double>(prev_v) * (run.end_ns - prev_t);
  char mean[32];
  std::snprintf(mean, sizeof mean, "%.1f", area / (run.end_ns - start));
  // No worker busy at all in the "tail": a gap with no task (no_task_gaps names it), not a tail.
  if (most == 0) return;
  out.push_back({FindingKind::Tail, share >= 0.1 ? Severity::Warning : Severity::Note,
                 "The last " + percent(share) + " of the run (" + format_time(run.end_ns - start) +
                     ") ran on at most " + count_text(static_cast<std::uint64_t>(most)) + " of " +
                     count_text(total_workers(m)) + " workers (" + mean +
                     " busy on average; the peak was " +
                     count_text(static_cast<std::uint64_t>(peak)) + ").",
                 start, run.end_ns, share});
}

template <class Points>
void no_task_gaps(const TimeSpan& run, const Points& busy, const FindingLimits& lim,
                  std::vector<Finding>& out) {
  const double makespan = run.end_ns - run.begin_ns;
  // Count the gaps as the intervals at 0.
  std::size_t gaps = 0;
  const Intervals iv =
      intervals_where(busy, run.begin_ns, run.end_ns, [&](std::int64_t v) { return v == 0; });
  {
    bool zero = true;  // 0 before the first point
    std::int64_t v = 0;
    std::size_t i = 0;
    for (; i < busy.size() && static_cast<double>(busy[i].time_ns) <= run.begin_ns; ++i)
      v = busy[i].value;
    zero = v == 0;
    if (zero) ++gaps;
    for (; i < busy.size() && static_cast<double>(busy[i].time_ns) < run.end_ns; ++i) {
      const bool now = busy[i].value == 0;
      if (now && !zero) ++gaps;
      zero = now;
    }
  }
  const double share = iv.total / makespan;
  if (share < lim.gap_min_share || gaps == 0) return;
  out.push_back({FindingKind::NoTaskGap, share >= 0.1 ? Severity::Warning : Severity::Note,
                 "No task ran anywhere for " + percent(share) + " of the run (" +
                     format_time(iv.total) + " in " + count_text(gaps) +
                     (gaps == 1 ? " gap" : " gaps") + "; the longest " +
                     format_time(iv.longest_end - iv.longest_begin) + ", from " +
                     format_time(iv.longest_begin - run.begin_ns) + ").",
                 iv.longest_begin, iv.longest_end, share});
}

void idle_sm(const TraceModel& m, const TimeSpan& run, const FindingLimits& lim,
             std::vector<Finding>& out) {
  const double makespan = run.end_ns - run.begin_ns;
  struct Unit {
    std::string name;
    double share;
    const StepSeries* busy;  // its busy lanes, for the longest idle stretch
    std::uint32_t lane = 0;  // without SMs: the worker's lane
  };
  std::vector<Unit> units;
  bool sms = false;
  for (const DeviceGroup& d : m.devices()) {
    if (d.has_sms) {
      sms = true;
      for (const LaneGroup& g : d.groups) {
        if (g.sm == trace::Track::kNoSm) continue;  // blocks whose SM was not recorded
        double busy = 0.0;
        for (std::uint32_t li : g.lanes) {
          const Lane& l = m.lanes()[li];
          busy += static_cast<double>(l.zones.busy_ns());
        }
        if (g.lanes.empty()) continue;
        units.push_back(
            {g.label + (m.devices().size() > 1 ? " of " + device_name(m, d.device) : ""),
             busy / (static_cast<double>(g.lanes.size()) * makespan), g.busy.get(), 0});
      }
    }
  }
  if (!sms) {
    for (std::uint32_t li = 0; li < m.lanes().size(); ++li) {
      const Lane& l = m.lanes()[li];
      if (l.role == trace::TrackRole::Host || l.zones.empty()) continue;
      units.push_back({l.label + (m.devices().size() > 1 ? " of " + device_name(m, l.device) : ""),
                       static_cast<double>(l.zones.busy_ns()) / makespan, nullptr, li});
    }
  }
  if (units.size() < 2) return;
  std::vector<double> shares;
  for (const Unit& u : units) shares.push_back(u.share);
  std::nth_element(shares.begin(), shares.begin() + static_cast<std::ptrdiff_t>(shares.size() / 2),
                   shares.end());
  const double median = shares[shares.size() / 2];
  const auto worst = std::min_element(
      units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.share < b.share; });
  if (median <= 0.0 || worst->share >= lim.idle_sm_ratio * median) return;
  std::size_t under = 0;
  for (const Unit& u : units) under += u.share < lim.idle_sm_ratio * median ? 1 : 0;
  // Where it idled longest: no task on any of its lanes.
  Intervals idle;
  if (worst->busy) {
    idle = intervals_where(worst->busy->points(), run.begin_ns, run.end_ns,
                           [](std::int64_t v) { return v == 0; });
  } else if (!sms) {
    const Lane& l = m.lanes()[worst->lane];
    double at = run.begin_ns;
    for (const Zone& z : l.zones) {
      idle.add(at, std::min(static_cast<double>(z.begin_ns), run.end_ns));
      at = std::max(at, static_cast<double>(z.end_ns));
    }
    idle.add(at, run.end_ns);
  }
  std::string text = worst->name + " was busy " + percent(worst->share) +
                     " of the run, the median " + (sms ? "SM " : "worker ") + percent(median);
  if (under > 1)
    text += "; " + count_text(under) + " of " + count_text(units.size()) +
            (sms ? " SMs" : " workers") + " were under " + percent(lim.idle_sm_ratio * median);
  double b = run.begin_ns, e = run.end_ns;
  if (idle.longest_end - idle.longest_begin >= 0.05 * makespan) {
    text += ". It ran nothing for " + format_time(idle.longest_end - idle.longest_begin) +
            " from " + format_time(idle.longest_begin - run.begin_ns);
    b = idle.longest_begin;
    e = idle.longest_end;
  }
  // Its share: how far it falls short of the median SM (a run where every SM idles is not this SM's fault).
  out.push_back({FindingKind::IdleSm,
                 worst->share < 0.5 * median ? Severity::Warning : Severity::Note, text + ".", b, e,
                 1.0 - worst->share / median});
}

// A device of the run that ran no task at all: whatever else the trace shows, this comes first.
void idle_devices(const TraceModel& m, const TimeSpan& run, std::vector<Finding>& out) {
  if (m.devices().size() < 2) return;
  std::map<std::uint32_t, std::uint64_t> tasks;
  for (const Lane& l : m.lanes()) tasks[l.device] += l.zones.size();
  for (const DeviceGroup& d : m.devices()) {
    if (d.workers == 0 || tasks[d.device] > 0) continue;
    out.push_back({FindingKind::IdleDevice, Severity::Warning,
                   device_name(m, d.device) + " ran no task: 0 of the run's " +
                       count_text(m.task_count()) + " tasks, on none of its " +
                       count_text(d.workers) + " workers.",
                   run.begin_ns, run.end_ns, 1.0});
  }
}

void device_finish(const TraceModel& m, const TimeSpan& run, const FindingLimits& lim,
                   std::vector<Finding>& out) {
  std::map<std::uint32_t, std::uint64_t> last;  // device -> its last task's end
  std::map<std::uint32_t, std::uint64_t> busy;
  for (const Lane& l : m.lanes()) {
    if (l.zones.empty()) continue;
    last[l.device] = std::max(last[l.device], l.zones.back().end_ns);
    busy[l.device] += l.zones.busy_ns();
  }
  if (last.size() < 2) return;
  const auto [lo, hi] = std::minmax_element(
      last.begin(), last.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const double makespan = run.end_ns - run.begin_ns;
  const double spread = static_cast<double>(hi->second - lo->second);
  const double share = spread / makespan;
  std::string text = device_name(m, lo->first) + " ran its last task " + format_time(spread) +
                     " (" + percent(share) + " of the run) before " + device_name(m, hi->first) +
                     "; busy time";
  bool first = true;
  for (const auto& [dev, ns] : busy) {
    text += (first ? " " : ", ") + device_name(m, dev) + " " + format_time(static_cast<double>(ns));
    first = false;
  }
  const double b = static_cast<double>(lo->second), e = static_cast<double>(hi->second);
  const double pad = std::max(0.01 * makespan, 1.0);
  out.push_back({FindingKind::DeviceFinish,
                 share >= lim.device_finish_share ? Severity::Warning : Severity::Note, text + ".",
                 b - pad, std::max(e, b) + pad, share});
}

// The busy workers' integral over the intervals where pred(level) holds, and their total length.
template <class Points, class Pred>
void over_levels(const Points& level, const StepSeries& busy, double t0, double t1, Pred pred,
                 Intervals& iv, double& busy_area) {
  iv = intervals_where(level, t0, t1, pred);
  busy_area = 0.0;
  // Walk the level series again, integrating busy over each matching interval.
  double open = -1.0;
  std::int64_t v = 0;
  std::size_t i = 0;
  for (; i < level.size() && static_cast<double>(level[i].time_ns) <= t0; ++i) v = level[i].value;
  if (pred(v)) open = t0;
  for (; i < level.size() && static_cast<double>(level[i].time_ns) < t1; ++i) {
    const double at = static_cast<double>(level[i].time_ns);
    const bool now = pred(level[i].value);
    if (open >= 0.0 && !now) {
      busy_area += busy.integral(open, at);
      open = -1.0;
    } else if (open < 0.0 && now) {
      open = at;
    }
  }
  if (open >= 0.0) busy_area += busy.integral(open, t1);
}

// Workers of `device` still running over time, each from its first to its last event: a block that
// took its HALT and ended is gone, not idle (md's task queue halts 676 of 1,188 blocks at once).
StepSeries running_workers(const TraceModel& m, std::uint32_t device) {
  std::vector<Point> steps;
  for (const Lane& l : m.lanes()) {
    if (l.device != device || l.role == trace::TrackRole::Host || l.end_ns <= l.start_ns) continue;
    steps.push_back({l.start_ns, 1});
    steps.push_back({l.end_ns, -1});
  }
  std::sort(steps.begin(), steps.end(),
            [](const Point& a, const Point& b) { return a.time_ns < b.time_ns; });
  std::int64_t n = 0;
  for (Point& p : steps) p.value = n += p.value;
  return StepSeries(steps);  // points at one time keep the last: the count after all of them
}

// The busy share of the running workers over the intervals where pred(level) holds.
template <class Pred>
double busy_share_where(const QueueSeries& q, const StepSeries& busy, const StepSeries& running,
                        double t0, double t1, Pred pred, Intervals& iv) {
  double busy_area = 0.0, running_area = 0.0;
  over_levels(q.level.points(), busy, t0, t1, pred, iv, busy_area);
  over_levels(q.level.points(), running, t0, t1, pred, iv, running_area);
  return running_area > 0.0 ? busy_area / running_area : 0.0;
}

void queues(const TraceModel& m, const TimeSpan& run, const FindingLimits& lim,
            std::vector<Finding>& out) {
  const double makespan = run.end_ns - run.begin_ns;
  std::int64_t capacity = 0;
  if (const auto it = m.header().meta.parameters.find("queue_capacity");
      it != m.header().meta.parameters.end()) {
    capacity = std::atoll(it->second.c_str());
  }
  for (const QueueSeries& q : m.queues()) {
    if (q.source != QueueSeries::Source::Queue || q.level.empty() || q.level.max_value() <= 0)
      continue;
    const DeviceGroup* dev = nullptr;
    for (const DeviceGroup& d : m.devices()) {
      if (d.device == q.device) dev = &d;
    }
    // A device that ran no task has its own finding (idle_devices); its queues tell nothing more.
    if (!dev || !dev->busy || dev->workers < 2 || dev->busy->max_value() == 0) continue;
    // After its kernel's end nobody takes from a queue: neither held nor empty means anything there.
    const double t1 =
        q.end_ns > 0 ? std::min(run.end_ns, static_cast<double>(q.end_ns)) : run.end_ns;
    const std::string workers = count_text(dev->workers) + " workers";
    const StepSeries running = running_workers(m, q.device);
    Intervals held, empty;
    const double held_busy = busy_share_where(
        q, *dev->busy, running, run.begin_ns, t1, [](std::int64_t v) { return v > 0; }, held);
    const double empty_busy = busy_share_where(
        q, *dev->busy, running, run.begin_ns, t1, [](std::int64_t v) { return v <= 0; }, empty);
    if (held.total / makespan >= lim.queue_min_share && held_busy < lim.queue_idle_share) {
      const double share = held.total / makespan;
      std::string text = q.label + " held tasks for " + percent(share) + " of the run";
      if (capacity > 0 && q.level.max_value() >= capacity) {
        const Intervals full = intervals_where(q.level.points(), run.begin_ns, t1,
                                               [&](std::int64_t v) { return v >= capacity; });
        text += " (full, " + count_text(static_cast<std::uint64_t>(capacity)) + " tasks, for " +
                percent(full.total / makespan) + ")";
      }
      text += " while only " + percent(held_busy) + " of " + device_name(m, q.device) + "'s " +
              workers + " still running were busy on average; the longest stretch " +
              format_time(held.longest_end - held.longest_begin) + " from " +
              format_time(held.longest_begin - run.begin_ns) + ".";
      out.push_back({FindingKind::QueueWaiting, share >= 0.1 ? Severity::Warning : Severity::Note,
                     text, held.longest_begin, held.longest_end, share});
    }
    if (empty.total / makespan >= lim.queue_min_share && empty_busy < lim.queue_idle_share) {
      const double share = empty.total / makespan;
      out.push_back({FindingKind::QueueStarved, share >= 0.1 ? Severity::Warning : Severity::Note,
                     q.label + " was empty for " + percent(share) + " of the run while only " +
                         percent(empty_busy) + " of " + device_name(m, q.device) + "'s " + workers +
                         " still running were busy on average: they waited for the next batch to "
                         "reach the queue. The longest stretch " +
                         format_time(empty.longest_end - empty.longest_begin) + " from " +
                         format_time(empty.longest_begin - run.begin_ns) + ".",
                     empty.longest_begin, empty.longest_end, share});
    }
  }
}

void steals(const TraceModel& m, const TimeSpan& run, const FindingLimits& lim,
            std::vector<Finding>& out) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> by_victim;
  std::uint64_t total = 0;
  double first = run.end_ns, last = run.begin_ns;
  for (const Lane& l : m.lanes()) {
    for (const Marker& k : l.markers) {
      if (k.kind != trace::EventKind::Steal) continue;
      ++by_victim[{l.device, k.arg}];
      ++total;
      first = std::min(first, static_cast<double>(k.time_ns));
      last = std::max(last, static_cast<double>(k.time_ns));
    }
  }
  if (total < 20) return;
  std::vector<std::uint64_t> counts;
  for (const auto& [v, n] : by_victim) counts.push_back(n);
  std::sort(counts.rbegin(), counts.rend());
  std::uint64_t covered = 0;
  std::size_t k = 0;
  while (k < counts.size() && static_cast<double>(covered) < 0.8 * static_cast<double>(total))
    covered += counts[k++];
  const std::uint32_t workers = total_workers(m);
  const double share = workers ? static_cast<double>(k) / workers : 1.0;
  const auto top =
      std::max_element(by_victim.begin(), by_victim.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string text = percent(static_cast<double>(covered) / static_cast<double>(total)) +
                     " of the " + count_text(total) + " steals hit " + count_text(k) + " of " +
                     count_text(workers) + " workers";
  text += share < lim.steal_victim_share ? " (concentrated" : " (spread out";
  text += "; the most robbed, worker " + std::to_string(top->first.second) +
          (m.devices().size() > 1 ? " of " + device_name(m, top->first.first) : "") + ", lost " +
          count_text(top->second) + ").";
  if (last <= first) last = first + 1.0;
  out.push_back({FindingKind::StealConcentration, Severity::Note, text, first, last, 1.0 - share});
}

// Per device: time between its first launch and its last kernel end with no kernel running. The
// count of kernels running at t is launches minus ends up to t, whichever end belongs to which
// launch (combining keeps two in flight).
void launch_gaps(const TraceModel& m, const TimeSpan& run, const FindingLimits& lim,
                 std::vector<Finding>& out) {
  const double makespan = run.end_ns - run.begin_ns;
  std::map<std::uint32_t, std::vector<Point>> steps;  // device -> (time, +1 launch / -1 end)
  for (const Lane& l : m.lanes()) {
    if (l.role != trace::TrackRole::Host) continue;
    for (const Marker& k : l.markers) {
      if (k.kind == trace::EventKind::KernelLaunch) steps[l.device].push_back({k.time_ns, 1});
      if (k.kind == trace::EventKind::KernelEnd) steps[l.device].push_back({k.time_ns, -1});
    }
  }
  for (auto& [device, st] : steps) {
    std::size_t launches = 0;
    for (const Point& p : st) launches += p.value > 0 ? 1 : 0;
    if (launches < 2) continue;
    // Ends before launches at one instant: back-to-back kernels leave no gap.
    std::sort(st.begin(), st.end(), [](const Point& a, const Point& b) {
      return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.value < b.value;
    });
    Intervals gaps;
    std::size_t count = 0;
    std::int64_t running = 0;
    double last_end = -1.0;
    for (const Point& p : st) {
      const double t = static_cast<double>(p.time_ns);
      if (p.value > 0 && running == 0 && last_end >= 0.0) {
        const double a = std::max(last_end, run.begin_ns), b = std::min(t, run.end_ns);
        if (b > a) {
          gaps.add(a, b);
          ++count;
        }
      }
      running = std::max<std::int64_t>(running + p.value, 0);
      if (running == 0 && p.value < 0) last_end = t;
    }
    const double share = gaps.total / makespan;
    if (share < lim.launch_gap_share || count == 0) continue;
    out.push_back({FindingKind::LaunchGap, share >= 0.1 ? Severity::Warning : Severity::Note,
                   device_name(m, device) + " ran no kernel for " + percent(share) +
                       " of the run between its " + count_text(launches) + " launches (" +
                       format_time(gaps.total) + " in " + count_text(count) +
                       (count == 1 ? " gap" : " gaps") + ", the longest " +
                       format_time(gaps.longest_end - gaps.longest_begin) + " from " +
                       format_time(gaps.longest_begin - run.begin_ns) +
                       "): the host's time from a kernel's end to the next launch.",
                   gaps.longest_begin, gaps.longest_end, share});
  }
}

}  // namespace

namespace {
std::vector<Point> total_busy(const TraceModel& model);
}

std::vector<Finding> compute_findings(const TraceModel& model, const FindingLimits& limits) {
  std::vector<Finding> out;
  const TimeSpan run = run_span(model);
  if (!(run.end_ns > run.begin_ns) || model.task_count() == 0) return out;
  const std::vector<Point> total = total_busy(model);
  idle_devices(model, run, out);
  tail(model, run, total, limits, out);
  no_task_gaps(run, total, limits, out);
  idle_sm(model, run, limits, out);
  device_finish(model, run, limits, out);
  queues(model, run, limits, out);
  steals(model, run, limits, out);
  launch_gaps(model, run, limits, out);
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if ((a.kind == FindingKind::IdleDevice) != (b.kind == FindingKind::IdleDevice))
      return a.kind == FindingKind::IdleDevice;
    if (a.severity != b.severity) return a.severity == Severity::Warning;
    return a.share > b.share;
  });
  return out;
}

const char* finding_kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::Tail: return "tail";
    case FindingKind::NoTaskGap: return "no task";
    case FindingKind::IdleSm: return "idle";
    case FindingKind::DeviceFinish: return "devices";
    case FindingKind::QueueStarved: return "queue empty";
    case FindingKind::QueueWaiting: return "queue waiting";
    case FindingKind::StealConcentration: return "steals";
    case FindingKind::LaunchGap: return "launch gaps";
    case FindingKind::IdleDevice: return "idle device";
  }
  return "";
}

// [SECTION] a lesson's figures

namespace {

std::vector<Point> total_busy(const TraceModel& model) {
  std::vector<const StepSeries*> busy;
  for (const DeviceGroup& d : model.devices()) {
    if (d.busy) busy.push_back(d.busy.get());
  }
  return sum_series(busy);
}

// Tasks per SM, busiest over idlest; "" without SM ids.
std::string tasks_per_sm(const TraceModel& m) {
  const auto& sms = m.stats().per_sm;
  if (sms.empty()) return "";
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0, none = 0;
  for (const trace::GroupStats& g : sms) {
    hi = std::max(hi, g.tasks);
    if (g.tasks == 0)
      ++none;
    else
      lo = std::min(lo, g.tasks);
  }
  if (hi == 0) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2f (%s / %s)",
                static_cast<double>(hi) / static_cast<double>(lo), count_text(hi).c_str(),
                count_text(lo).c_str());
  std::string s = buf;
  if (none) s += ", " + count_text(none) + " SMs ran none";
  return s;
}

std::uint64_t launches(const TraceModel& m) {
  std::uint64_t n = 0;
  for (const Lane& l : m.lanes()) {
    for (const Marker& k : l.markers) n += k.kind == trace::EventKind::KernelLaunch ? 1 : 0;
  }
  return n;
}

std::string per_device_busy(const TraceModel& m) {
  const auto& devs = m.stats().per_device;
  if (devs.size() < 2) return "";
  std::string s;
  for (const trace::GroupStats& d : devs)
    s += (s.empty() ? "" : ", ") + d.label + " " + format_time(static_cast<double>(d.busy_ns));
  return s;
}

}  // namespace

double no_task_share(const TraceModel& model) {
  const TimeSpan run = run_span(model);
  if (!(run.end_ns > run.begin_ns)) return 0.0;
  const std::vector<Point> busy = total_busy(model);
  return intervals_where(busy, run.begin_ns, run.end_ns, [](std::int64_t v) { return v == 0; })
             .total /
         (run.end_ns - run.begin_ns);
}

std::vector<CompareFact> compare_facts(const TraceModel& a, const TraceModel& b) {
  std::vector<CompareFact> rows;
  auto both = [&](const char* name, auto&& f) { rows.push_back({name, f(a), f(b)}); };
  auto either = [&](const char* name, auto&& f) {
    CompareFact r{name, f(a), f(b)};
    if (!r.a.empty() || !r.b.empty()) rows.push_back(std::move(r));
  };
  both("makespan",
       [](const TraceModel& m) { return format_time(static_cast<double>(m.stats().makespan_ns)); });
  both("efficiency", [](const TraceModel& m) { return percent(m.stats().efficiency); });
  both("workers", [](const TraceModel& m) { return count_text(m.stats().workers); });
  both("tasks", [](const TraceModel& m) { return count_text(m.stats().tasks); });
  both("no task running",
       [](const TraceModel& m) { return percent(no_task_share(m)) + " of the run"; });
  either("tasks per SM max/min", tasks_per_sm);
  either("busy per device (its workers' sum)", per_device_busy);
  if (launches(a) + launches(b) > 0)
    both("kernel launches", [](const TraceModel& m) { return count_text(launches(m)); });
  if (a.stats().steals + b.stats().steals > 0)
    both("steals", [](const TraceModel& m) { return count_text(m.stats().steals); });
  return rows;
}

std::string compare_headline(const TraceModel& a, const TraceModel& b, const InputMatch& input) {
  const double ma = static_cast<double>(a.stats().makespan_ns),
               mb = static_cast<double>(b.stats().makespan_ns);
  if (ma <= 0.0 || mb <= 0.0) return "";
  if (!input.same) {
    return "A took " + format_time(ma) + ", B " + format_time(mb) + ", on different inputs (" +
           input.difference + "): their times do not compare.";
  }
  char buf[48];
  const bool b_slower = mb >= ma;
  std::snprintf(buf, sizeof buf, "%.2fx", b_slower ? mb / ma : ma / mb);
  return std::string(b_slower ? "B took " : "A took ") + buf + " the time of " +
         (b_slower ? "A" : "B") + " (" + format_time(b_slower ? mb : ma) + " against " +
         format_time(b_slower ? ma : mb) + ").";
}

TimeSpan finding_view_range(const TraceModel& model, const Finding& f) {
  const TimeSpan run = run_span(model);
  const double pad = std::max(0.01 * (run.end_ns - run.begin_ns), 0.05 * (f.end_ns - f.begin_ns));
  return {f.begin_ns - pad, f.end_ns + pad};
}

}  // namespace gpulb::viewer
