#include "gpulb/cuda/devices.hpp"

#include <cuda_runtime_api.h>

namespace gpulb::cuda {

std::vector<trace::Device> list_devices() {
  std::vector<trace::Device> out;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return out;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    trace::Device d;
    d.kind = trace::DeviceKind::Gpu;
    d.index = static_cast<std::uint32_t>(i);
    d.name = prop.name;
    d.sm_count = static_cast<std::uint32_t>(prop.multiProcessorCount);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace gpulb::cuda
