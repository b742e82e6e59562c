#include "steal_arrows.hpp"

#include <algorithm>

namespace gpulb::viewer {

StealsInView steals_in_view(const TraceModel& model, double t0_ns, double t1_ns) {
  StealsInView s;
  s.steals = model.steals_between(t0_ns, t1_ns);
  s.arrows = s.steals <= kMaxStealArrows;
  if (!s.arrows) {
    s.note = std::to_string(s.steals) + " steals in view: arrows drawn at " +
             std::to_string(kMaxStealArrows) + " or fewer (zoom in)";
  }
  return s;
}

}  // namespace gpulb::viewer
