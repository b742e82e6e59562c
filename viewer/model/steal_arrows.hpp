// Steal arrows in the timeline: drawn victim -> thief while few enough are in view to read, and
// otherwise said so (they vanished without notice above 60).
#pragma once

#include <cstddef>
#include <string>

#include "trace_model.hpp"

namespace gpulb::viewer {

inline constexpr std::size_t kMaxStealArrows = 60;

struct StealsInView {
  std::size_t steals = 0;  // Steal events in [t0, t1] on every lane
  bool arrows = true;      // drawn: at most kMaxStealArrows
  std::string
      note;  // why not, when not: "25196 steals in view: arrows drawn at 60 or fewer (zoom in)"
};

StealsInView steals_in_view(const TraceModel& model, double t0_ns, double t1_ns);

}  // namespace gpulb::viewer
