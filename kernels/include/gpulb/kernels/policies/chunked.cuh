// The chunked policy on the CUDA backend (Chen et al. Solution 3): each GPU's control thread
// launches a chunk of the host pool whenever its GPU is free.
#pragma once

#include "gpulb/kernels/detail/launches.cuh"
#include "gpulb/policies/chunked.hpp"

namespace gpulb::kernels {

struct ChunkedDriver {
  static const PolicyDescriptor& descriptor() { return policies::chunked(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    return detail::run_launches(
        plan, make_body,
        {.one_launch = false, .chunk = plan.policy_options<policies::ChunkedOptions>().chunk});
  }
};

}  // namespace gpulb::kernels
