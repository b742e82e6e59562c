// --gpus N against the GPUs present: one check and one message for every policy, made by
// gpulb::run from the registry's device list and again by the CUDA frames from the driver's count.
#pragma once

#include <cstdint>
#include <string>

#include "gpulb/errors.hpp"

namespace gpulb {

// ConfigError naming both numbers where `requested` (0: all) is more GPUs than `present`.
inline void check_gpu_request(std::uint32_t requested, std::uint64_t present) {
  if (requested <= present) return;
  throw ConfigError("--gpus " + std::to_string(requested) + ": this host has " +
                    std::to_string(present) + " CUDA GPU" + (present == 1 ? "" : "s") +
                    (present ? "; use --gpus 1.." + std::to_string(present) : ""));
}

}  // namespace gpulb
