#include "gpulb/scenarios/builtin.hpp"

#include "scenarios/patterns/patterns.hpp"
#include "scenarios/connect4/connect4.hpp"
#include "scenarios/nqueens/nqueens.hpp"
#include "scenarios/uts/uts.hpp"

namespace gpulb::scenarios {

void register_builtin(Registry& registry) {
  registry.add(patterns::make_scenario());
  registry.add(uts::make_scenario());
  registry.add(nqueens::make_scenario());
  registry.add(connect4::make_scenario());
}

}  // namespace gpulb::scenarios
