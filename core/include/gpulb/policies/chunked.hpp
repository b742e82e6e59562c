// `chunked`: Chen et al. 2010, Solution 3 -- a launch per chunk whenever the GPU is free.
#pragma once

#include <cstdint>

#include "gpulb/policy.hpp"

namespace gpulb::policies {

struct ChunkedOptions {
  std::uint32_t chunk = 0;  // tasks per launch; 0 = one per worker
};

inline const PolicyDescriptor& chunked() {
  static const PolicyDescriptor d{
      "chunked",
      "Chen et al. 2010, Solution 3",
      "a host control thread launches one kernel per chunk whenever its GPU is free",
      {.host_fed = true},
      options_for<ChunkedOptions>(
          {number_option("chunk", "chunked: tasks per kernel launch; 0 = one per worker",
                         &ChunkedOptions::chunk, 0, 1 << 30)})};
  return d;
}

}  // namespace gpulb::policies
