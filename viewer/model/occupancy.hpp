// What the occupancy view plots: one plot per queue series that held anything and one per device's
// busy workers, each with the value at its top and its value ticks.
//
// Busy-worker plots scale to the observed peak, not the worker count: uts peaks at 728 busy of
// 4,224 workers, and a plot topped at 4,224 drew it as a sliver. Plots of one kind share one
// scale across devices by default (the highest peak of them), so that GPU 0's 302 busy workers
// stand taller than GPU 1's 59; each plot's own peak on request. A queue that never held a task
// ("queue 0 max 0") gets no empty panel: the note says it stayed empty.
#pragma once

#include <string>
#include <vector>

#include "counter_tracks.hpp"
#include "series.hpp"
#include "ticks.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

struct OccupancyPlot {
  enum class Kind { Queue, Deques, Pool, Busy };
  Kind kind = Kind::Queue;
  std::string title;                   // "GPU 0 queue 1", "GPU 0 busy workers"
  std::string caption;                 // "max 728 of 4224 workers"
  const StepSeries* series = nullptr;  // owned by the model
  double capacity = 0.0;               // busy plots: the device's workers (0: none)
  double top = 1.0;                    // the value at the plot's top edge
  std::vector<Tick> ticks;             // value ticks in [0, top]
};

struct OccupancyPlots {
  std::vector<OccupancyPlot> plots;
  std::string note;  // "GPU 0 queue 0 stayed empty (not plotted)", or ""
};

OccupancyPlots occupancy_plots(const TraceModel& model, CounterScale scale = CounterScale::Shared);

}  // namespace gpulb::viewer
