// The gpulb command line as a function: `gpulb` is cli_main over the shipped registry
// (builtin::registry()), and a program that adds its own scenarios or policies to a registry
// (builtin::make_registry(), then Registry::add_scenario or cpu::add_policy) runs the same
// commands over its own (examples/own-policy, examples/own-scenario).
#pragma once

#include "gpulb/registry.hpp"

namespace gpulb::tools {

// Parses argv as `gpulb` does (list, run, info, export, bench, lesson) and runs the command; the
// registry serves list, run and lesson run (bench and lesson record measure the shipped one).
// Returns the exit code (gpulb --help lists them). `registry` must outlive the call.
int cli_main(int argc, char** argv, const Registry& registry);

}  // namespace gpulb::tools
