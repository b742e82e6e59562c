// Whether two traces ran one input: a ratio of their times says something about the policies only
// then ("B takes 0.25x the time of A" for uts against N-Queens says nothing).
#pragma once

#include <functional>
#include <string>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::viewer {

struct InputMatch {
  bool same = false;
  std::string difference;  // where not the same: "uts against nqueens", "d=7 against d=9"
};

// Whether a parameter of `scenario` is part of its input (the scenario's own parameters, which the
// registry knows and the model does not); policy options and the block size are how a run went.
using IsInputParam = std::function<bool(const std::string& scenario, const std::string& param)>;

// The same scenario, and the same value of every parameter that is its input. Without `is_input`,
// every parameter both runs name is taken for input but block_size.
InputMatch compare_inputs(const trace::RunMetadata& a, const trace::RunMetadata& b,
                          const IsInputParam& is_input = {});

}  // namespace gpulb::viewer
