// The frame of the policies fed from one host task pool (Chen et al. section 6.2): one control
// thread per GPU draws from the pool and feeds or launches its GPU (task-queue, hardware,
// chunked). This thread reports progress meanwhile, then merges the GPUs' traces and outcomes.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gpu_request.hpp"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/kernels/detail/host_pool.hpp"

namespace gpulb::kernels::detail {

// What a control thread reports back.
struct GpuOutcome {
  std::uint64_t launch_ns = ~std::uint64_t{0};
  std::uint64_t end_ns = 0;
  std::uint64_t tasks_run = 0;
  std::uint32_t workers = 0;
  std::atomic<std::uint64_t> progress{0};
  std::vector<std::string> notes;
};

// Every GPU's body is made here, one GPU after the other, before any control thread starts (so the
// GPUs start together, as they would with no records to allocate):
//   workers_of(GpuSession&, const ExecPlan&) -> the worker count the body's records need there
//   control(GpuSession&, const ExecPlan& (gpus resolved), const Body&, HostTaskPool&,
//           std::atomic<bool>& abort_all, GpuOutcome&)
// `pin_pool`: page-lock the pool and find its runs before the launches (HostTaskPool::pin and
// index_runs; the task queue's copy feed).
template <class Factory, class WorkersOf, class Control>
ExecOutput run_on_gpus(const ExecPlan& plan, TrackLayout layout, Factory& make_body, WorkersOf&& workers_of, Control&& control,
                       bool pin_pool = false) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  check_gpu_request(plan.gpus, static_cast<std::uint64_t>(count));
  const std::uint32_t gpus = plan.gpus ? plan.gpus : static_cast<std::uint32_t>(count);
  ExecPlan p = plan;
  p.gpus = gpus;

  for (std::uint32_t g = 0; g < gpus; ++g) cuda::check_usable(static_cast<int>(g));
  const std::uint64_t origin = host_now_ns();
  std::vector<std::unique_ptr<GpuSession>> sessions;
  std::vector<Body> bodies;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    try {
      GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
      sessions.push_back(std::make_unique<GpuSession>(static_cast<int>(g), g, origin));
      bodies.push_back(make_body(g, workers_of(*sessions.back(), p)));
    } catch (...) {
      rethrow_gpu_failure(p, static_cast<int>(g));
    }
  }

  HostTaskPool pool(p.tasks);
  pool.expect_starters(gpus);
  std::vector<std::string> pool_notes;
  if (pin_pool) {
    if (std::string n = pool.pin(); !n.empty()) pool_notes.push_back(std::move(n));
    pool_notes.push_back(pool.index_runs());
  }
  std::atomic<bool> abort_all{false};
  std::vector<GpuOutcome> outcomes(gpus);
  std::vector<std::exception_ptr> errors(gpus);
  // The GPU that failed first: the others stop because of it, and its error is the one reported.
  std::atomic<int> first_failure{-1};
  std::vector<std::thread> threads;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    threads.emplace_back([&, g] {
      try {
        try {
          control(*sessions[g], p, bodies[g], pool, abort_all, outcomes[g]);
        } catch (...) {
          rethrow_gpu_failure(p, sessions[g]->device());
        }
      } catch (...) {
        errors[g] = std::current_exception();
        int none = -1;
        first_failure.compare_exchange_strong(none, static_cast<int>(g));
        abort_all.store(true);
      }
    });
  }
  for (;;) {
    bool all_done = true;
    std::uint64_t progress = 0;
    for (auto& o : outcomes) progress += o.progress.load(std::memory_order_relaxed);
    for (std::uint32_t g = 0; g < gpus; ++g) all_done = all_done && (outcomes[g].end_ns != 0 || errors[g]);
    if (p.progress) p.progress(progress, p.tasks.size());
    if (all_done || abort_all.load()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (std::thread& t : threads) t.join();
  if (first_failure.load() >= 0) std::rethrow_exception(errors[static_cast<std::size_t>(first_failure.load())]);

  ExecOutput out;
  for (std::string& n : pool_notes) out.notes.push_back(std::move(n));
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    GpuOutcome& o = outcomes[g];
    GpuSession& s = *sessions[g];
    GPULB_CUDA_TRY(cudaSetDevice(s.device()));
    first = std::min(first, o.launch_ns);
    last = std::max(last, o.end_ns);
    out.tasks_run += o.tasks_run;
    out.workers += o.workers;
    s.info().workers = o.workers;
    out.trace.devices.push_back(s.info());
    for (auto& n : o.notes) out.notes.push_back(std::move(n));
    if (p.trace) {
      if (layout == TrackLayout::PerBlock) s.drain_worker_tracks(out.trace.tracks);
      else s.drain_sm_lane_tracks(out.trace.tracks);
      out.trace.tracks.push_back(s.host_track("GPU " + std::to_string(s.device()) + " control thread"));
    }
  }
  out.makespan_ns = last > first ? last - first : 0;
  out.trace.meta.clock_source = "globaltimer aligned to steady_clock";
  return out;
}

}  // namespace gpulb::kernels::detail
