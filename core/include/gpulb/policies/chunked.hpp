// `chunked`: Chen et al. 2010, Solution 3 -- a launch per chunk whenever the GPU is free.
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& chunked() {
  static const PolicyDescriptor d{
      "chunked",
      "Chen et al. 2010, Solution 3",
      "a host control thread launches one kernel per chunk whenever its GPU is free",
      {.host_fed = true},
      {number_option("chunk", "chunked: tasks per kernel launch; 0 = one per worker",
                     &PolicyOptions::chunk, 0, 1 << 30)}};
  return d;
}

}  // namespace gpulb::policies
