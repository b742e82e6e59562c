// One CUDA error path (as cuCollections' CUCO_CUDA_TRY): every runtime call and every launch is
// checked; a failure throws gpulb::cuda::CudaError (a RunError) with the file, line, call and
// CUDA's message. The run frames add the policy and the GPU (kernels/detail/gpu_failure.hpp).
// Configure with -DGPULB_CUDA_DEBUG_SYNC=ON to synchronize and check after every launch.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gpulb/errors.hpp"

namespace gpulb::cuda {

class CudaError : public RunError {
 public:
  CudaError(cudaError_t code, const std::string& what) : RunError(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace gpulb::cuda

#define GPULB_CUDA_TRY(call)                                                  \
  do {                                                                        \
    const cudaError_t gpulb_err_ = (call);                                    \
    if (gpulb_err_ != cudaSuccess)                                            \
      ::gpulb::cuda::throw_cuda_error(gpulb_err_, #call, __FILE__, __LINE__); \
  } while (0)

#if defined(GPULB_CUDA_DEBUG_SYNC)
#define GPULB_CUDA_CHECK_LAUNCH()            \
  do {                                       \
    GPULB_CUDA_TRY(cudaGetLastError());      \
    GPULB_CUDA_TRY(cudaDeviceSynchronize()); \
  } while (0)
#else
#define GPULB_CUDA_CHECK_LAUNCH() GPULB_CUDA_TRY(cudaGetLastError())
#endif
