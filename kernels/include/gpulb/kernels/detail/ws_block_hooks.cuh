// What a work-stealing block reports while it runs, in one place: its trace events and its
// counters (DynamicBlockStats), as the CPU workers' worker_begin / run_task / worker_end do
// (core/cpu/include/gpulb/cpu/worker.hpp). The kernels (work_stealing_kernels.cuh, the block
// worker in ws_block_worker.cuh, the lane worker in work_stealing_lanes.cuh) call these hooks and
// never the trace: which event a moment gets, its arguments, and the once-per-idle-spell rule are
// written here alone.
//
// Thread 0's state: the other threads of the block carry it unused (BlockContext records only from
// thread 0). Every hook is inlined into the kernel, so the counters stay in registers as locals
// would (ptxas -v: the same registers and spills as the kernels had with the calls in place).
//
// The events (the CPU backend's, so that the viewer reads both alike):
//   on_start      WorkerStart (arg: the block, aux: its SM)
//   on_task       TaskBegin, after the event that found the task: DequeLevel (own deque, after the
//                 pop), Steal (arg: the victim), QueueLevel (sharing aux 0, overflow aux 1)
//   on_steal      Steal (arg: the victim, aux: 1 + its GPU where it is another GPU's)
//   on_steal_failed, on_idle
//                 StealFailed (arg: the victim) and DequeueFailed once per idle spell; every failed
//                 pass is counted and WorkerEnd's arg carries the count
//   on_fed        QueueLevel of the sharing queue after a block moved host tasks into it
//   on_spawn      SpawnBatch (arg: the first child, aux: the children) or a count-only Spawn, with
//                 the deque's level after the push at the same time; QueueLevel of the overflow
//                 queue where children spilled
//   on_end        WorkerEnd (arg: failed passes), then the counters into the run's per-block stats
#pragma once

#include <cstdint>

#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/work_stealing.hpp"

namespace gpulb::kernels {

class WsBlockHooks {
 public:
  __device__ WsBlockHooks(const BlockContext& ctx, std::uint32_t rank)
      : ctx_(ctx), owner_(static_cast<std::uint16_t>(rank)) {
    st_.sm = smid();
  }

  __device__ void on_start() const {
    ctx_.record(trace::EventKind::WorkerStart, owner_, static_cast<std::uint16_t>(st_.sm));
  }

  // A task find_task found on this GPU: the event that found it, then its TaskBegin.
  template <class Ws>
  __device__ void on_task(const Ws& ws, const FindResult& f, const Task& task) {
    ctx_.record_found_task(found_event(ws, f, owner_), task);
    if (f.source == TaskSource::Stolen) ++st_.steals;
    idle_ = false;
  }
  // A task taken otherwise (from another GPU, after on_steal): its TaskBegin.
  __device__ void on_task_taken(const Task& task) {
    ctx_.record_task_begin(task);
    idle_ = false;
  }

  // `aux`: 0 for a victim of this GPU, else trace::steal_aux_for_device(its GPU).
  __device__ void on_steal(std::uint32_t victim, std::uint16_t aux = 0) {
    ++st_.steals;
    ctx_.record(trace::EventKind::Steal, victim, aux);
  }
  __device__ void on_steal_failed(std::uint32_t victim, std::uint16_t aux = 0) {
    ++st_.steals_failed;
    if (!idle_) ctx_.record(trace::EventKind::StealFailed, victim, aux);
  }

  // A pass that found work other than a task to begin (a batch of the lane worker).
  __device__ void on_found() { idle_ = false; }
  // A pass that found nothing anywhere.
  __device__ void on_idle() {
    if (st_.failed_attempts != ~std::uint64_t{0}) ++st_.failed_attempts;
    if (!idle_) ctx_.record(trace::EventKind::DequeueFailed, 0, kSharingQueueId);
    idle_ = true;
  }
  __device__ bool idle() const { return idle_; }

  // Tasks reached the block's own deque other than by its own spawns (a batch popped, stolen
  // tasks pushed): the deque's level.
  __device__ void on_deque_level(std::uint32_t level) const {
    ctx_.record(trace::EventKind::DequeLevel, level, owner_);
  }
  // The block took tasks from, or put tasks into, a shared queue: its level.
  __device__ void on_queue_level(std::uint32_t level, std::uint16_t queue) const {
    ctx_.record(trace::EventKind::QueueLevel, level, queue);
  }
  __device__ void on_fed(std::uint32_t sharing_level) const {
    on_queue_level(sharing_level, kSharingQueueId);
  }

  // The block finished its `tasks`-th task (the host's progress poll reads the count).
  __device__ std::uint64_t on_task_done(std::uint64_t tasks = 1) { return st_.tasks += tasks; }
  __device__ std::uint64_t tasks_done() const { return st_.tasks; }

  // `count` children published: the spawn with the deque's level after the push at its time
  // (BlockContext::record_two), and the overflow queue's level where some spilled.
  __device__ void on_spawn(const trace::EventPayload& spawn, std::uint32_t count,
                           const PublishResult& p, const SharingQueueRef& overflow) {
    st_.spawned += count;
    if (p.pushed > 0)
      ctx_.record_two(spawn, {trace::EventKind::DequeLevel, p.deque_level, owner_});
    else
      ctx_.record(spawn.kind, spawn.arg, spawn.aux);
    if (p.spilled > 0) on_spilled(p.spilled, overflow.size_hint());
  }
  // A batch's children (a task a lane): the spawn alone; their placement reports its own levels.
  __device__ void on_spawn(const trace::EventPayload& spawn, std::uint32_t count) {
    st_.spawned += count;
    ctx_.record(spawn.kind, spawn.arg, spawn.aux);
  }
  __device__ void on_spilled(std::uint32_t spilled, std::uint32_t overflow_level) {
    st_.spilled += spilled;
    on_queue_level(overflow_level, kOverflowQueueId);
  }

  // The end: WorkerEnd, then the counters into `stats` (thread 0). `remote_steals`: steals from
  // other GPUs, which a run across GPUs counts apart (also in `steals`).
  __device__ void on_end(DynamicBlockStats& stats, std::uint32_t remote_steals = 0) {
    const std::uint64_t failed = st_.failed_attempts;
    ctx_.record(trace::EventKind::WorkerEnd,
                static_cast<std::uint32_t>(failed > 0xFFFFFFFFu ? 0xFFFFFFFFu : failed));
    if (threadIdx.x != 0) return;
    st_.remote_steals = remote_steals;
    stats = st_;
  }

 private:
  const BlockContext& ctx_;
  std::uint16_t owner_;
  DynamicBlockStats st_{};
  bool idle_ = false;  // in an idle spell: its first failure was recorded
};

}  // namespace gpulb::kernels
