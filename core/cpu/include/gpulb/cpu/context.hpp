// The worker context a task body sees on the CPU backend: a host thread playing one thread block.
// The CUDA backend's context (kernels/) has the same members, so a body is written once:
//   template <class Ctx> GPULB_HD void operator()(Ctx& ctx, const Task& task) const;
#pragma once

#include <atomic>
#include <cstdint>

#include "gpulb/clock.hpp"
#include "gpulb/cpu/event_clock.hpp"
#include "gpulb/spawn.hpp"
#include "gpulb/task.hpp"
#include "gpulb/cpu/trace_stream.hpp"

namespace gpulb::cpu {

class WorkerContext {
 public:
  WorkerContext(std::uint32_t rank, std::uint32_t block_size, TraceStream stream,
                std::uint64_t origin_ns, const std::atomic<bool>* stop = nullptr,
                SpawnBuffer* spawn = nullptr)
      : rank_(rank),
        block_size_(block_size),
        clock_(stream, kSpanPerRead * clock_read_ticks(), stream.max_batch),
        origin_ns_(origin_ns),
        stop_(stop),
        spawn_(spawn) {}

  std::uint32_t rank() const { return rank_; }
  std::uint32_t block_size() const { return block_size_; }
  // A block's threads are one loop here: a body that would deal work out to keep lanes busy
  // together (BlockContext: true) may instead do the work in its cheapest order.
  static constexpr bool kThreadsRunTogether = false;

  // Device: each thread of the block calls fn(thread) once. CPU: a loop over the block's threads.
  template <class F>
  void for_each_thread(F&& fn) const {
    for (std::uint32_t t = 0; t < block_size_; ++t) fn(t);
  }

  // fn(i) once for each i in [0, n) (device: the block's threads stride over it). One loop here,
  // not block_size loops that mostly find nothing to do: for UTS's few children a node, the
  // strided form cost about a tenth of a node's time on the CPU.
  template <class F>
  void for_each_index(int n, F&& fn) const {
    for (int i = 0; i < n; ++i) fn(i);
  }

  // fn(thread) -> uint64, summed over the block's threads (device: a block reduction).
  template <class F>
  std::uint64_t sum_over_threads(F&& fn) const {
    std::uint64_t sum = 0;
    for (std::uint32_t t = 0; t < block_size_; ++t) sum += fn(t);
    return sum;
  }

  // Device: thread 0 of the block runs fn (the others wait at a barrier). CPU: fn runs.
  template <class F>
  void once(F&& fn) const {
    fn();
  }

  // True once the watchdog has fired: a long-running body may poll it and return early.
  bool stop_requested() const { return stop_ != nullptr && stop_->load(std::memory_order_relaxed); }

  // Creates a child task (see gpulb/spawn.hpp for the contract): it becomes visible to other
  // workers when this task's body has returned; the runtime sets its id, parent and depth.
  // Device: any thread may call it. CPU: appends to this worker's spawn buffer. Under a policy
  // that runs no spawned tasks (hardware, chunked; task-queue where the plan says the scenario
  // does not spawn) the run fails.
  void spawn(const Task& child) const {
    if (spawn_ != nullptr) {
      spawn_->push(child);
    } else {
      ++refused_spawns_;
    }
  }
  std::uint32_t refused_spawns() const { return refused_spawns_; }

  std::uint64_t now_ns() const { return host_now_ns() - origin_ns_; }
  // Trace hooks (trace_stream.hpp decides which take a clock read). Raw ticks: the runtime maps
  // them to ns at the run's end (event_clock.hpp).
  GPULB_TRACE_INLINE void record(trace::EventKind kind, std::uint32_t arg = 0,
                                 std::uint16_t aux = 0) const {
    clock_.record(kind, arg, aux);
  }
  // An event at the time of this worker's record before it (no clock read; BatchClock::record_untimed).
  GPULB_TRACE_INLINE void record_at_last(trace::EventKind kind, std::uint32_t arg = 0,
                                         std::uint16_t aux = 0) const {
    clock_.record_untimed(kind, arg, aux);
  }
  GPULB_TRACE_INLINE void task_begin(const Task& task) const {
    clock_.task_begin(task.id, task.kind);
  }
  GPULB_TRACE_INLINE void task_end() const { clock_.task_end(); }
  // Before a wait outside the trace (a launch barrier): see BatchClock::pause.
  void pause_trace() const { clock_.pause(); }

 private:
  std::uint32_t rank_;
  std::uint32_t block_size_;
  mutable BatchClock clock_;  // the worker's own: only its thread records
  std::uint64_t origin_ns_;
  const std::atomic<bool>* stop_;
  SpawnBuffer* spawn_;
  mutable std::uint32_t refused_spawns_ = 0;
};

}  // namespace gpulb::cpu
