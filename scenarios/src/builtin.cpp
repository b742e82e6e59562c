#include "gpulb/scenarios/builtin.hpp"

#include "scenarios/patterns/patterns.hpp"
#include "scenarios/nqueens/nqueens.hpp"
#include "scenarios/uts/uts.hpp"

namespace gpulb::scenarios {

void register_builtin(Registry& registry) {
  registry.add(patterns::make_scenario());
  registry.add(uts::make_scenario());
  registry.add(nqueens::make_scenario());
}

}  // namespace gpulb::scenarios
