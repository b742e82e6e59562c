// The blocking-queue policy on the CUDA backend: one global queue behind a CAS spin lock
// (mechanism: blocking_queue_kernels.cuh), on one GPU.
#pragma once

#include "gpulb/kernels/blocking_queue_kernels.cuh"
#include "gpulb/kernels/detail/body_factory.hpp"
#include "gpulb/kernels/detail/single_gpu_run.cuh"
#include "gpulb/policies/blocking_queue.hpp"

namespace gpulb::kernels {

struct BlockingQueueDriver {
  static const PolicyDescriptor& descriptor() { return policies::blocking_queue(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    return detail::run_on_one_gpu(
        plan, [&](detail::GpuSession& s, std::atomic<bool>& abort_all, detail::DynamicOutcome& o) {
          detail::control_blocking_queue<std::decay_t<decltype(make_body(0u, 0u))>>(
              s, plan, make_body, abort_all, o);
        });
  }
};

}  // namespace gpulb::kernels
