// The host clock every trace is aligned to.
#pragma once

#include <chrono>
#include <cstdint>

namespace gpulb {

inline std::uint64_t host_now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace gpulb
