// `hardware`: Chen et al. 2010, Solution 1 -- one launch, one block per task.
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& hardware() {
  static const PolicyDescriptor d{
      "hardware",
      "Chen et al. 2010, Solution 1",
      "one launch, one block per task; the hardware block scheduler balances",
      {},
      {}};
  return d;
}

}  // namespace gpulb::policies
