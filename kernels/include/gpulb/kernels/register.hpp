// Adds the CUDA backend to a registry: the device lister and one executor per scenario.
#pragma once

#include "gpulb/registry.hpp"

namespace gpulb::kernels {

void register_cuda_backend(Registry& registry);

}  // namespace gpulb::kernels
