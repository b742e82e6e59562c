#include "compare_span.hpp"

#include <algorithm>

namespace gpulb::viewer {

CompareSpan compare_span(const TraceModel& a, const TraceModel& b, const std::optional<TimeSpan>& range) {
  CompareSpan c;
  c.origin_a = launch_ns(a);
  c.origin_b = launch_ns(b);
  if (range) {
    c.shown = *range;
    return c;
  }
  // Launch to the last worker event: the makespan plus the wait for the first block.
  const double span = std::max({run_span(a).end_ns - c.origin_a, run_span(b).end_ns - c.origin_b, 1.0});
  c.shown = {-span * 0.01, span * 1.01};
  return c;
}

}  // namespace gpulb::viewer
