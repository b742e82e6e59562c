// The composition root: the registry every front end uses (the CLI, the viewer, the tests).
// It assembles the shipped scenarios x the policies x the backends built here; nothing below this
// layer knows a scenario by name.
#pragma once

#include "gpulb/registry.hpp"

namespace gpulb::builtin {

const Registry& registry();

// A registry of its own holding what registry() holds, for a program that adds its own scenarios
// (Registry::add_scenario) or policies (cpu::add_policy) to the shipped ones and hands it to the
// command line (gpulb/tools/cli.hpp) or to gpulb::run.
Registry make_registry();

}  // namespace gpulb::builtin
