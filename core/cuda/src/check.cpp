#include "gpulb/cuda/check.hpp"

namespace gpulb::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(err, std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                           cudaGetErrorString(err) + ") in " + call + " at " + file + ":" +
                           std::to_string(line));
}

}  // namespace gpulb::cuda
