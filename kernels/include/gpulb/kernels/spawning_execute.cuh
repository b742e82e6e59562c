// The CUDA backend's policies for task bodies that spawn (ctx.spawn): work-stealing, static-list,
// blocking-queue. A scenario's CUDA executor calls
//   gpulb::kernels::execute_spawning(plan, [&](std::uint32_t gpu_slot, std::uint32_t workers) {
//     return Body{...device pointers, per-rank arrays of `workers` entries...};
//   })
// The factory learns the worker count because it is only known once the persistent grid has been
// sized from the occupancy of the kernel for that Body (persistent_grid), and bodies that keep
// per-worker counters index them by ctx.rank() < workers. kernels::execute() sends these three
// policies here too, with a factory of one argument.
//
// These policies run on one GPU: their deques and queues live in one device's memory (stealing
// across GPUs would go over peer links; not modelled). With --gpus 0 on a host of several GPUs the
// run uses GPU 0 and says so.
#pragma once

#include <atomic>
#include <string>
#include <type_traits>

#include "gpulb/clock.hpp"
#include "gpulb/kernels/blocking_queue_kernels.cuh"
#include "gpulb/kernels/static_list_kernels.cuh"
#include "gpulb/kernels/work_stealing_kernels.cuh"
#include "gpulb/scenario.hpp"

namespace gpulb::kernels {

inline bool is_spawning_policy(Policy p) {
  return p == Policy::WorkStealing || p == Policy::StaticList || p == Policy::BlockingQueue;
}

// For the executors of scenarios whose bodies spawn: on the GPU a child spawned under task-queue,
// hardware or chunked would be dropped, so those combinations are refused before anything runs
// (the CPU backend fails such a run when the first child appears).
inline void require_spawning_policy(const ExecPlan& plan, const std::string& scenario) {
  if (!is_spawning_policy(plan.policy)) {
    throw ConfigError("scenario '" + scenario + "' spawns child tasks, which policy '" + std::string(to_string(plan.policy)) +
                      "' cannot run; use work-stealing, static-list or blocking-queue");
  }
}

template <class MakeBody>
ExecOutput execute_spawning(const ExecPlan& plan, MakeBody&& make_body) {
  using Body = std::decay_t<decltype(make_body(std::uint32_t{0}, std::uint32_t{0}))>;
  if (!is_spawning_policy(plan.policy)) {
    throw ConfigError("policy '" + std::string(to_string(plan.policy)) + "' does not run spawned tasks");
  }
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  if (plan.gpus > 1) {
    throw ConfigError("policy '" + std::string(to_string(plan.policy)) +
                      "' runs on one GPU on the cuda backend (its deques and queues live in one GPU's memory); use --gpus 1");
  }
  if (plan.host_feed && plan.policy != Policy::WorkStealing) {
    throw ConfigError("host inserts while the run goes on (host_feed) need the work-stealing policy");
  }
  GPULB_CUDA_TRY(cudaSetDevice(0));
  detail::GpuSession s(0, 0, host_now_ns());
  std::atomic<bool> abort_all{false};
  detail::DynamicOutcome o;
  switch (plan.policy) {
    case Policy::WorkStealing: detail::control_work_stealing<Body>(s, plan, make_body, abort_all, o); break;
    case Policy::StaticList: detail::control_static_list<Body>(s, plan, make_body, abort_all, o); break;
    default: detail::control_blocking_queue<Body>(s, plan, make_body, abort_all, o); break;
  }

  ExecOutput out;
  out.tasks_run = o.tasks_run;
  out.tasks_spawned = o.tasks_spawned;
  out.workers = o.workers;
  out.metrics = std::move(o.metrics);
  out.notes = std::move(o.notes);
  if (plan.gpus == 0 && count > 1) {
    out.notes.push_back("policy '" + std::string(to_string(plan.policy)) + "' runs on one GPU: used GPU 0 of " + std::to_string(count));
  }
  out.makespan_ns = o.end_ns > o.launch_ns ? o.end_ns - o.launch_ns : 0;
  s.info().workers = o.workers;
  out.trace.devices.push_back(s.info());
  if (plan.trace) {
    s.drain_worker_tracks(out.trace.tracks);
    out.trace.tracks.push_back(s.host_track("GPU " + std::to_string(s.device()) + " control thread"));
  }
  out.trace.meta.clock_source = "globaltimer aligned to steady_clock";
  if (plan.progress) plan.progress(out.tasks_run, plan.expected_tasks);
  return out;
}

}  // namespace gpulb::kernels
