// Counter tracks: the occupancy plots (queue levels, deque sums, the host pool, busy workers; see
// occupancy.hpp) as thin tracks under the timeline's lanes, on the timeline's own time axis, so
// that a queue running dry lines up with the idle spells above it. The Occupancy tab keeps the
// larger plots.
#pragma once

#include <cstddef>

namespace gpulb::viewer {

// Tracks of one kind (busy workers, queue levels, ...) on one scale across devices, or each on its
// own peak (occupancy_plots).
enum class CounterScale { Shared, Own };

inline constexpr float kCounterTrackPx = 40.0f;     // a track when there is room
inline constexpr float kMinCounterTrackPx = 26.0f;  // a value label and an area still read
inline constexpr float kCounterShare = 0.34f;       // of the timeline's height, at most

struct CounterLayout {
  std::size_t shown = 0;   // the first `shown` plots get a track
  std::size_t hidden = 0;  // the rest: the strip says they are in the Occupancy tab
  float track_h = 0.0f;
  float height = 0.0f;  // of the whole strip: shown x track_h
};

// For `tracks` plots under a timeline `view_h` px tall (lanes and strip) whose lanes need
// `lanes_min_h` px to show every device's rows (layout_timeline at its most compact): the strip
// takes up to kCounterShare of the height, less where the lanes would not fit beside it (a 4-GPU
// trace's 528 SM rows at 900 px), and its share where they cannot fit anyway (open groups of
// thousands of lanes scroll).
CounterLayout counter_layout(std::size_t tracks, float view_h, float lanes_min_h = 0.0f);

}  // namespace gpulb::viewer
