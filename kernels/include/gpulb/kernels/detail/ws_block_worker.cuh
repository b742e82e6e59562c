// The work-stealing block worker (Grossman: a persistent block per worker, a task at a time on all
// its threads) that the one-GPU kernel (work_stealing_kernels.cuh) and the kernel across GPUs
// (work_stealing_multi_gpu.cuh) both run. They differ only in where an idle block looks beyond its
// GPU and how the run's end is counted, which a `Remote` type supplies:
//   OneGpu           (below) nowhere; the credit goes to `pending` and the end is terminated()
//   RemoteGpus<S>    (work_stealing_multi_gpu.cuh) a steal from or a request to another GPU's
//                    block after remote_after failed passes, answers to other GPUs' requests, the
//                    per-GPU reserve in front of the run's one `pending`, interleaved ids
// The task-a-lane worker (work_stealing_lanes.cuh) runs a batch of tasks per step, with its own scan
// and child placement, so it is a worker of its own; it shares the hooks, the host feed, the
// scheduling steps (gpulb/work_stealing.hpp) and these Remotes, through the batch forms below.
//
// Also here: the device side of the host's staging ring, which idle blocks move into their GPU's
// sharing queue (feed_from_host; the ring's protocol is at the top of work_stealing_kernels.cuh).
//
// What a Remote provides, each called by thread 0 at one point of the loop:
//   start(a, rank)                 before the first task
//   before_lookup(worker)          at every lookup, before find_task
//   after_miss(worker, task)       after a lookup that found nothing on this GPU: a RemoteFind
//   on_found()                     a task was found (either way)
//   idle_pass_ends_run(worker)     after a pass that found nothing anywhere: whether the run is over
//   feeds(staging)                 whether this block may move host tasks (the ring is GPU 0's)
//   before_publish(worker)         as a task's children are about to be published
//   take_children(a, parent, rank, count), consecutive_ids(a), count_children(worker, count)
//                                  the children's ids, and their units before they are counted
//   remote_steals(a, rank)         steals from other GPUs, for the block's stats
// and for the task-a-lane worker, which takes and counts a batch at a time:
//   after_miss(worker, batch, k)   as after_miss, the tasks taken (k) into `batch` instead
//   count_batch(worker, k, n)      as count_children, for k children of n tasks
//   before_publish(worker, n)      as before_publish, as a batch of n tasks ends
//   id_stride(a)                   the step between the ids a GPU gives out (1 on one GPU)
#pragma once

#include <cstdint>

#include "gpulb/kernels/detail/ws_block_hooks.cuh"
#include "gpulb/work_stealing.hpp"

namespace gpulb::kernels {

// ---- The host's staging ring, device side --------------------------------------------------------

// The host's staging ring (mapped memory): the host writes slots [consumed, written) and then
// `written` (release); the feeding block stores `consumed` (release) once it has copied them.
struct HostStaging {
  alignas(kHotLine) std::uint64_t written;
  alignas(kHotLine) std::uint64_t consumed;
};

struct StagingRef {
  HostStaging* ctl = nullptr;  // mapped
  const Task* ring = nullptr;  // mapped, `capacity` slots
  std::uint32_t capacity = 0;
  std::uint32_t* lock = nullptr;  // device memory: 1 while a block feeds
  std::uint64_t prefilled = 0;    // initial tasks put in the sharing queue before the launch: `fed`
                                  // counts them too, so the ring position is fed - prefilled
};

// Tasks one feeding moves at most: bounds how long a block spends reading over PCIe.
inline constexpr std::uint32_t kFeedBatch = 64;

// Thread 0 of an idle block: moves staged host tasks into the sharing queue if no other block is
// doing so. Returns how many it moved (0: none staged, the queue is full, or someone else feeds).
template <Scope S, Scope C>
__device__ std::uint32_t feed_from_host(const BasicWorkStealingRef<S, C>& ws,
                                        const StagingRef& st) {
  device_atomic_ref<std::uint32_t> lock(*st.lock);
  std::uint32_t expected = 0;
  if (lock.load(mo::relaxed) != 0 ||
      !lock.compare_exchange_strong(expected, 1, mo::acquire, mo::relaxed))
    return 0;
  // acquire: the ring slots the host wrote before `written` are visible. One PCIe round trip.
  const std::uint64_t written = system_atomic_ref<std::uint64_t>(st.ctl->written).load(mo::acquire);
  // ours while locked
  const std::uint64_t fed = scoped_atomic_ref<C, std::uint64_t>(ws.ctl->fed).load(mo::relaxed);
  const std::uint64_t staged = written - (fed - st.prefilled);
  std::uint32_t moved = 0;
  if (staged > 0) {
    const std::uint64_t from = fed - st.prefilled;  // position in the ring's stream
    const auto slot = static_cast<std::uint32_t>(from % st.capacity);
    std::uint64_t n = staged < kFeedBatch ? staged : kFeedBatch;
    if (n > st.capacity - slot) n = st.capacity - slot;  // up to the ring's end; the rest next time
    moved = ws.accept_host_tasks(st.ring + slot, static_cast<std::uint32_t>(n));
    // release: the host reuses the slots only after our reads of them.
    if (moved > 0)
      system_atomic_ref<std::uint64_t>(st.ctl->consumed).store(from + moved, mo::release);
  }
  lock.store(0, mo::release);
  return moved;
}

// An idle block moves staged host tasks into its GPU's sharing queue; true when it moved some.
// `drained` (the block's own flag, monotone): every host task is in, so the block never looks at
// the host again. `may_feed`: false on a GPU whose blocks do not feed (the ring is GPU 0's).
template <class Ws>
__device__ bool feed_when_idle(const Ws& ws, const StagingRef& staging, bool& drained,
                               const WsBlockHooks& hooks, bool may_feed = true) {
  if (drained) return false;
  drained = ws.host_drained();
  if (drained || !may_feed || feed_from_host(ws, staging) == 0) return false;
  hooks.on_fed(ws.sharing.size_hint());
  return true;
}

// ---- The block worker ----------------------------------------------------------------------------

// What a look beyond the GPU gave: a task (recorded by the Remote), nothing, or the run stopped or
// ended while the block waited for an answer.
enum class RemoteFind { Found, None, Stop, Done };

// What a work-stealing worker (this block worker, the task-a-lane worker) holds for its Remote to
// read: the scheduler's view `Ws` (BasicWorkStealingRef: this GPU's deques and queues, the run's
// control words), the run's arguments, the hooks, the block's credit, its victim picker and rank,
// and the host feed's state. Thread 0's; the other threads carry it unused.
template <class Ws>
struct WsWorkerState {
  __device__ WsWorkerState(const Ws& ws, const DynamicArgs& a, const BlockContext& ctx,
                           PendingCredit& credit, VictimPicker picker)
      : ws(ws), a(a), hooks(ctx, blockIdx.x), credit(credit), picker(picker), rank(blockIdx.x) {}

  // The run is over: every host task is in (`drained`, monotone, loaded before) and nothing is
  // pending. For a Remote that tests the end itself.
  __device__ bool finished() {
    if (!drained) drained = ws.host_drained();
    return drained && ws.no_pending();
  }

  const Ws ws;  // a copy: a reference to the kernel parameter takes more registers
  const DynamicArgs& a;
  WsBlockHooks hooks;
  PendingCredit& credit;  // in shared memory: in a register it cost this kernel resident blocks
  VictimPicker picker;
  const std::uint32_t rank;
  bool drained = false;  // every host task is in the sharing queue
};

// Thread 0's state and steps; the other threads carry it unused.
template <class Ws, class Remote>
class WsBlockWorker : public WsWorkerState<Ws> {
  using State = WsWorkerState<Ws>;

 public:
  using State::a, State::credit, State::drained, State::hooks, State::picker, State::rank,
      State::ws;

  __device__ WsBlockWorker(const Ws& ws, const StagingRef& staging, VictimPicker picker,
                           const DynamicArgs& a, const BlockContext& ctx, PendingCredit& credit,
                           Remote remote)
      : State(ws, a, ctx, credit, picker), staging_(staging), remote_(remote) {}

  // The whole block: the per-task cycle (dynamic_block_loop) until the run ends or stops.
  template <class Body>
  __device__ void run(const BlockContext& ctx, const Body& body, DynamicMailbox& box) {
    hooks.on_start();
    if (threadIdx.x == 0) {
      credit.units = 0;  // only thread 0 ever touches it
      remote_.start(a, rank);
    }
    dynamic_block_loop(
        ctx, body, box, [&](Task& task) { return find(task); },
        [&](const Task& task, std::uint32_t count) { return publish(task, count); });
    const std::uint32_t remote_steals = threadIdx.x == 0 ? remote_.remote_steals(a, rank) : 0;
    hooks.on_end(a.stats[rank], remote_steals);
  }

  // Thread 0: the next task into `task` (Run), or the end.
  __device__ WorkerAction find(Task& task) {
    for (;;) {
      if (a.should_stop()) return WorkerAction::Stop;
      remote_.before_lookup(*this);
      const FindResult f = ws.find_task(rank, picker, task);
      if (f.source != TaskSource::None) {
        hooks.on_task(ws, f, task);
        return found();
      }
      if (f.steal_failed) hooks.on_steal_failed(f.victim);
      const RemoteFind r = remote_.after_miss(*this, task);
      if (r == RemoteFind::Found) return found();
      if (r == RemoteFind::Stop) return WorkerAction::Stop;
      if (r == RemoteFind::Done) return WorkerAction::Done;
      hooks.on_idle();
      // Fed: look again at once, the tasks are ours to take as much as anyone's.
      if (feed_when_idle(ws, staging_, drained, hooks, remote_.feeds(staging_))) continue;
      if (remote_.idle_pass_ends_run(*this)) return WorkerAction::Done;
      __nanosleep(backoff_);
      backoff_ = backoff_ < kMaxBackoffNs ? 2 * backoff_ : kMaxBackoffNs;
    }
  }

  // Thread 0, after the body: `count` children in our spawn slots get ids and are published.
  // False when the run failed.
  __device__ bool publish(const Task& task, std::uint32_t count) {
    remote_.before_publish(*this);
    a.task_finished(rank, hooks.on_task_done());
    if (!remote_.take_children(a, task, rank, count)) return false;
    if (count == 0) {
      ws.task_done(credit);
      return true;
    }
    remote_.count_children(*this, count);
    const trace::EventPayload spawn =
        trace::spawn_event(a.slots(rank)[0].id, count, remote_.consecutive_ids(a));
    const PublishResult p = ws.publish_children(rank, a.slots(rank), count, credit);
    hooks.on_spawn(spawn, count, p, ws.overflow);
    if (p.failed) {
      a.fail(ws.spill ? DynamicFailure::OverflowFull : DynamicFailure::DequeFull, rank, task.id,
             count);
      return false;
    }
    return true;
  }

 private:
  __device__ WorkerAction found() {
    backoff_ = kMinBackoffNs;
    remote_.on_found();
    return WorkerAction::Run;
  }

  const StagingRef& staging_;  // the kernel parameter's: a copy would hold registers
  Remote remote_;
  unsigned backoff_ = kMinBackoffNs;
};

// One GPU: nothing beyond it. An idle block's credit goes to `pending` and it tests for the end.
struct OneGpu {
  __device__ void start(const DynamicArgs&, std::uint32_t) {}
  template <class W>
  __device__ void before_lookup(W&) {}
  template <class W>
  __device__ RemoteFind after_miss(W&, Task&) {
    return RemoteFind::None;
  }
  template <class W>
  __device__ RemoteFind after_miss(W&, Task*, std::uint32_t&) {
    return RemoteFind::None;
  }
  __device__ void on_found() {}
  __device__ bool feeds(const StagingRef&) const { return true; }
  template <class W>
  __device__ bool idle_pass_ends_run(W& w) {
    w.ws.flush_pending(w.credit);
    return w.ws.terminated();
  }
  template <class W>
  __device__ void before_publish(W&) {}
  template <class W>
  __device__ void before_publish(W&, std::uint32_t) {}
  __device__ bool take_children(const DynamicArgs& a, const Task& parent, std::uint32_t rank,
                                std::uint32_t count) const {
    return a.take_children(parent, rank, count);
  }
  template <class W>
  __device__ void count_children(W&, std::uint32_t) {}
  template <class W>
  __device__ void count_batch(W&, std::uint32_t, std::uint32_t) {}
  __device__ static constexpr std::uint32_t id_stride(const DynamicArgs&) { return 1; }
  __device__ bool consecutive_ids(const DynamicArgs&) const { return true; }  // take_children's
  __device__ std::uint32_t remote_steals(const DynamicArgs&, std::uint32_t) const { return 0; }
};

}  // namespace gpulb::kernels
