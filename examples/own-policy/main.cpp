// own-gpulb: the gpulb command line with one more policy, `round-robin` (round_robin.hpp), beside
// the shipped ones. A shipped scenario whose tasks are all known up front (patterns) runs under it:
//   own-gpulb run patterns --policy round-robin --backend cpu --param pattern=P4 -o rr.gpulb
#include <iostream>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/cpu/add_policy.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/tools/cli.hpp"
#include "round_robin.hpp"

int main(int argc, char** argv) {
  gpulb::Registry registry = gpulb::builtin::make_registry();
  try {
    gpulb::cpu::add_policy<own::RoundRobinDriver>(registry);
  } catch (const gpulb::ConfigError& e) {  // a name a shipped policy has already
    std::cerr << "own-gpulb: error: " << e.what() << "\n";
    return 2;
  }
  return gpulb::tools::cli_main(argc, argv, registry);
}
