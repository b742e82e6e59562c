// The registry every front end uses: the shipped scenarios, plus the CUDA executors and device
// list where the CUDA backend was built.
#pragma once

#include "gpulb/registry.hpp"

namespace gpulb::tools {

const Registry& builtin_registry();

}  // namespace gpulb::tools
