// The scenarios gpulb ships: one line each, (instance type, factory). The CPU registration
// (registry.cpp) and the CUDA instantiation (cuda_scenarios.cu) both expand this one list, so a
// new scenario is its folder under scenarios/ plus one line here.
#pragma once

#include "connect4/connect4.hpp"
#include "faults/faults.hpp"
#include "nbody/nbody.hpp"
#include "md/md.hpp"
#include "md2d/md2d.hpp"
#include "nqueens/nqueens.hpp"
#include "patterns/patterns.hpp"
#include "uts/uts.hpp"

#define GPULB_BUILTIN_SCENARIOS(X)                                             \
  X(scenarios::patterns::PatternsInstance, scenarios::patterns::make_scenario) \
  X(scenarios::uts::UtsInstance, scenarios::uts::make_scenario)                \
  X(scenarios::nqueens::NQueensInstance, scenarios::nqueens::make_scenario)    \
  X(scenarios::connect4::Connect4Instance, scenarios::connect4::make_scenario) \
  X(scenarios::faults::FaultsInstance, scenarios::faults::make_scenario)       \
  X(scenarios::nbody::NBodyInstance, scenarios::nbody::make_scenario)          \
  X(scenarios::md::MdInstance, scenarios::md::make_scenario)                   \
  X(scenarios::md2d::Md2dInstance, scenarios::md2d::make_scenario)
