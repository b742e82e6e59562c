// What the histograms view draws: tasks, busy and idle time per worker, per SM and per device, at
// the playhead, with x-axis labels, and the per-pixel aggregates of charts with more bars than
// pixels.
//
// Workers are counted as the summary counts them (trace::compute_statistics): a worker track that
// recorded no event is not a worker of the run. connect4's static list has 3,168 block tracks of
// which 2,401 ran; counting all of them gave the histograms another worker count and another mean.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "replay.hpp"
#include "ticks.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

struct Loads {
  std::vector<double> tasks, busy, idle;  // idle: per worker only (alive, not in a task)
  std::vector<std::string> labels;        // one per bar, for tooltips
  std::vector<Tick> axis;                 // x labels: Tick::at is a bar index
  std::size_t silent = 0;                 // worker tracks that recorded no event, not counted
};

Loads worker_loads(const TraceModel& model, const ReplayState& state);
// One bar per SM (devices without SMs: one per device), or one per device.
Loads group_loads(const TraceModel& model, const ReplayState& state, bool per_device);

// An x label of a bar chart where it is drawn: px from the plot's left edge.
struct PlacedLabel {
  std::string text;
  float x = 0.0f;
};
// The x labels a chart of `bars` bars `plot_w` px wide draws of `axis` (Tick::at a bar index),
// left to right: every device's name (Tick::major) at its first bar, moved left where it would
// end past `right_room` px beyond the plot; then the SM ticks that touch none of them, so that an
// SM's label never takes the place of the next device's name.
std::vector<PlacedLabel> place_axis_labels(std::span<const Tick> axis, std::size_t bars,
                                           float plot_w, float right_room, const TextWidth& width);

// A chart with more bars than pixel columns draws one column per bucket of neighbouring bars: its
// fill is their mean and its band their range (the maximum alone made the fill sit above the mean
// line on 4,224 workers).
struct Bucket {
  double min = 0.0, mean = 0.0, max = 0.0;
};
std::vector<Bucket> bar_buckets(std::span<const double> values, int columns);

}  // namespace gpulb::viewer
