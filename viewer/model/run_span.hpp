// The time range every view measures from and fits to: the run, as the summary counts it.
//
// A trace holds host events around the run (the enqueue before the launch, the kernel's end after
// the last block): fitting to every event showed the uts trace as 1.72 ms for an 805 us makespan,
// and the replay bar said 905 us where the summary said 858 us. The run is what
// trace::compute_statistics calls the makespan: first to last worker event. Times on rulers,
// tooltips, `--range` and `--playhead` count from its start.
#pragma once

#include "time_format.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

// First to last worker event (the summary's makespan); every event where no worker has one.
TimeSpan run_span(const TraceModel& model);
// What Fit shows: the run with a 1% margin a side, so the first and last tasks sit off the edges.
TimeSpan fit_span(const TraceModel& model);
// Where Compare lines two runs up: the first kernel launch (a GPU run's clock starts there, and the
// time to the first block is part of its cost); the run's start where no launch was recorded.
double launch_ns(const TraceModel& model);

}  // namespace gpulb::viewer
