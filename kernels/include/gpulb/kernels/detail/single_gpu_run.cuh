// The frame of the policies whose workers share one GPU's memory (blocking-queue, and work-stealing
// and static-list unless --gpus N > 1 asks for their runs across GPUs, work_stealing_multi_gpu.cuh
// and multi_gpu_sl_run.cuh): their deques and queues live in one device, so the run uses one GPU. With --gpus 0 on a host of several
// GPUs the run uses GPU 0 and says so. The policy's control function sizes the grid, makes the body,
// launches and waits; this frame turns its outcome into an ExecOutput.
#pragma once

#include <atomic>
#include <string>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gpu_request.hpp"
#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"

namespace gpulb::kernels::detail {

// The ExecOutput of a run on one GPU: counts, notes, the trace drained from the GPU.
inline ExecOutput one_gpu_output(const ExecPlan& plan, GpuSession& s, DynamicOutcome& o, int count, TrackLayout layout,
                                 bool spreads = false) {
  const std::string policy(plan.policy->name);
  ExecOutput out;
  out.tasks_run = o.tasks_run;
  out.tasks_spawned = o.tasks_spawned;
  out.workers = o.workers;
  out.metrics = std::move(o.metrics);
  out.notes = std::move(o.notes);
  if (plan.gpus == 0 && count > 1) {
    out.notes.push_back("policy '" + policy + "' runs on one GPU" + (spreads ? " unless --gpus N asks for more" : "") + ": used GPU 0 of " +
                        std::to_string(count));
  }
  out.makespan_ns = o.end_ns > o.launch_ns ? o.end_ns - o.launch_ns : 0;
  s.info().workers = o.workers;
  out.trace.devices.push_back(s.info());
  if (plan.trace) {
    if (layout == TrackLayout::PerBlock) s.drain_worker_tracks(out.trace.tracks);
    else s.drain_sm_lane_tracks(out.trace.tracks);
    out.trace.tracks.push_back(s.host_track("GPU " + std::to_string(s.device()) + " control thread"));
  }
  out.trace.meta.clock_source = "globaltimer aligned to steady_clock";
  if (plan.progress) plan.progress(out.tasks_run, plan.expected_tasks);
  return out;
}

// control(GpuSession&, std::atomic<bool>& abort_all, DynamicOutcome&). `why_one`: why the policy
// runs on one GPU, for the refusal of --gpus N; nullptr for a policy that has a run across GPUs
// (its driver sends --gpus N > 1 there, so only --gpus 0 or 1 arrive here).
template <class Control>
ExecOutput run_on_one_gpu(const ExecPlan& plan, Control&& control, TrackLayout layout = TrackLayout::PerBlock,
                          const char* why_one = "its deques and queues live in one GPU's memory") {
  const std::string policy(plan.policy->name);
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  check_gpu_request(plan.gpus, static_cast<std::uint64_t>(count));
  if (plan.gpus > 1) {
    throw ConfigError("policy '" + policy + "' runs on one GPU on the cuda backend (" + (why_one ? why_one : "this frame") +
                      "); use --gpus 1, or a policy that runs across GPUs (task-queue, hardware, chunked, work-stealing, static-list)");
  }
  cuda::check_usable(0);
  try {
    GPULB_CUDA_TRY(cudaSetDevice(0));
    GpuSession s(0, 0, host_now_ns());
    std::atomic<bool> abort_all{false};
    DynamicOutcome o;
    control(s, abort_all, o);
    return one_gpu_output(plan, s, o, count, layout, why_one == nullptr);
  } catch (...) {
    rethrow_gpu_failure(plan, 0);
  }
}

}  // namespace gpulb::kernels::detail
