// The hardware policy on the CPU backend: what one kernel launch of a block per task does, with
// host threads as the SMs -- blocks in launch order, each taken by the next free worker.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/policies/hardware.hpp"

namespace gpulb::cpu {
namespace detail {

// What one kernel launch does: blocks in launch order, each taken by the next free worker.
template <class Body>
ExecOutput run_hardware(const ExecPlan& plan, const Body& body) {
  Runtime rt(plan, 2 * plan.tasks.size() + 16);
  std::atomic<std::uint64_t> next_block{0};
  rt.host_record(EventKind::KernelLaunch, static_cast<std::uint32_t>(plan.tasks.size()));
  rt.start([&](std::uint32_t rank) {
    WorkerSlot& slot = rt.slot(rank);
    const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(),
                            rt.stop_flag());
    slot.start_ns = ctx.now_ns();
    ctx.record(EventKind::WorkerStart, rank, trace::kUnknownSm);
    while (!rt.stop_requested()) {
      const std::uint64_t b = next_block.fetch_add(1, std::memory_order_relaxed);
      if (b >= plan.tasks.size()) break;
      run_task(rt, ctx, slot, body, plan.tasks[b]);
    }
    slot.end_ns = ctx.now_ns();
    ctx.record(EventKind::WorkerEnd, 0);
  });
  try {
    rt.wait_workers([&] {
      return "next block " + std::to_string(next_block.load()) + " of " +
             std::to_string(plan.tasks.size());
    });
  } catch (...) {
    rt.join();
    throw;
  }
  rt.host_record(EventKind::KernelEnd, static_cast<std::uint32_t>(plan.tasks.size()));
  return rt.finish("host launcher", plan.tasks.size());
}

}  // namespace detail

struct HardwareDriver {
  static const PolicyDescriptor& descriptor() { return policies::hardware(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    return detail::run_hardware(plan, body);
  }
};

}  // namespace gpulb::cpu
