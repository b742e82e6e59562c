#include "replay.hpp"

#include <algorithm>

namespace gpulb::viewer {

LaneState lane_state_at(const Lane& lane, double t_ns) {
  LaneState s;
  const ZoneList& z = lane.zones;
  // Zones do not overlap, so their ends are sorted: the finished ones are a prefix.
  std::size_t k = z.first_ending_at_or_after(t_ns);
  while (k < z.size() && static_cast<double>(z.end_ns(k)) <= t_ns) ++k;  // ends exactly at t: done
  s.tasks_done = k;
  s.busy_ns = z.busy_ns_before(k);
  if (k < z.size() && static_cast<double>(z.begin_ns(k)) <= t_ns) {
    s.running = static_cast<int>(k);
    s.busy_ns += static_cast<std::uint64_t>(t_ns - static_cast<double>(z.begin_ns(k)));
  }
  return s;
}

ReplayState replay_state_at(const TraceModel& model, double t_ns) {
  ReplayState r;
  r.time_ns = t_ns;
  r.lanes.reserve(model.lanes().size());
  for (const Lane& lane : model.lanes()) {
    r.lanes.push_back(lane_state_at(lane, t_ns));
    r.tasks_done += r.lanes.back().tasks_done;
    if (r.lanes.back().running >= 0) ++r.running;
  }
  for (const QueueSeries& q : model.queues()) r.queue_levels.push_back(q.level.value_at(t_ns));
  return r;
}

}  // namespace gpulb::viewer
