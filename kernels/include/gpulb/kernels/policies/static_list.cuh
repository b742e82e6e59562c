// The static-list policy on the CUDA backend: the static task list, one launch per generation
// (mechanism: static_list_kernels.cuh), on one GPU; with --gpus N > 1 on N GPUs, each running its
// share of every generation, the host evening the shares out between generations (a departure from
// the papers: detail/multi_gpu_sl_run.cuh). --gpus 0 (the default) and 1 run on one GPU.
#pragma once

#include "gpulb/kernels/static_list_kernels.cuh"
#include "gpulb/kernels/detail/body_factory.hpp"
#include "gpulb/kernels/detail/multi_gpu_sl_run.cuh"
#include "gpulb/kernels/detail/single_gpu_run.cuh"
#include "gpulb/policies/static_list.hpp"

namespace gpulb::kernels {

struct StaticListDriver {
  static const PolicyDescriptor& descriptor() { return policies::static_list(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    if (plan.gpus > 1) {
      try {
        return detail::run_static_list_on_gpus(plan, make_body);
      } catch (...) {
        detail::rethrow_gpu_failure(plan,
                                    0);  // a CUDA error outside any one GPU's part (peer access)
      }
    }
    return detail::run_on_one_gpu(
        plan,
        [&](detail::GpuSession& s, std::atomic<bool>& abort_all, detail::DynamicOutcome& o) {
          detail::control_static_list<std::decay_t<decltype(make_body(0u, 0u))>>(s, plan, make_body,
                                                                                 abort_all, o);
        },
        detail::TrackLayout::PerBlock, nullptr);
  }
};

}  // namespace gpulb::kernels
