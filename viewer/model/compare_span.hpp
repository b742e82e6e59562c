// Compare's shared time scale: both runs measured from their own first kernel launch, over the
// longer of the two, or over the --range the user gave.
//
// Not from the first event: that is a host enqueue, and connect4 work-stealing enqueues 467 us
// before its launch, so all of its tasks would fall off the right edge and B look empty.
#pragma once

#include <optional>

#include "run_span.hpp"
#include "time_axis.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

struct CompareSpan {
  double origin_a = 0.0, origin_b = 0.0;  // each run's 0 on its own clock
  TimeSpan shown;                         // times since the origins that the panels fit to
};

// `range`: times since the origins (--range), shown as given.
CompareSpan compare_span(const TraceModel& a, const TraceModel& b,
                         const std::optional<TimeSpan>& range = std::nullopt);

// What the replay bar scrubs in Compare, on A's clock: from A's first launch for as long as the
// longer run lasts from its own launch, the span Compare's rulers count (without Fit's margins).
TimeSpan compare_replay_span(const TraceModel& a, const TraceModel& b);

// A panel's axis on its trace's clock, from the shared axis that counts time since the origin.
inline TimeAxis panel_axis(const TimeAxis& shared, double origin_ns) {
  TimeAxis axis = shared;
  axis.t0_ns += origin_ns;
  return axis;
}

}  // namespace gpulb::viewer
