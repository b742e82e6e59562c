// The hardware policy on the CUDA backend (Chen et al. Solution 1): each GPU's even share of the
// tasks in one launch of one block per task; the hardware block scheduler balances.
#pragma once

#include "gpulb/kernels/detail/launches.cuh"
#include "gpulb/policies/hardware.hpp"

namespace gpulb::kernels {

struct HardwareDriver {
  static const PolicyDescriptor& descriptor() { return policies::hardware(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    return detail::run_launches(plan, make_body, {.one_launch = true, .chunk = 0});
  }
};

}  // namespace gpulb::kernels
