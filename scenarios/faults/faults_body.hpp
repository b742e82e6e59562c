// The `faults` task body: equal tasks of arithmetic, one of which (task `at`) misbehaves on
// purpose. Written once for the device and the CPU; the faults that only a GPU can contain are
// refused on the CPU before a run starts (FaultsInstance::unsupported_on).
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/clock.hpp"
#include "gpulb/task.hpp"

namespace gpulb::scenarios::faults {

enum class Fault : std::uint32_t {
  None,         // every task computes and returns
  Trap,         // task `at` executes a trap instruction (__trap)
  OutOfBounds,  // task `at` reads 1 TiB past its record array
  Hang,         // task `at` never returns and never polls the stop flag
  Slow,         // task `at` runs for slow_ns, returning early when the watchdog asks it to stop
  StopRank,  // no task misbehaves: rank `at` of a distributed run stops itself (SIGSTOP) once its
             // results are on rank 0, as a rank whose node hangs at the end of a job
};

// One step of the tasks' work: a 64-bit linear congruential recurrence (Knuth's MMIX constants).
GPULB_HD inline std::uint64_t faults_step(std::uint64_t x) {
  return x * 6364136223846793005ull + 1442695040888963407ull;
}

GPULB_HD inline std::uint64_t faults_thread_result(std::uint32_t task, std::uint32_t thread,
                                                   std::uint32_t work) {
  std::uint64_t x = (std::uint64_t{task} << 32) ^ (thread * 0x9E3779B97F4A7C15ull);
  for (std::uint32_t i = 0; i < work; ++i) x = faults_step(x);
  return x;
}

// ns on a clock that runs on either side (only differences are used).
GPULB_HD inline std::uint64_t faults_clock_ns() {
#ifdef __CUDA_ARCH__
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return host_now_ns();
#endif
}

struct FaultsRecord {
  std::uint32_t run_count;  // how many times the task ran (verification: exactly once)
  std::uint64_t checksum;   // the sum over the block's threads
};

struct FaultsBody {
  FaultsRecord* records;  // per task
  std::uint32_t work;     // recurrence steps per thread
  std::uint32_t at;       // the task that misbehaves
  Fault fault;
  std::uint64_t slow_ns;  // Fault::Slow: how long task `at` runs

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    std::uint64_t extra = 0;
    if (task.id == at) extra = misbehave(ctx);
    const std::uint32_t id = task.id;
    const std::uint32_t steps = work;
    const std::uint64_t sum = ctx.sum_over_threads([&](std::uint32_t t) {
      return faults_thread_result(id, t, steps);
    }) + extra;
    ctx.once([&] {
      records[id].checksum = sum;
      device_atomic_ref<std::uint32_t>(records[id].run_count).fetch_add(1, mo::relaxed);
    });
  }

 private:
  // Returns 0 where the task goes on (the read of OutOfBounds is folded in so that it happens).
  template <class Ctx>
  GPULB_HD std::uint64_t misbehave(Ctx& ctx) const {
    switch (fault) {
      case Fault::Trap:
#ifdef __CUDA_ARCH__
        __trap();
#endif
        return 0;
      case Fault::OutOfBounds: {
        const volatile std::uint64_t* far =
            reinterpret_cast<const volatile std::uint64_t*>(records) + (std::uint64_t{1} << 37);
        return *far & 0;
      }
      case Fault::Hang:
#ifdef __CUDA_ARCH__
        for (;;) __nanosleep(1'000'000);
#endif
        return 0;
      case Fault::Slow: {
        const std::uint64_t until = faults_clock_ns() + slow_ns;
        while (faults_clock_ns() < until && !ctx.stop_requested()) {}
        return 0;
      }
      default: return 0;
    }
  }
};

}  // namespace gpulb::scenarios::faults
