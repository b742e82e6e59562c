// `chunked`: Chen et al. 2010, Solution 3 -- a launch per chunk whenever the GPU is free.
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& chunked() {
  static const PolicyDescriptor d{
      "chunked", "Chen et al. 2010, Solution 3",
      "a host control thread launches one kernel per chunk whenever its GPU is free",
      {.host_fed = true},
      {{{"chunk", "chunked: tasks per kernel launch; 0 = one per worker", "0", "0..1073741824", 0, 1 << 30, {}},
        &PolicyOptions::chunk}}};
  return d;
}

}  // namespace gpulb::policies
