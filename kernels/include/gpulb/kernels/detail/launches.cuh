// The launches of the `hardware` and `chunked` policies (Chen et al. Solutions 1 and 3): a GPU's
// control thread launches launch_kernel, one block per task, over tasks taken from the host pool.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/detail/body_factory.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/kernels/detail/host_pool_run.cuh"
#include "gpulb/kernels/detail/watchdog.hpp"
#include "gpulb/kernels/worker_kernels.cuh"
#include "gpulb/trace_budget.hpp"

namespace gpulb::kernels::detail {

using trace::EventKind;

// How a GPU's share of the pool is launched: `hardware`, this GPU's even share in one launch;
// `chunked`, launches of `chunk` tasks (0: as many blocks as are resident) one after the other
// while the pool lasts.
struct LaunchPlan {
  bool one_launch;
  std::uint32_t chunk;
};

template <class Body>
void control_launches(GpuSession& s, const ExecPlan& plan, const Body& body, HostTaskPool& pool,
                      LaunchPlan how, std::atomic<bool>& abort_all, GpuOutcome& out) {
  GPULB_CUDA_TRY(cudaSetDevice(s.device()));
  const std::uint64_t total = plan.tasks.size();
  cuda::DeviceBuffer<Task> tasks(total);
  tasks.upload(plan.tasks.data(), total);
  // Start, begin, end per block, a segment per task on every GPU: the budget counts all of them.
  check_trace_bytes(plan, total * plan.gpus * 3 * sizeof(trace::Event),
                    "the trace's " + std::to_string(total) + " block segments on each of " +
                        std::to_string(plan.gpus) + " GPUs");
  s.allocate_trace(static_cast<std::uint32_t>(total), plan.trace ? 3 : 0);
  const GridSize resident = persistent_grid(reinterpret_cast<const void*>(&launch_kernel<Body>),
                                            s.device(), plan.block_size, 0);
  const std::uint32_t chunk = how.one_launch
                                  ? static_cast<std::uint32_t>((total + plan.gpus - 1) / plan.gpus)
                                  : (how.chunk ? how.chunk : resident.blocks);
  Watchdog watchdog(plan, s, abort_all);
  std::uint64_t launched = 0;
  for (;;) {
    if (how.one_launch && launched > 0) break;
    const HostTaskPool::Take t = pool.take(chunk);
    if (t.n == 0) break;
    s.host_record(EventKind::KernelLaunch, t.n);
    s.host_record(EventKind::PoolLevel,
                  static_cast<std::uint32_t>(std::min<std::uint64_t>(pool.level(), 0xFFFFFFFFu)));
    out.launch_ns = std::min(out.launch_ns, s.now_ns());
    launch_kernel<Body><<<t.n, plan.block_size, 0, s.kernel_stream()>>>(
        tasks.get(), t.first, body, s.trace_ref(), s.stop_flag());
    GPULB_CUDA_CHECK_LAUNCH();
    ++launched;
    while (cudaStreamQuery(s.kernel_stream()) == cudaErrorNotReady) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      watchdog.check(out.tasks_run, [&] {
        return "a launch of " + std::to_string(t.n) + " blocks has not finished; " +
               std::to_string(pool.level()) + " tasks not launched";
      });
    }
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
    out.end_ns = s.now_ns();
    s.host_record(EventKind::KernelEnd, t.n);
    out.tasks_run += t.n;
    out.progress.store(out.tasks_run, std::memory_order_relaxed);
  }
  out.workers = resident.blocks;
}

// The hardware and chunked drivers: the host-pool frame, blocks on SM lanes.
template <class Factory>
ExecOutput run_launches(const ExecPlan& plan, Factory& make_body, LaunchPlan how) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  return run_on_host_pool(
      plan, TrackLayout::SmLanes, make_body,
      // A block's rank is its task's index in the pool: per-worker records need one a task.
      [](const GpuSession&, const ExecPlan& p) {
        return static_cast<std::uint32_t>(p.tasks.size());
      },
      [how](GpuSession& s, const ExecPlan& p, const Body& body, HostTaskPool& pool,
            std::atomic<bool>& abort_all,
            GpuOutcome& out) { control_launches(s, p, body, pool, how, abort_all, out); });
}

}  // namespace gpulb::kernels::detail
