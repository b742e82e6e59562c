#include "counter_tracks.hpp"

#include <algorithm>
#include <cmath>

namespace gpulb::viewer {

CounterLayout counter_layout(std::size_t tracks, float view_h, float lanes_min_h) {
  CounterLayout l;
  if (tracks == 0 || view_h <= 0) return l;
  float room = view_h * kCounterShare;
  if (lanes_min_h <= view_h && view_h - room < lanes_min_h) room = view_h - lanes_min_h;
  l.shown = std::min(
      tracks, static_cast<std::size_t>(std::max(0.0f, std::floor(room / kMinCounterTrackPx))));
  l.hidden = tracks - l.shown;
  if (l.shown == 0) return l;
  l.track_h = std::clamp(std::floor(room / static_cast<float>(l.shown)), kMinCounterTrackPx,
                         kCounterTrackPx);
  l.height = l.track_h * static_cast<float>(l.shown);
  return l;
}

}  // namespace gpulb::viewer
