// Task bodies for runtime tests, written once for every backend (GPULB_HD).
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb::testing {

// Counts how often each task id runs: the exactly-once check.
struct CountingBody {
  std::uint32_t* counts;
  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    ctx.once([&] { device_atomic_ref<std::uint32_t>(counts[task.id]).fetch_add(1, mo::relaxed); });
  }
};

// Never finishes on its own: waits for the watchdog's stop request.
struct StuckBody {
  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task&) const {
    while (!ctx.stop_requested()) {}
  }
};

#if defined(GPULB_TSAN_BUILD)
inline constexpr std::uint32_t kContentionTasks = 100'000;  // TSAN runs ~10x slower
#else
inline constexpr std::uint32_t kContentionTasks = 1'000'000;
#endif

}  // namespace gpulb::testing
