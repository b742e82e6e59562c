// `gpulb lesson`: list the lessons, run one's recipe, show its verdict, record its series.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gpulb/registry.hpp"

namespace gpulb::tools {

struct LessonArgs {
  std::string action, name, out_dir = ".", backend = "cpu", output;
  int repeats = 3;
  std::vector<std::string> traces;  // lesson show: A and B; none: the shipped ones
  bool json = false;
  std::vector<std::string> params;  // overrides of the recipe's parameters: its key parameter
};

// The `lesson` subcommand and its options, filling `args`.
CLI::App* add_lesson_command(CLI::App& app, LessonArgs& args);
// Runs the action `args` names; the exit code.
int cmd_lesson(const Registry& reg, const LessonArgs& args);

}  // namespace gpulb::tools
