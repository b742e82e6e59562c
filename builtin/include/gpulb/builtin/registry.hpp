// The composition root: the registry every front end uses (the CLI, the viewer, the tests).
// It assembles the shipped scenarios x the policies x the backends built here; nothing below this
// layer knows a scenario by name.
#pragma once

#include "gpulb/registry.hpp"

namespace gpulb::builtin {

const Registry& registry();

}  // namespace gpulb::builtin
