// The `patterns` task body (Chen et al. 2010, section 6.3.1): blocks of equal work, some of them
// "nullified" (they return at once). Written once for the device and the CPU.
//
// Work: every thread of the block runs `work` steps of a 64-bit linear congruential recurrence
// seeded by (block, thread): a dependent chain of multiply-adds that no compiler folds away. The
// block's result is the sum over its threads; the host checks it in O(log work) per thread by
// jumping the recurrence ahead (lcg_jump), so verification is exact and cheap.
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb::scenarios::patterns {

inline constexpr std::uint64_t kLcgMul = 6364136223846793005ull;  // Knuth's MMIX constants
inline constexpr std::uint64_t kLcgAdd = 1442695040888963407ull;
inline constexpr std::uint16_t kNullified = 1;  // Task::flags bit

GPULB_HD inline std::uint64_t lcg_seed(std::uint32_t block, std::uint32_t thread) {
  return (static_cast<std::uint64_t>(block) << 32) ^ (thread * 0x9E3779B97F4A7C15ull) ^
         0xD1B54A32D192ED03ull;
}

GPULB_HD inline std::uint64_t lcg_spin(std::uint64_t x, std::uint32_t steps) {
  for (std::uint32_t i = 0; i < steps; ++i) x = x * kLcgMul + kLcgAdd;
  return x;
}

// What a block leaves behind, one record a block.
struct PatternsRecord {
  std::uint32_t run_count;  // how many times it ran (verification: exactly once)
  std::uint64_t checksum;   // the sum over its threads
};

struct PatternsBody {
  PatternsRecord* records;  // per block
  std::uint32_t work;       // recurrence steps per thread

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    if (task.flags & kNullified) {
      ctx.once([&] {
        device_atomic_ref<std::uint32_t>(records[task.id].run_count).fetch_add(1, mo::relaxed);
      });
      return;
    }
    const std::uint32_t block = task.id;
    const std::uint32_t steps = work;
    const std::uint64_t sum =
        ctx.sum_over_threads([&](std::uint32_t t) { return lcg_spin(lcg_seed(block, t), steps); });
    ctx.once([&] {
      records[block].checksum = sum;
      device_atomic_ref<std::uint32_t>(records[block].run_count).fetch_add(1, mo::relaxed);
    });
  }
};

}  // namespace gpulb::scenarios::patterns
