// Adds the CUDA backend to a registry: the device lister and its policy drivers. Scenarios are
// bound to it by builtin/ (kernels::run_workload).
#pragma once

#include "gpulb/registry.hpp"

namespace gpulb::kernels {

void register_cuda_backend(Registry& registry);

}  // namespace gpulb::kernels
