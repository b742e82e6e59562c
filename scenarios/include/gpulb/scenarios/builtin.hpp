// Registers every scenario gpulb ships.
#pragma once

#include "gpulb/registry.hpp"

namespace gpulb::scenarios {

void register_builtin(Registry& registry);

}  // namespace gpulb::scenarios
