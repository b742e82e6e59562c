#include "steal_arrows.hpp"

#include <algorithm>

namespace gpulb::viewer {

StealsInView steals_in_view(const TraceModel& model, double t0_ns, double t1_ns) {
  StealsInView s;
  for (const Lane& lane : model.lanes()) {
    const auto& m = lane.markers;
    for (auto it = std::partition_point(m.begin(), m.end(), [t0_ns](const Marker& k) { return static_cast<double>(k.time_ns) < t0_ns; });
         it != m.end() && static_cast<double>(it->time_ns) <= t1_ns; ++it) {
      if (it->kind == trace::EventKind::Steal) ++s.steals;
    }
  }
  s.arrows = s.steals <= kMaxStealArrows;
  if (!s.arrows) {
    s.note = std::to_string(s.steals) + " steals in view: arrows drawn at " + std::to_string(kMaxStealArrows) +
             " or fewer (zoom in)";
  }
  return s;
}

}  // namespace gpulb::viewer
