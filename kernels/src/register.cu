#include "gpulb/cuda/devices.hpp"
#include "gpulb/kernels/drivers.cuh"
#include "gpulb/kernels/register.hpp"

namespace gpulb::kernels {

void register_cuda_backend(Registry& registry) {
  registry.set_cuda_device_lister(&cuda::list_devices);
  Drivers::register_policies(registry, Backend::Cuda);
}

}  // namespace gpulb::kernels
