// The clock of the CPU backend's trace events. A traced UTS node records three events; with
// steady_clock (a vDSO clock_gettime, 18-25 ns a read) the clock reads alone cost the CPU backend
// most of its 75% tracing overhead on UTS. Where the x86 time-stamp counter is
// invariant (CPUID 0x80000007 EDX bit 8: one rate on every core, through sleep states) an event
// takes a raw TSC read instead (6-10 ns: 10 against 24 ns measured on the 2-core CI VM), and the
// run maps ticks to ns once, at its end, from two (tick, ns) pairs taken far apart. Elsewhere the
// ticks are steady_clock ns and the mapping is the identity.
#pragma once

#include <cstdint>

#include "gpulb/clock.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define GPULB_HAVE_TSC 1
#endif

namespace gpulb::cpu {

// Whether this machine's TSC is invariant (CPUID; kEventTicksAreTsc keeps the answer).
inline bool tsc_is_invariant() {
#ifdef GPULB_HAVE_TSC
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

// Whether this process's events carry TSC ticks (decided before main).
inline const bool kEventTicksAreTsc = tsc_is_invariant();

// A tick count: TSC ticks where `tsc`, else steady_clock ns.
inline std::uint64_t event_ticks(bool tsc = kEventTicksAreTsc) {
#ifdef GPULB_HAVE_TSC
  if (tsc) {
    std::uint32_t lo,
        hi;  // rdtsc by hand: x86intrin.h is more than nvcc's host pass needs to parse
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (std::uint64_t{hi} << 32) | lo;
  }
#endif
  (void)tsc;
  return host_now_ns();
}

// Maps a run's event ticks to ns since its origin: the line through (origin_tick, 0) with the
// slope measured between the process's first use of the clock and the run's end (the longer the
// baseline, the smaller the error of the two paired reads: a few ns over milliseconds).
class TickScale {
 public:
  TickScale(bool tsc, std::uint64_t origin_tick) : tsc_(tsc), origin_tick_(origin_tick) {
    (void)process_start();
  }

  // Called at the run's end, before any to_origin_ns.
  void calibrate() {
    if (!tsc_) return;
    const Pair& first = process_start();
    const Pair now = pair(tsc_);
    if (now.tick > first.tick && now.ns > first.ns)
      ns_per_tick_ = double(now.ns - first.ns) / double(now.tick - first.tick);
  }

  std::uint64_t origin_tick() const { return origin_tick_; }

  std::uint64_t to_origin_ns(std::uint64_t tick) const {
    if (tick <= origin_tick_) return 0;
    return tsc_ ? static_cast<std::uint64_t>(double(tick - origin_tick_) * ns_per_tick_)
                : tick - origin_tick_;
  }

 private:
  struct Pair {
    std::uint64_t tick, ns;
  };
  static Pair pair(bool tsc) {
    // The ns read between two tick reads: its tick is their midpoint.
    const std::uint64_t t0 = event_ticks(tsc), ns = host_now_ns(), t1 = event_ticks(tsc);
    return {t0 + (t1 - t0) / 2, ns};
  }
  // The first pair of the process: taken when the first run starts.
  static const Pair& process_start() {
    static const Pair first = pair(kEventTicksAreTsc);
    return first;
  }

  bool tsc_;
  std::uint64_t origin_tick_;
  double ns_per_tick_ = 1.0;
};

}  // namespace gpulb::cpu
