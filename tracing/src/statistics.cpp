#include "gpulb/tracing/statistics.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

namespace gpulb::trace {

std::vector<TaskSpan> task_spans(const Track& track) {
  std::vector<TaskSpan> spans;
  for_each_task_span(track, [&](const TaskSpan& s) { spans.push_back(s); });
  return spans;
}

namespace {

LoadSummary summarize(const std::vector<WorkerStats>& workers) {
  LoadSummary s;
  if (workers.empty()) return s;
  s.min_busy_ns = std::numeric_limits<std::uint64_t>::max();
  s.min_tasks = std::numeric_limits<std::uint64_t>::max();
  for (const WorkerStats& w : workers) {
    s.tasks += w.tasks;
    s.busy_ns += w.busy_ns;
    s.min_busy_ns = std::min(s.min_busy_ns, w.busy_ns);
    s.max_busy_ns = std::max(s.max_busy_ns, w.busy_ns);
    s.min_tasks = std::min(s.min_tasks, w.tasks);
    s.max_tasks = std::max(s.max_tasks, w.tasks);
  }
  s.mean_busy_ns = static_cast<double>(s.busy_ns) / static_cast<double>(workers.size());
  s.imbalance = s.mean_busy_ns > 0 ? static_cast<double>(s.max_busy_ns) / s.mean_busy_ns : 1.0;
  return s;
}

std::string device_label(const Trace& t, std::uint32_t device) {
  if (device >= t.devices.size()) return "device " + std::to_string(device);
  const Device& d = t.devices[device];
  return d.kind == DeviceKind::Gpu ? "GPU " + std::to_string(d.index) : "CPU";
}

}  // namespace

TraceStatistics compute_statistics(const Trace& trace) {
  TraceStatistics st;
  st.begin_ns = std::numeric_limits<std::uint64_t>::max();
  std::map<std::pair<std::uint32_t, std::uint32_t>, GroupStats> sms;
  std::map<std::uint32_t, GroupStats> devices;

  for (std::uint32_t i = 0; i < trace.tracks.size(); ++i) {
    const Track& tr = trace.tracks[i];
    st.events += tr.events.size();
    st.dropped_events += tr.dropped;
    if (tr.role == TrackRole::Host) {
      for (const Event& e : tr.events) {
        if (e.kind != EventKind::RankSteal) continue;
        ++st.rank_steals;
        st.rank_tasks_moved += e.aux;
      }
      continue;
    }
    if (tr.events.empty()) continue;

    WorkerStats w;
    w.track = i;
    w.device = tr.device;
    w.sm = tr.sm;
    for_each_task_span(tr, [&](const TaskSpan& s) {
      ++w.tasks;
      w.busy_ns += s.end_ns - s.begin_ns;
    });
    // Counters read one kind's payload each (which kinds are idle, steals, ... is event_kinds.hpp).
    for (const Event& e : tr.events) {
      switch (e.kind) {
        case EventKind::WorkerEnd: w.failed_dequeues += e.arg; break;
        case EventKind::Steal:
          ++w.steals;
          if (steal_crosses_devices(e, tr.device)) ++w.steals_across_devices;
          break;
        case EventKind::StealFailed: ++w.failed_steals; break;
        case EventKind::Spawn:
        case EventKind::SpawnBatch:
          w.spawned += spawn_children(e);
          if (spawn_names_children(e)) w.spawned_named += e.aux;
          break;
        default: break;
      }
    }
    st.begin_ns = std::min(st.begin_ns, tr.events.front().time_ns);
    st.end_ns = std::max(st.end_ns, tr.events.back().time_ns);
    st.tasks += w.tasks;
    st.steals += w.steals;
    st.steals_across_devices += w.steals_across_devices;
    st.failed_steals += w.failed_steals;
    st.failed_dequeues += w.failed_dequeues;
    st.spawned += w.spawned;
    st.spawned_named += w.spawned_named;

    GroupStats& dev = devices[tr.device];
    dev.label = device_label(trace, tr.device);
    dev.device = tr.device;
    ++dev.workers;
    dev.tasks += w.tasks;
    dev.busy_ns += w.busy_ns;
    if (tr.sm != Track::kNoSm) {
      GroupStats& sm = sms[{tr.device, tr.sm}];
      sm.label = device_label(trace, tr.device) + " SM " + std::to_string(tr.sm);
      sm.device = tr.device;
      sm.sm = tr.sm;
      ++sm.workers;
      sm.tasks += w.tasks;
      sm.busy_ns += w.busy_ns;
    }
    st.per_worker.push_back(w);
  }
  if (st.per_worker.empty()) st.begin_ns = 0;

  // SmLane tracks (hardware policy on a GPU) are lanes of SMs, not workers: count the lanes as
  // the workers of the run all the same, since each lane is one resident block slot.
  st.workers = static_cast<std::uint32_t>(st.per_worker.size());
  st.makespan_ns = st.end_ns - st.begin_ns;
  st.load = summarize(st.per_worker);
  if (st.workers > 0 && st.makespan_ns > 0) {
    st.efficiency = static_cast<double>(st.load.busy_ns) /
                    (static_cast<double>(st.workers) * static_cast<double>(st.makespan_ns));
    st.balance_bound_ns = static_cast<double>(st.load.busy_ns) / st.workers;
  }
  st.critical_path = critical_path(trace);
  st.lower_bound_ns = std::max(st.balance_bound_ns, st.critical_path.bound_ns);
  st.lower_bound = st.critical_path.bound_ns > st.balance_bound_ns ? LowerBound::CriticalPath
                                                                   : LowerBound::Balance;
  for (auto& [key, g] : sms) st.per_sm.push_back(g);
  for (auto& [key, g] : devices) st.per_device.push_back(g);
  return st;
}

std::string tasks_per_worker_histogram(const TraceStatistics& stats, int bins, int width) {
  if (stats.per_worker.empty() || bins <= 0) return "  (no workers)\n";
  const std::uint64_t lo = stats.load.min_tasks, hi = stats.load.max_tasks;
  // No more bins than task counts in [lo, hi]: a bin narrower than one task had an empty range
  // whose end wrapped below 0 ("0..18446744073709551615" for workers of 0 and 1 tasks).
  bins = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(bins), hi - lo + 1));
  std::vector<std::uint64_t> counts(bins, 0);
  const double step = static_cast<double>(hi - lo + 1) / bins;
  for (const WorkerStats& w : stats.per_worker) {
    int b = static_cast<int>(static_cast<double>(w.tasks - lo) / step);
    counts[std::min(b, bins - 1)]++;
  }
  const std::uint64_t peak = *std::max_element(counts.begin(), counts.end());
  std::string out;
  char line[160];
  for (int b = 0; b < bins; ++b) {
    const auto from = lo + static_cast<std::uint64_t>(b * step);
    const auto to = b == bins - 1 ? hi : lo + static_cast<std::uint64_t>((b + 1) * step) - 1;
    const int bar = peak ? static_cast<int>(counts[b] * width / peak) : 0;
    std::snprintf(line, sizeof line, "  %10llu..%-10llu %5llu |%s\n",
                  static_cast<unsigned long long>(from),
                  static_cast<unsigned long long>(std::max(from, to)),
                  static_cast<unsigned long long>(counts[b]), std::string(bar, '#').c_str());
    out += line;
  }
  return out;
}

}  // namespace gpulb::trace
