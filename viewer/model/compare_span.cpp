#include "compare_span.hpp"

#include <algorithm>

namespace gpulb::viewer {

CompareSpan compare_span(const TraceModel& a, const TraceModel& b,
                         const std::optional<TimeSpan>& range) {
  CompareSpan c;
  c.origin_a = launch_ns(a);
  c.origin_b = launch_ns(b);
  if (range) {
    c.shown = *range;
    return c;
  }
  // Launch to the last worker event: the makespan plus the wait for the first block.
  const TimeSpan replay = compare_replay_span(a, b);
  const double span = replay.end_ns - replay.begin_ns;
  c.shown = {-span * 0.01, span * 1.01};
  return c;
}

TimeSpan compare_replay_span(const TraceModel& a, const TraceModel& b) {
  const double origin_a = launch_ns(a), origin_b = launch_ns(b);
  const double span = std::max({run_span(a).end_ns - origin_a, run_span(b).end_ns - origin_b, 1.0});
  return {origin_a, origin_a + span};
}

}  // namespace gpulb::viewer
