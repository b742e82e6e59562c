#include "task_details.hpp"

#include <algorithm>
#include <iterator>

#include "lod.hpp"

namespace gpulb::viewer {

TaskDetails task_details(const TraceModel& model, TaskRef ref) {
  TaskDetails d;
  if (ref.lane >= model.lanes().size() || ref.zone >= model.lanes()[ref.lane].zones.size())
    return d;
  const Lane& lane = model.lanes()[ref.lane];
  const Zone& z = lane.zones[ref.zone];
  d.id = z.id;
  d.kind = z.kind;
  d.begin_ns = z.begin_ns;
  d.end_ns = z.end_ns;
  d.worker =
      lane.sm == trace::Track::kNoSm ? lane.label : lane.label + ", SM " + std::to_string(lane.sm);

  const EventColumns& ev = model.events(lane.track);
  // The TaskBegin of this zone: the first event at its begin time of that kind and id.
  auto it = std::partition_point(ev.begin(), ev.end(),
                                 [&](const trace::Event& e) { return e.time_ns < z.begin_ns; });
  while (it != ev.end() && it->time_ns == z.begin_ns &&
         !(it->kind == trace::EventKind::TaskBegin && it->arg == z.id))
    ++it;
  // Back to the previous task's end (or the worker's start, or the previous task's spawn, after
  // which it publishes its children: a push's DequeLevel, a spill's QueueLevel) for where this
  // one came from. A steal wins (a thief may push what it stole and pop it); otherwise the
  // nearest dequeue or pop.
  bool nearest_taken = false;
  for (auto back = it; back != ev.begin();) {
    --back;
    const trace::EventKind k = back->kind;
    if (k == trace::EventKind::TaskEnd || k == trace::EventKind::WorkerStart ||
        trace::event_traits(k).category == trace::EventCategory::Spawn)
      break;
    if (k == trace::EventKind::Steal && !d.stolen_from) {
      d.stolen_from = back->arg;
      d.stolen_from_device = trace::steal_victim_device(back->aux, lane.device);
    }
    if (nearest_taken) continue;
    if (k == trace::EventKind::QueueLevel) {
      d.queue = back->aux;
      d.queue_left = back->arg;
      nearest_taken = true;
    } else if (k == trace::EventKind::DequeLevel && back->aux == (lane.worker & 0xFFFFu)) {
      d.deque_left = back->arg;
      nearest_taken = true;
    }
  }
  // Its children: the spawn it records when it publishes them, after its end and before the next task.
  if (it != ev.end()) d.interpolated = (it->flags & trace::kTimeInterpolated) != 0;
  for (auto fwd = it == ev.end() ? it : std::next(it);
       fwd != ev.end() && fwd->kind != trace::EventKind::TaskBegin; ++fwd) {
    d.spawned += trace::spawn_children(*fwd);
    if (trace::spawn_names_children(*fwd)) d.first_child = fwd->arg;
    if (fwd->kind == trace::EventKind::TaskEnd && fwd->arg == z.id)
      d.interpolated |= (fwd->flags & trace::kTimeInterpolated) != 0;
  }
  if (d.stolen_from) {
    d.source = "stolen from worker " + std::to_string(*d.stolen_from);
    if (d.stolen_from_device != lane.device)
      d.source += " of device " + std::to_string(d.stolen_from_device) + " (across GPUs)";
  } else if (d.queue) {
    d.source = "dequeued from queue " + std::to_string(*d.queue) + " (" +
               std::to_string(*d.queue_left) + " left)";
  } else if (d.deque_left) {
    d.source = "popped from its own deque (" + std::to_string(*d.deque_left) + " left)";
  } else {
    d.source = "not recorded (this policy traces no dequeue)";
  }
  return d;
}

std::optional<TaskRef> task_at(const TraceModel& model, std::uint32_t lane_index, double t_ns,
                               double tol_ns) {
  if (lane_index >= model.lanes().size()) return std::nullopt;
  const ZoneList& zones = model.lanes()[lane_index].zones;
  std::size_t i = first_ending_at_or_after(zones, t_ns - tol_ns);
  if (i >= zones.size() || static_cast<double>(zones.begin_ns(i)) > t_ns + tol_ns)
    return std::nullopt;
  // Of the zones within reach, the one under t, else the nearest.
  const std::size_t j = first_beginning_at_or_after(zones, i, t_ns + tol_ns);
  std::size_t best = i;
  double best_d = 1e300;
  for (std::size_t k = i; k < j; ++k) {
    const double a = static_cast<double>(zones.begin_ns(k)),
                 b = static_cast<double>(zones.end_ns(k));
    const double dist = t_ns < a ? a - t_ns : (t_ns > b ? t_ns - b : 0.0);
    if (dist < best_d) {
      best_d = dist;
      best = k;
    }
  }
  return TaskRef{lane_index, static_cast<std::uint32_t>(best)};
}

std::vector<TaskRef> find_tasks(const TraceModel& model, std::optional<std::uint32_t> id,
                                std::optional<std::uint16_t> kind, std::size_t max) {
  std::vector<TaskRef> out;
  if (!id && !kind) return out;
  for (std::uint32_t l = 0; l < model.lanes().size() && out.size() < max; ++l) {
    const ZoneList& zones = model.lanes()[l].zones;
    for (std::uint32_t z = 0; z < zones.size() && out.size() < max; ++z) {
      if ((!id || zones.id(z) == *id) && (!kind || zones.kind(z) == *kind)) out.push_back({l, z});
    }
  }
  return out;
}

std::optional<RunTask> pick_task(const TraceModel& model, int run, std::uint32_t lane,
                                 const TimeAxis& axis, double x) {
  const std::optional<TaskRef> hit = task_at(model, lane, axis.time_at(x), axis.ns_per_px * 2);
  if (!hit) return std::nullopt;
  return RunTask{run, *hit};
}

std::vector<RunTask> find_tasks_in_runs(const TraceModel& a, const TraceModel* b,
                                        const TaskQuery& query, std::size_t max_per_run) {
  std::vector<RunTask> out;
  const TraceModel* runs[] = {&a, b};
  for (int r = 0; r < 2; ++r) {
    if (!runs[r]) continue;
    for (const TaskRef& t : find_tasks(*runs[r], query.id, query.kind, max_per_run))
      out.push_back({r, t});
  }
  return out;
}

std::string found_note(const std::vector<RunTask>& found, int at, bool two_runs, bool capped) {
  if (found.empty()) return "no task";
  std::string s =
      std::to_string(at + 1) + " of " + std::to_string(found.size()) + (capped ? "+" : "");
  if (!two_runs) return s;
  const auto in_b = static_cast<std::size_t>(
      std::count_if(found.begin(), found.end(), [](const RunTask& t) { return t.run == 1; }));
  s += " (A " + std::to_string(found.size() - in_b) + ", B " + std::to_string(in_b) + ")";
  if (at >= 0 && static_cast<std::size_t>(at) < found.size())
    s += found[static_cast<std::size_t>(at)].run == 1 ? ": in B" : ": in A";
  return s;
}

std::optional<TaskQuery> parse_task_query(const std::string& text) {
  TaskQuery q;
  std::size_t i = 0;
  auto skip_spaces = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == ',')) ++i;
  };
  auto number = [&](std::uint64_t limit) -> std::optional<std::uint64_t> {
    std::uint64_t v = 0;
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(text[i++] - '0');
      if (v > limit) return std::nullopt;
    }
    return i > start ? std::optional<std::uint64_t>(v) : std::nullopt;
  };
  skip_spaces();
  while (i < text.size()) {
    if (text[i] == 'k' || text[i] == 'K') {
      ++i;
      if (text.compare(i, 3, "ind") == 0) i += 3;
      while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '=')) ++i;
      const auto k = number(0xFFFF);
      if (!k || q.kind) return std::nullopt;
      q.kind = static_cast<std::uint16_t>(*k);
    } else {
      if (text[i] == '#') ++i;
      const auto v = number(0xFFFFFFFFu);
      if (!v || q.id) return std::nullopt;
      q.id = static_cast<std::uint32_t>(*v);
    }
    skip_spaces();
  }
  if (!q.id && !q.kind) return std::nullopt;
  return q;
}

}  // namespace gpulb::viewer
