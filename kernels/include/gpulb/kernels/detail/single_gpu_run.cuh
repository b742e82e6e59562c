// The run of the policies whose workers share one GPU's memory (blocking-queue, combining, and
// work-stealing and static-list unless --gpus N > 1 asks for their runs across GPUs,
// multi_gpu_ws_run.cuh and multi_gpu_sl_run.cuh), on the GPU run frame (gpu_run.cuh): their deques
// and queues live in one device, so the run uses one GPU. With --gpus 0 on a host of several GPUs
// the run uses GPU 0 and says so. The policy's control function sizes the grid, makes the body,
// launches and waits, on the calling thread.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "gpulb/exec_plan.hpp"
#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/kernels/detail/gpu_run.cuh"
#include "gpulb/kernels/detail/gpu_session.hpp"

namespace gpulb::kernels::detail {

// control(GpuSession&, std::atomic<bool>& abort_all, DynamicOutcome&) on GPU 0.
template <class Control>
class OneGpuRun {
 public:
  // `spreads`: the policy has a run across GPUs (--gpus N asks for it).
  OneGpuRun(Control& control, TrackLayout layout, bool spreads)
      : control_(control), layout_(layout), spreads_(spreads) {}

  std::vector<std::string> notes;
  TrackLayout layout() const { return layout_; }
  void allocate(GpuRun&) {}  // the control function allocates: its grid decides the sizes
  void drive(GpuRun& run) {
    run.on_gpu(0, [&] { control_(run.session(0), run.abort_all(), outcome_); });
  }

  GpuShare collect(GpuRun&, std::uint32_t, ExecOutput& out) {
    out.tasks_run = outcome_.tasks_run;
    out.tasks_spawned = outcome_.tasks_spawned;
    out.metrics = std::move(outcome_.metrics);
    for (std::string& n : outcome_.notes) out.notes.push_back(std::move(n));
    return {outcome_.launch_ns, outcome_.end_ns, outcome_.tasks_run, outcome_.workers};
  }

  void finish(GpuRun& run, ExecOutput& out) {
    if (run.plan().gpus == 0 && run.present() > 1) {
      out.notes.push_back("policy '" + std::string(run.plan().policy->name) + "' runs on one GPU" +
                          (spreads_ ? " unless --gpus N asks for more" : "") + ": used GPU 0 of " +
                          std::to_string(run.present()));
    }
  }

 private:
  Control& control_;
  TrackLayout layout_;
  bool spreads_;
  DynamicOutcome outcome_;
};

// `why_one`: why the policy runs on one GPU, for the refusal of --gpus N; nullptr for a policy that
// has a run across GPUs (its driver sends --gpus N > 1 there, so only --gpus 0 or 1 arrive here).
template <class Control>
ExecOutput run_on_one_gpu(const ExecPlan& plan, Control&& control,
                          TrackLayout layout = TrackLayout::PerBlock,
                          const char* why_one = "its deques and queues live in one GPU's memory") {
  GpuRun run(plan, GpuRun::OnOne{});
  if (plan.gpus > 1) {
    throw ConfigError("policy '" + std::string(plan.policy->name) +
                      "' runs on one GPU on the cuda backend (" +
                      (why_one ? why_one : "this frame") +
                      "); use --gpus 1, or a policy that runs across GPUs (task-queue, hardware, "
                      "chunked, work-stealing, static-list)");
  }
  OneGpuRun<std::remove_reference_t<Control>> r(control, layout, why_one == nullptr);
  return run_on_gpus(run, r);
}

}  // namespace gpulb::kernels::detail
