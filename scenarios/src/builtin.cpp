#include "gpulb/scenarios/builtin.hpp"

#include "scenarios/patterns/patterns.hpp"

namespace gpulb::scenarios {

void register_builtin(Registry& registry) { registry.add(patterns::make_scenario()); }

}  // namespace gpulb::scenarios
