// Counter tracks: the occupancy plots (queue levels, deque sums, the host pool, busy workers; see
// occupancy.hpp) as thin tracks under the timeline's lanes, on the timeline's own time axis, so
// that a queue running dry lines up with the idle spells above it. The Occupancy tab keeps the
// larger plots.
#pragma once

#include <cstddef>

namespace gpulb::viewer {

inline constexpr float kCounterTrackPx = 40.0f;     // a track when there is room
inline constexpr float kMinCounterTrackPx = 26.0f;  // a value label and an area still read
inline constexpr float kCounterShare = 0.34f;       // of the timeline's height, at most

struct CounterLayout {
  std::size_t shown = 0;   // the first `shown` plots get a track
  std::size_t hidden = 0;  // the rest: the strip says they are in the Occupancy tab
  float track_h = 0.0f;
  float height = 0.0f;     // of the whole strip: shown x track_h
};

// For `tracks` plots under a timeline `view_h` px tall (lanes and strip).
CounterLayout counter_layout(std::size_t tracks, float view_h);

}  // namespace gpulb::viewer
