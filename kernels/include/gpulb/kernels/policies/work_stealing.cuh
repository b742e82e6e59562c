// The work-stealing policy on the CUDA backend: Grossman's work stealing with ABP deques per block, a sharing queue fed from the host
// (mechanism: work_stealing_kernels.cuh), on one GPU; with --gpus N > 1 on N GPUs whose blocks also steal from each other's
// deques over peer memory, or through host memory without peer access (work_stealing_multi_gpu.cuh; its host frame
// detail/multi_gpu_ws_run.cuh). --gpus 0 (the default) runs on one GPU. --param task_per=lane:
// a task per thread instead of per block (work_stealing_lanes.cuh; across GPUs
// work_stealing_lanes_multi_gpu.cuh, under remote=request).
#pragma once

#include "gpulb/kernels/work_stealing_kernels.cuh"
#include "gpulb/kernels/work_stealing_lanes.cuh"
#include "gpulb/kernels/work_stealing_lanes_multi_gpu.cuh"
#include "gpulb/kernels/detail/multi_gpu_ws_run.cuh"
#include "gpulb/kernels/detail/body_factory.hpp"
#include "gpulb/kernels/detail/single_gpu_run.cuh"
#include "gpulb/policies/work_stealing.hpp"

namespace gpulb::kernels {

struct WorkStealingDriver {
  static const PolicyDescriptor& descriptor() { return policies::work_stealing(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    using Body = std::decay_t<decltype(make_body(0u, 0u))>;
    // A distributed run (docs/distributed.md, GPU ranks) runs the kernel across GPUs even on one
    // GPU a rank: its mailboxes carry the host's loans to other ranks.
    const bool across = plan.gpus > 1 || plan.distribution != nullptr;
    const RemoteMode remote = plan.policy_options<policies::WorkStealingOptions>().remote;
    if (plan.distribution != nullptr && remote != RemoteMode::Request)
      throw ConfigError(
          "work-stealing on GPU ranks lends tasks to other ranks through the blocks' mailboxes, "
          "which remote=request uses; use --param remote=request (the default)");
    if (plan.policy_options<policies::WorkStealingOptions>().task_per == TaskPer::Lane) {
      if constexpr (LaneBody<Body>) {
        if (across) {
          if (remote != RemoteMode::Request)
            throw ConfigError(
                "work-stealing: task_per=lane across GPUs takes work from another GPU by request; "
                "use --param remote=request (the default), or task_per=block with remote=steal");
          try {
            return detail::run_work_stealing_on_gpus<Scope::Device, detail::LaneTasks>(plan,
                                                                                       make_body);
          } catch (...) {
            detail::rethrow_gpu_failure(plan, 0);  // as for task_per=block below
          }
        }
        return detail::run_on_one_gpu(
            plan,
            [&](detail::GpuSession& s, std::atomic<bool>& abort_all, detail::DynamicOutcome& o) {
              detail::control_work_stealing_lanes<Body>(s, plan, make_body, abort_all, o);
            },
            detail::TrackLayout::PerBlock, nullptr);
      } else {
        throw ConfigError(
            "work-stealing: task_per=lane needs a scenario whose tasks have a lane form (uts); "
            "this one runs a task a block: use task_per=block");
      }
    }
    if (across) {
      try {
        if (remote == RemoteMode::Request)
          return detail::run_work_stealing_on_gpus<Scope::Device>(plan, make_body);
        return detail::run_work_stealing_on_gpus<Scope::System>(plan, make_body);
      } catch (...) {
        detail::rethrow_gpu_failure(
            plan, 0);  // a CUDA error outside any one GPU's part (the placement, peer access)
      }
    }
    return detail::run_on_one_gpu(
        plan,
        [&](detail::GpuSession& s, std::atomic<bool>& abort_all, detail::DynamicOutcome& o) {
          detail::control_work_stealing<Body>(s, plan, make_body, abort_all, o);
        },
        detail::TrackLayout::PerBlock, nullptr);
  }
};

}  // namespace gpulb::kernels
