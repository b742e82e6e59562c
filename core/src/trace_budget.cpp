#include "gpulb/trace_budget.hpp"

#include <algorithm>

#include "gpulb/errors.hpp"
#include "gpulb/tracing/event.hpp"
#include "gpulb/tracing/trace_limits.hpp"

namespace gpulb {

std::uint64_t trace_budget(const ExecPlan& plan) {
  return plan.trace_budget ? plan.trace_budget : trace::default_memory_budget();
}

TraceFit fit_trace_segments(const ExecPlan& plan, std::uint64_t segments, std::uint64_t wanted,
                            std::uint64_t least) {
  TraceFit fit;
  if (!plan.trace || segments == 0) return fit;
  const bool asked = plan.run_options.trace_capacity > 0;
  if (asked) wanted = plan.run_options.trace_capacity;
  const std::uint64_t budget = trace_budget(plan);
  const std::uint64_t fits = budget / sizeof(trace::Event) / segments;  // events a segment may have
  const std::string each = " for each of " + std::to_string(segments) +
                           " trace segments (a worker's, or a host track's)";
  if (fits < least) {
    throw ConfigError("the trace needs at least " + std::to_string(least) + " events" + each +
                      ": " + trace::format_bytes(least * segments * sizeof(trace::Event)) +
                      ", over the trace memory budget of " + trace::format_bytes(budget) +
                      "; use fewer workers, raise --trace-memory, or run with --no-trace");
  }
  fit.capacity = static_cast<std::uint32_t>(std::min<std::uint64_t>({wanted, fits, 0xFFFFFFFFu}));
  if (fit.capacity < wanted) {
    fit.note = (asked ? "trace_capacity=" + std::to_string(wanted)
                      : "the estimated " + std::to_string(wanted) + " events") +
               each + " would take " +
               trace::format_bytes(wanted * segments * sizeof(trace::Event)) +
               ", over the trace memory budget of " + trace::format_bytes(budget) +
               ": each segment holds " + std::to_string(fit.capacity) +
               " events (more are dropped and counted; raise --trace-memory)";
  }
  return fit;
}

void check_trace_bytes(const ExecPlan& plan, std::uint64_t bytes, const std::string& what) {
  const std::uint64_t budget = trace_budget(plan);
  if (!plan.trace || bytes <= budget) return;
  throw ConfigError(what + " would take " + trace::format_bytes(bytes) +
                    ", over the trace memory budget of " + trace::format_bytes(budget) +
                    "; raise --trace-memory or run with --no-trace");
}

}  // namespace gpulb
