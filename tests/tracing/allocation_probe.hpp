// Replaces the global operator new with a probe that records the largest single allocation while
// an AllocationProbe is alive, and refuses (std::bad_alloc) any over 256 MiB instead of making it:
// a regression fails a test without costing the machine gigabytes. It defines the replacement
// functions, so exactly one source file of an executable includes it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace gpulb::testing::detail {
inline std::atomic<bool> g_probing{false};
inline std::atomic<std::size_t> g_largest{0};
inline constexpr std::size_t kRefuseAbove = std::size_t{256} << 20;
}  // namespace gpulb::testing::detail

void* operator new(std::size_t n) {
  using namespace gpulb::testing::detail;
  if (g_probing.load(std::memory_order_relaxed)) {
    std::size_t seen = g_largest.load();
    while (n > seen && !g_largest.compare_exchange_weak(seen, n)) {}
    if (n > kRefuseAbove) throw std::bad_alloc();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace gpulb::testing {

// The largest single allocation made while one is alive.
class AllocationProbe {
 public:
  AllocationProbe() {
    detail::g_largest = 0;
    detail::g_probing = true;
  }
  ~AllocationProbe() { detail::g_probing = false; }
  AllocationProbe(const AllocationProbe&) = delete;
  AllocationProbe& operator=(const AllocationProbe&) = delete;
  std::size_t largest() const { return detail::g_largest.load(); }
};

}  // namespace gpulb::testing
