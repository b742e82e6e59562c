// The moments of a run a lesson points at ("look here"): found in the trace itself, so that a
// button lands on them whatever run is open. Each is a range to select and a wider one to show.
//   run        the whole run
//   spread     from the run's start until nine workers in ten have run their first task
//   tail       the end of the run on few workers (the tail finding's range; else its last tenth)
//   batches    three of the host's enqueued batches from the middle of the run
//   launches   two launches from the middle of the run and what ran between them
//   steals     about 30 steals from the middle of the run, few enough for the timeline's arrows
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "findings.hpp"
#include "time_format.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

enum class Moment { Run, Spread, Tail, Batches, Launches, Steals };

// The name a lesson's step gives ("tail"); nullopt for a name that is none.
std::optional<Moment> moment_from_name(std::string_view name);

struct MomentRange {
  TimeSpan selected;  // trace clock
  TimeSpan shown;     // the selection with room around it
};

// Where the moment is in `model`; nullopt where the run has none (no batches, no steals).
// `findings`: the model's (compute_findings), for the tail.
std::optional<MomentRange> find_moment(const TraceModel& model,
                                       const std::vector<Finding>& findings, Moment moment);

// A moment of one run as Compare shows it: its range in time since that run's first launch (the
// shared axis), and its selection on A's clock (Compare draws A's clock shifted onto B's panel).
struct CompareJump {
  TimeSpan range;      // since the launch
  TimeSpan selection;  // A's clock
};
CompareJump compare_jump(const TraceModel& a, const TraceModel& side, const MomentRange& m);

}  // namespace gpulb::viewer
