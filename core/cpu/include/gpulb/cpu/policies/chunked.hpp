// The chunked policy on the CPU backend (Chen et al. Solution 3): launches of `chunk` tasks one
// after the other, each a launch as the hardware policy runs one (blocks in launch order, each taken
// by the next free worker), the next launch starting when the last block of the previous one has
// ended -- the barrier between kernels that the GPU's host control thread waits for. With one
// device there is no pool to balance across GPUs; what remains is the cost of those barriers.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <string>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/policies/chunked.hpp"

namespace gpulb::cpu {
namespace detail {

template <class Body>
ExecOutput run_chunked(const ExecPlan& plan, const Body& body) {
  const std::uint64_t total = plan.tasks.size();
  Runtime rt(plan, 2 * total + 16);
  const std::uint32_t asked = plan.policy_options<policies::ChunkedOptions>().chunk;
  const std::uint64_t chunk = asked ? asked : std::max<std::uint32_t>(1, rt.workers());
  std::atomic<std::uint64_t> next_block{0};
  // Written only by the barrier's completion (all workers waiting), read after it: no atomics.
  std::uint64_t launch_end = std::min(total, chunk);
  std::uint64_t launch_begin = 0;
  // The completion is the host control thread's "the launch ended; launch the next chunk".
  auto on_launch_end = [&]() noexcept {
    rt.host_record(EventKind::KernelEnd, static_cast<std::uint32_t>(launch_end - launch_begin));
    launch_begin = launch_end;
    launch_end = std::min(total, launch_end + chunk);
    next_block.store(launch_begin, std::memory_order_relaxed);
    if (launch_end > launch_begin)
      rt.host_record(EventKind::KernelLaunch,
                     static_cast<std::uint32_t>(launch_end - launch_begin));
  };
  std::barrier launches(static_cast<std::ptrdiff_t>(rt.workers()), on_launch_end);
  rt.host_record(EventKind::KernelLaunch, static_cast<std::uint32_t>(launch_end));
  rt.start([&](std::uint32_t rank) {
    WorkerSlot& slot = rt.slot(rank);
    const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(),
                            rt.stop_flag());
    slot.start_ns = ctx.now_ns();
    ctx.record(EventKind::WorkerStart, rank, trace::kUnknownSm);
    for (;;) {
      const std::uint64_t end = launch_end;
      while (!rt.stop_requested()) {
        const std::uint64_t b = next_block.fetch_add(1, std::memory_order_relaxed);
        if (b >= end) break;
        run_task(rt, ctx, slot, body, plan.tasks[b]);
      }
      ctx.pause_trace();  // the launch barrier is no task's time
      if (rt.stop_requested() || end >= total) {
        launches.arrive_and_drop();  // the last launch (or a stop): leave, ending its phase
        break;
      }
      launches.arrive_and_wait();
    }
    slot.end_ns = ctx.now_ns();
    ctx.record(EventKind::WorkerEnd, 0);
  });
  try {
    rt.wait_workers([&] {
      return "next block " + std::to_string(next_block.load()) + " of " + std::to_string(total);
    });
  } catch (...) {
    rt.join();
    throw;
  }
  return rt.finish("host launcher", total);
}

}  // namespace detail

struct ChunkedDriver {
  static const PolicyDescriptor& descriptor() { return policies::chunked(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    return detail::run_chunked(plan, body);
  }
};

}  // namespace gpulb::cpu
