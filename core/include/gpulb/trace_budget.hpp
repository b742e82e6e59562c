// Trace segments within a memory budget: every backend sizes its per-worker segments here, so no
// worker count or trace_capacity can ask for more memory than the machine has.
#pragma once

#include <cstdint>
#include <string>

#include "gpulb/exec_plan.hpp"

namespace gpulb {

// Bytes a run's trace segments may take together: ExecPlan::trace_budget, else a quarter of the
// physical memory (what the trace reader allows itself; the run's tracks are a second copy).
std::uint64_t trace_budget(const ExecPlan& plan);

// Fewest events a persistent worker's segment is given: less shows nothing worth a trace.
inline constexpr std::uint64_t kMinTraceSegment = 256;

struct TraceFit {
  std::uint32_t capacity = 0;  // events per segment
  std::string note;            // set where the request was cut down to fit the budget
};

// `segments` segments of `wanted` events each (the policy's estimate; an explicit trace_capacity
// takes its place) within trace_budget(plan). A request over the budget is cut, with a note naming
// the numbers; ConfigError where not even `least` events a segment fit.
TraceFit fit_trace_segments(const ExecPlan& plan, std::uint64_t segments, std::uint64_t wanted,
                            std::uint64_t least = kMinTraceSegment);

// ConfigError naming the numbers where `bytes` of fixed-size segments (`what`) exceed
// trace_budget(plan): for layouts whose segments trace_capacity does not size.
void check_trace_bytes(const ExecPlan& plan, std::uint64_t bytes, const std::string& what);

}  // namespace gpulb
