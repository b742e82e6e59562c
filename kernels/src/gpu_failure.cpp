#include "gpulb/kernels/detail/gpu_failure.hpp"

#include <string>

#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"

namespace gpulb::kernels::detail {

void rethrow_gpu_failure(const ExecPlan& plan, int device) {
  try {
    throw;
  } catch (const cuda::CudaError& e) {
    const std::string where =
        "policy '" + std::string(plan.policy->name) + "' on GPU " + std::to_string(device);
    if (cuda::loses_context(e.code())) {
      cuda::mark_context_lost(device, std::string("a kernel of an earlier run failed with ") +
                                          cudaGetErrorName(e.code()));
      throw RunError(
          where + ": a kernel failed: " + e.what() +
          ". A task body trapped, read or wrote outside its memory, or failed an assertion "
          "(compute-sanitizer names the instruction). The GPU's CUDA context is lost for the rest "
          "of "
          "this process; a new process starts clean");
    }
    throw RunError(where + ": " + e.what());
  }
}

}  // namespace gpulb::kernels::detail
