// `round-robin`: a CPU policy written outside gpulb, against its installed headers only. The tasks
// are dealt before the run, `chunk` at a time: worker w runs the chunks w, w + W, w + 2W, ... in
// order, and nothing moves between workers afterwards. A baseline that shows what balancing buys:
// on a workload whose costs follow the task order (patterns P4: every fourth task does all the
// work), a worker's share is whatever the deal gave it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/policy.hpp"

namespace own {

// Its own options, declared here like a shipped policy's (gpulb/policy.hpp: options_for); it also
// takes the ones every policy takes (watchdog_ms, trace_capacity, trace_batch).
struct RoundRobinOptions {
  std::uint32_t chunk = 1;  // tasks dealt to a worker at a time
};

inline const gpulb::PolicyDescriptor& round_robin() {
  static const gpulb::PolicyDescriptor d{
      "round-robin",
      "none: a baseline from outside the tree (examples/own-policy)",
      "tasks dealt round robin to the workers before the run, each worker's share run in order; "
      "nothing moves between workers",
      {.persistent = true},
      gpulb::options_for<RoundRobinOptions>(
          {gpulb::number_option("chunk", "round-robin: tasks dealt to a worker at a time",
                                &RoundRobinOptions::chunk, 1, 1 << 20)})};
  return d;
}

// The driver: the shape of gpulb's own CPU drivers (core/cpu/include/gpulb/cpu/policies/), so the
// worker loop gets tracing, progress and the watchdog from the runtime's hooks.
struct RoundRobinDriver {
  static const gpulb::PolicyDescriptor& descriptor() { return round_robin(); }

  template <class Body>
  static gpulb::ExecOutput run(const gpulb::ExecPlan& plan, const Body& body) {
    namespace cpu = gpulb::cpu;
    cpu::Runtime rt(plan, 2 * plan.tasks.size() + 16);  // a begin and an end event a task
    const std::uint32_t workers = rt.workers();
    const std::size_t chunk = plan.policy_options<RoundRobinOptions>().chunk;
    const std::size_t n = plan.tasks.size();
    rt.start([&](std::uint32_t rank) {
      cpu::WorkerSlot& slot = rt.slot(rank);
      const cpu::WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(),
                                   rt.stop_flag());
      cpu::worker_begin(ctx, slot, rank);
      for (std::size_t first = rank * chunk; first < n; first += workers * chunk) {
        for (std::size_t i = first; i < std::min(n, first + chunk) && !rt.stop_requested(); ++i)
          cpu::run_task(rt, ctx, slot, body, plan.tasks[i]);
      }
      cpu::worker_end(ctx, slot, 0);
    });
    try {
      rt.wait_workers([&] {
        return std::to_string(rt.tasks_done()) + " of " + std::to_string(plan.tasks.size()) +
               " tasks done";
      });
    } catch (...) {
      rt.join();
      throw;
    }
    return rt.finish("host", plan.tasks.size());
  }
};

}  // namespace own
