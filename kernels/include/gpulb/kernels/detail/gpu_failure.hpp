// The error a user sees when a GPU's part of a run fails: the policy and the GPU are named, and a
// failure that outlives the run (a lost context) is recorded so that later runs in this process
// are refused with the reason (gpulb/cuda/device_health.hpp).
#pragma once

#include "gpulb/exec_plan.hpp"

namespace gpulb::kernels::detail {

// Call from a catch block of a GPU's control code: rethrows the exception in flight, a CUDA error
// turned into a RunError that names the policy and the GPU; any other exception unchanged.
[[noreturn]] void rethrow_gpu_failure(const ExecPlan& plan, int device);

}  // namespace gpulb::kernels::detail
