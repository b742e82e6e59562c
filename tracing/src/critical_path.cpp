#include "gpulb/tracing/critical_path.hpp"

#include <algorithm>
#include <limits>

#include "gpulb/tracing/event_kinds.hpp"
#include "gpulb/tracing/trace_limits.hpp"

namespace gpulb::trace {
namespace {

// A result is a few hundred bytes; a larger one is not worth parsing for one number.
constexpr std::size_t kMaxResultBytes = std::size_t{64} << 10;

std::uint64_t reported_depth(const RunMetadata& meta) {
  if (meta.result_json.empty() || meta.result_json.size() > kMaxResultBytes) return 0;
  const BoundedJson parsed = parse_json_bounded(meta.result_json, kMaxResultBytes);
  if (!parsed.value || !parsed.value->is_object()) return 0;
  const auto it = parsed.value->find("max_depth");
  return it != parsed.value->end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

struct Shortest {
  std::uint64_t task = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t parent = std::numeric_limits<std::uint64_t>::max();
  bool placed = false;  // some task edge was placed, not timed (kTimeInterpolated)
};

// A task spawned where a spawn event (Spawn or SpawnBatch) with children follows its end before the next task begins.
void shortest_on_track(const Track& track, Shortest& s) {
  bool open = false, ended = false;
  std::uint64_t begin = 0, last = 0;
  std::uint32_t id = 0;
  for (const Event& e : track.events) {
    s.placed = s.placed || (e.flags & kTimeInterpolated) != 0;
    const ZoneEdge edge = event_traits(e.kind).zone;
    if (edge == ZoneEdge::Opens) {
      open = true;
      ended = false;
      begin = e.time_ns;
      id = e.arg;
    } else if (edge == ZoneEdge::Closes && open && e.arg == id) {
      open = false;
      ended = true;
      last = e.time_ns - begin;
      s.task = std::min(s.task, last);
    } else if (ended && spawn_children(e) > 0) {
      s.parent = std::min(s.parent, last);
      ended = false;
    }
  }
}

}  // namespace

CriticalPath critical_path(const Trace& trace) {
  CriticalPath cp;
  cp.depth = reported_depth(trace.meta);
  if (cp.depth == 0) return cp;
  Shortest s;
  for (const Track& track : trace.tracks) {
    if (track.role != TrackRole::Host) shortest_on_track(track, s);
  }
  // No task that spawned: the trace contradicts the depth (or holds no tasks). Placed times (a
  // batch's span shared out among its tasks) say nothing of one task's length. Either way: no bound.
  if (s.parent == std::numeric_limits<std::uint64_t>::max() || s.placed) return CriticalPath{};
  cp.shortest_parent_ns = s.parent;
  cp.shortest_task_ns = s.task;
  cp.bound_ns =
      static_cast<double>(cp.depth) * static_cast<double>(s.parent) + static_cast<double>(s.task);
  return cp;
}

}  // namespace gpulb::trace
