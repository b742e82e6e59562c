#include "range_stats.hpp"

#include <algorithm>
#include <cstdio>

#include "lod.hpp"

namespace gpulb::viewer {
namespace {

// Time of `spans` (sorted, non-overlapping) inside [a, b].
double overlap(const IntervalList& spans, double a, double b) {
  double sum = 0;
  for (std::size_t i = spans.first_ending_at_or_after(a);
       i < spans.size() && static_cast<double>(spans.begin_ns(i)) < b; ++i) {
    sum += std::max(0.0, std::min(b, static_cast<double>(spans.end_ns(i))) -
                             std::max(a, static_cast<double>(spans.begin_ns(i))));
  }
  return sum;
}

// Busy time inside [a, b] from the prefix sums: the whole zones between the edges cost nothing.
double busy_in(const Lane& lane, double a, double b) {
  const ZoneList& z = lane.zones;
  const std::size_t i = z.first_ending_at_or_after(a);
  const std::size_t j = z.first_beginning_at_or_after(i, b);  // zones [i, j) overlap [a, b)
  if (i >= j) return 0;
  double sum = static_cast<double>(z.busy_ns_before(j) - z.busy_ns_before(i));
  sum -= std::max(0.0, a - static_cast<double>(z.begin_ns(i)));
  sum -= std::max(0.0, static_cast<double>(z.end_ns(j - 1)) - b);
  return std::max(sum, 0.0);
}

void add_lane(RangeRow& row, const Lane& lane, double a, double b) {
  const double alive = std::min(b, static_cast<double>(lane.end_ns)) -
                       std::max(a, static_cast<double>(lane.start_ns));
  if (alive < 0 || (lane.zones.empty() && lane.markers.empty())) return;
  ++row.workers;
  row.alive_ns += alive;
  row.busy_ns += busy_in(lane, a, b);
  row.idle_ns += overlap(lane.idle, a, b);
  const ZoneList& z = lane.zones;
  row.tasks += z.first_beginning_at_or_after(0, b) - z.first_beginning_at_or_after(0, a);
  const MarkerList& m = lane.markers;
  auto it = std::partition_point(
      m.begin(), m.end(), [a](const Marker& k) { return static_cast<double>(k.time_ns) < a; });
  for (; it != m.end() && static_cast<double>(it->time_ns) < b; ++it) {
    const trace::EventKind kind = (*it).kind;
    row.steals += kind == trace::EventKind::Steal;
    row.failed_steals += kind == trace::EventKind::StealFailed;
    row.failed_dequeues += kind == trace::EventKind::DequeueFailed;
  }
}

void add_row(RangeRow& into, const RangeRow& r) {
  into.workers += r.workers;
  into.alive_ns += r.alive_ns;
  into.busy_ns += r.busy_ns;
  into.idle_ns += r.idle_ns;
  into.tasks += r.tasks;
  into.steals += r.steals;
  into.failed_steals += r.failed_steals;
  into.failed_dequeues += r.failed_dequeues;
}

std::string device_name(const DeviceGroup& dev) { return dev.label.substr(0, dev.label.find(':')); }

}  // namespace

RangeStats range_stats(const TraceModel& model, double begin_ns, double end_ns) {
  RangeStats s;
  s.begin_ns = std::min(begin_ns, end_ns);
  s.end_ns = std::max(begin_ns, end_ns);
  s.all.label = "all";
  for (const DeviceGroup& dev : model.devices()) {
    if (dev.groups.empty()) continue;
    RangeRow d;
    d.label = device_name(dev);
    for (const LaneGroup& g : dev.groups) {
      RangeRow r;
      r.label = g.sm == trace::Track::kNoSm ? g.label : d.label + " " + g.label;
      for (const std::uint32_t l : g.lanes) add_lane(r, model.lanes()[l], s.begin_ns, s.end_ns);
      add_row(d, r);
      s.groups.push_back(std::move(r));
    }
    add_row(s.all, d);
    s.devices.push_back(std::move(d));
  }
  return s;
}

std::vector<std::size_t> range_order(const std::vector<RangeRow>& rows, RangeColumn by,
                                     bool ascending) {
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [by](const RangeRow& r) -> double {
    switch (by) {
      case RangeColumn::Workers: return r.workers;
      case RangeColumn::Busy: return r.busy_pct();
      case RangeColumn::Idle: return r.idle_pct();
      case RangeColumn::Tasks: return static_cast<double>(r.tasks);
      case RangeColumn::Steals: return static_cast<double>(r.steals);
      case RangeColumn::FailedSteals: return static_cast<double>(r.failed_steals);
      case RangeColumn::FailedDequeues: return static_cast<double>(r.failed_dequeues);
      case RangeColumn::Where: break;
    }
    return 0.0;
  };
  if (by == RangeColumn::Where) {  // the rows' own order is by device then SM
    if (!ascending) std::reverse(order.begin(), order.end());
    return order;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ascending ? key(rows[a]) < key(rows[b]) : key(rows[a]) > key(rows[b]);
  });
  return order;
}

std::string range_stats_table(const RangeStats& stats, double origin_ns) {
  std::string out;
  char line[320];
  std::snprintf(line, sizeof line, "range\t%.3f us\t%.3f us\n", (stats.begin_ns - origin_ns) / 1e3,
                (stats.end_ns - origin_ns) / 1e3);
  out += line;
  out +=
      "where\tworkers\tbusy %\tidle %\ttasks\tsteals\tfailed steals\tfailed dequeues (idle "
      "spells)\n";
  auto row = [&](const RangeRow& r) {
    std::snprintf(
        line, sizeof line, "%s\t%u\t%.1f\t%.1f\t%llu\t%llu\t%llu\t%llu\n", r.label.c_str(),
        r.workers, r.busy_pct(), r.idle_pct(), static_cast<unsigned long long>(r.tasks),
        static_cast<unsigned long long>(r.steals), static_cast<unsigned long long>(r.failed_steals),
        static_cast<unsigned long long>(r.failed_dequeues));
    out += line;
  };
  row(stats.all);
  for (const RangeRow& r : stats.devices) row(r);
  for (const RangeRow& r : stats.groups) row(r);
  return out;
}

}  // namespace gpulb::viewer
