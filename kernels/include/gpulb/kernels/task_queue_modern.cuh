// The modern variant of the Chen et al. task queue: the same queues, counters and last-taker
// signal (TaskQueueRef), fed and drained with what CUDA offers today.
//
// DEPARTURES from the paper, each for speed on current GPUs:
//  - Two feeds (--param feed=):
//    copy (the default): the host's control thread copies a batch straight from the (pinned) task
//    pool into the queue's device slots with the copy engine, then d_written_gm and d_n_gm, three
//    cudaMemcpyAsync on the queue's own stream and no wait: stream order lands the tasks before the
//    counters, and the host writes a queue again only once the device has drained it, which it can
//    only do after the counters (so after the tasks) arrived. The paper waits on an event per batch
//    (host_write_fence) and first copies the batch into staging memory; both cost more than the copy.
//    mapped: the host writes a batch into mapped pinned memory and rings a per-queue doorbell
//    (system-scope release stores): an enqueue makes no CUDA call. An idle block that finds the
//    queue empty and the doorbell ahead of d_written_gm wins a CAS on `published`, copies the batch
//    into device memory with all its threads (coalesced), and then publishes d_written_gm and
//    d_n_gm in the order task_queue.hpp requires. One block's loads over PCIe are latency-bound:
//    slower than the copy engine whenever tasks are short (docs/benchmarks.md).
//  - A block claims up to `claim` tasks with one fetch-and-add (TaskQueueRef::try_claim), copies
//    them to shared memory (all its threads; thread 0 alone for one task, below), and runs them one
//    after the other -- but never more than its fair share of what the queue holds (the queue's
//    tasks over the blocks that poll it), and only one at a time until it has run kShortEvidence
//    tasks and each of its claims took under kLongTaskNs a task. Past that a claim's cost is lost
//    in the task's and claiming ahead only hoards: the tail of a run of coarse tasks is then one
//    task long, not `claim` tasks. With claims of 8 the md scenario's 4,096 tasks (512K atoms)
//    could keep at most 512 of an H200's 1,188 blocks busy, and on 2 H200s GPU 1 got no task at all
//    (measured: its busy time 0). The evidence and the longest claim, not the mean: on patterns P1
//    (every other task empty) a block that had run one empty task claimed 8, and where its warps
//    were the SM's youngest (the warp scheduler favours the oldest) its first full task took the
//    whole run, 2.3 ms; the run then ended on the 7 tasks it held, started one after the other
//    (H100 trace: the last 0.1% of task starts spread over 140 us, against 28 us under the paper's
//    claims of one).
//  - A claim of one task (every claim until a block has seen kShortEvidence short tasks, and every
//    claim of a run of coarse tasks) is copied and finished by thread 0 alone, before the block's
//    one barrier, as the paper's dequeue is: every warp then starts the task together. A claim of
//    several is copied by all threads between two barriers and finished by thread 0 after them,
//    which for one task made warp 0 start it one L2 round trip after the other warps (the block
//    waits for its slowest warp at the task's end). Measured on an H100 (patterns, 100,000 blocks x
//    4,000 steps, seven rounds alternating, both builds in one call): P0-P4 2.0-3.2% faster than
//    before, the mean gap between a block's tasks 2.35 instead of 2.65 us; most of the gain came
//    with the kernel's new code (then 38 registers instead of 30) rather than the path
//    (docs/benchmarks.md).
//  - Termination by a host flag, set once every queue is drained, instead of one HALT task per
//    block (with batched claims one block could take two HALTs and leave another spinning).
//  - Idle blocks back off with __nanosleep between polls, and at most one block per queue reads
//    that queue's doorbell over PCIe each kPollIntervalNs (a device timestamp they race for):
//    2112 blocks polling mapped memory saturate PCIe and starve the very copy they wait for
//    (measured: ~1 us a task before this limit). The halt flag is read the same way and mirrored
//    into device memory, where every block can poll it for free.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpulb/kernels/worker_kernels.cuh"

namespace gpulb::kernels {

inline constexpr std::uint32_t kMaxClaim = 32;
inline constexpr std::uint64_t kPollIntervalNs = 1000;
// A claim costs a few hundred ns (three L2 atomics under contention); past this a task's own time
// dwarfs it and a block claims one task at a time.
inline constexpr std::uint64_t kLongTaskNs = 1000;
// Tasks a block runs, claiming one at a time, before it may claim more: what it knows of the
// run's tasks before it holds several of them.
inline constexpr std::uint32_t kShortEvidence = 8;

// Mapped pinned memory the host writes, one per queue.
struct alignas(kHotLine) Doorbell {
  std::uint32_t written;  // accumulated tasks rung in: the d_written_gm this batch will publish
  std::uint32_t n;        // tasks in the batch
};

struct ModernFeedRef {
  Doorbell* doorbells = nullptr;  // mapped, num_queues; null under the copy feed (the host copies)
  const Task* staging = nullptr;  // mapped, num_queues * capacity
  std::uint32_t* published = nullptr;  // device, num_queues: the doorbell value already published
  std::uint32_t* halt = nullptr;       // mapped: the host has no more tasks
  std::uint64_t* last_poll = nullptr;  // device, num_queues: %globaltimer of the last doorbell read
  std::uint32_t* halt_seen = nullptr;  // device: a block has seen `halt`
  std::uint32_t claim = 1;
};

inline constexpr int kPublish = 3,
                     kRunCopied = 4;  // kRunCopied: thread 0 copied and finished a one-task claim

// All threads of the block copy `n` tasks as 16-byte words, coalesced, several loads in flight
// per thread (a batch from mapped host memory crosses PCIe: latency, not bandwidth, is the cost).
//   from_host: ld.global.cv, never a stale cached copy of host memory;
//   otherwise: ld.global.cg, L2 only, so no L1 line of an earlier batch in the same slots is read.
template <bool from_host>
__device__ inline void block_copy_tasks(Task* dst, const Task* src, std::uint32_t n) {
  auto* d = reinterpret_cast<uint4*>(dst);
  const auto* s = reinterpret_cast<const uint4*>(src);
  const std::uint32_t words = n * (sizeof(Task) / sizeof(uint4));
#pragma unroll 4
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x)
    d[i] = from_host ? __ldcv(s + i) : __ldcg(s + i);
}

// A claim from a range batch (the copy feed; WrittenWord::range): slot 0 holds the batch's first
// task and slot k stands for it with id + k. All threads write the claimed tasks [first, first+n).
__device__ inline void block_expand_range(Task* dst, const Task* batch, std::uint32_t first,
                                          std::uint32_t n) {
  auto* d = reinterpret_cast<uint4*>(dst);
  const auto* s = reinterpret_cast<const uint4*>(batch);
  constexpr std::uint32_t kWords = sizeof(Task) / sizeof(uint4);
  static_assert(offsetof(Task, id) == 0, "the id is the first word of a task");
  for (std::uint32_t i = threadIdx.x; i < n * kWords; i += blockDim.x) {
    uint4 w = __ldcg(s + i % kWords);
    if (i % kWords == 0) w.x += first + i / kWords;
    d[i] = w;
  }
}

// How many tasks a block claims now: up to `claim`, but no more than the queue's tasks over the
// blocks that poll it (at least one). `queued` is what the block's last claim left in the queue:
// a stale count only makes the claim a little larger or smaller, and costs no extra L2 round trip.
__device__ inline std::uint32_t fair_claim(const TaskQueueRef& queues, std::int32_t queued,
                                           std::uint32_t claim) {
  const std::uint32_t pollers =
      gridDim.x / queues.num_queues > 0 ? gridDim.x / queues.num_queues : 1;
  const std::uint32_t share = queued > 0 ? static_cast<std::uint32_t>(queued) / pollers : 0;
  return share < 1 ? 1 : (share < claim ? share : claim);
}

// Algorithm 3's claim with fewer serial L2 round trips, for thread 0 of a modern block. Measured on
// an H100 (patterns, traced): 2.4-2.7 us between one task's end and the next one's start, about
// six dependent L2 operations (try_claim: load d_written_gm, load d_consumed_gm, fetch-and-add
// d_n_gm; the range flag; finish_claim: fetch-and-add d_consumed_gm, load d_written_gm).
//  - `optimistic` (the block's last claim on this queue got tasks): straight to the fetch-and-add;
//    the emptiness test only guards against hammering d_n_gm of an empty queue, so it runs after a
//    miss. Correctness does not rest on it: the host writes d_n_gm absolutely (a store, not an add),
//    and a claim that sees a batch's d_n_gm (acquire) sees that batch's d_written_gm.
//  - d_written_gm and the range flag come in one 8-byte load after the claim; finish uses that
//    d_written_gm, which cannot change before this claim is finished (the host writes a queue
//    again only once every claimed task of the batch is counted in d_consumed_gm).
struct ModernClaim {
  TaskQueueRef::Claim claim;
  std::uint32_t written;  // d_written_gm of the claimed batch
  std::uint32_t range;    // the batch is a range (block_expand_range)
};
__device__ inline ModernClaim modern_claim(const TaskQueueRef& queues, std::uint32_t& cursor,
                                           std::uint32_t most, bool optimistic) {
  ModernClaim m{};
  if (!optimistic) {
    // The emptiness test, and nothing more: try_claim's claim would cost a second fetch-and-add.
    TaskQueueCounters& q = queues.counters[cursor];
    const std::uint32_t written =
        device_atomic_ref<std::uint32_t>(q.written.value).load(mo::acquire);
    if (device_atomic_ref<std::uint32_t>(q.consumed.value).load(mo::relaxed) == written) {
      cursor = queues.next(cursor);
      return m;
    }
  }
  const std::uint32_t i = cursor;
  TaskQueueCounters& q = queues.counters[i];
  const std::int32_t old = device_atomic_ref<std::int32_t>(q.n.value).fetch_sub(
      static_cast<std::int32_t>(most), mo::acquire);
  if (old <= 0) {
    cursor = queues.next(i);
    return m;
  }
  TaskQueueRef::Claim& c = m.claim;
  c.count = static_cast<std::uint32_t>(old) < most ? static_cast<std::uint32_t>(old) : most;
  c.first = static_cast<std::uint32_t>(old) - c.count;
  c.got = true;
  c.queue = i;
  c.remaining = static_cast<std::int32_t>(c.first);
  static_assert(offsetof(WrittenWord, range) == sizeof(std::uint32_t) && alignof(WrittenWord) >= 8);
  const unsigned long long word =
      device_atomic_ref<unsigned long long>(*reinterpret_cast<unsigned long long*>(&q.written))
          .load(mo::relaxed);
  m.written = static_cast<std::uint32_t>(word);  // little-endian: value, then range
  m.range = static_cast<std::uint32_t>(word >> 32);
  return m;
}
// Thread 0 alone copies a claim of one task into `dst` (four 16-byte loads in flight at once).
__device__ inline void thread_copy_one_task(Task* dst, const TaskQueueRef& queues,
                                            const ModernClaim& m) {
  constexpr std::uint32_t kWords = sizeof(Task) / sizeof(uint4);
  const Task* batch = queues.tasks + static_cast<std::size_t>(m.claim.queue) * queues.capacity;
  const auto* src = reinterpret_cast<const uint4*>(batch + (m.range != 0 ? 0 : m.claim.first));
  uint4 w[kWords];
#pragma unroll
  for (std::uint32_t k = 0; k < kWords; ++k) w[k] = __ldcg(src + k);
  if (m.range != 0) w[0].x += m.claim.first;  // block_expand_range's id, for one task
#pragma unroll
  for (std::uint32_t k = 0; k < kWords; ++k) reinterpret_cast<uint4*>(dst)[k] = w[k];
}

// finish_claim with the claim's d_written_gm (modern_claim): one fetch-and-add.
__device__ inline void modern_finish(const TaskQueueRef& queues, std::uint32_t& cursor,
                                     const ModernClaim& m) {
  const TaskQueueRef::Claim& c = m.claim;
  const std::uint32_t jj = device_atomic_ref<std::uint32_t>(queues.counters[c.queue].consumed.value)
                               .fetch_add(c.count, mo::acq_rel);
  if (jj + c.count == m.written) {
    system_atomic_ref<std::uint32_t>(queues.host_consumed[c.queue].value)
        .store(jj + c.count, mo::release);
    cursor = queues.next(c.queue);
  }
}

struct ModernMailbox {
  alignas(16) unsigned char task_bytes[kMaxClaim * sizeof(Task)];
  ModernClaim claim;
  std::uint32_t publish_queue;
  std::uint32_t publish_n;
  std::uint32_t publish_written;
  int action;
  BlockScratch scratch;
};
// Thread 0's state of a modern block between claims.
struct ModernBlockState {
  std::uint32_t cursor;      // the queue the block looks at next
  std::uint32_t failed = 0;  // failed looks, for WorkerEnd
  // Tasks run so far, and whether a claim of them ever took kLongTaskNs a task (it stays so).
  // Until a block knows its tasks are short it claims one at a time: the first claims of a run of
  // coarse tasks would otherwise hoard.
  std::uint32_t ran = 0;
  bool saw_long = false, long_tasks = true;
  bool optimistic = false;     // the last claim on `cursor` got tasks
  std::int32_t last_left = 0;  // what that claim left in the queue
};

// Thread 0, queue `examined` found empty: has the host rung its doorbell since? One block a
// microsecond asks. True where this block is to publish the rung batch (box.publish_*). Also
// passes on the host's halt (queue 0's look).
__device__ __forceinline__ bool modern_doorbell_rung(const TaskQueueRef& queues,
                                                     const ModernFeedRef& feed,
                                                     std::uint32_t examined, ModernMailbox& box) {
  TaskQueueCounters& q = queues.counters[examined];
  std::uint32_t written = device_atomic_ref<std::uint32_t>(q.written.value).load(mo::acquire);
  if (device_atomic_ref<std::uint32_t>(q.consumed.value).load(mo::relaxed) != written) return false;
  const std::uint64_t now = globaltimer();
  std::uint64_t last = device_atomic_ref<std::uint64_t>(feed.last_poll[examined]).load(mo::relaxed);
  if (now - last < kPollIntervalNs || !device_atomic_ref<std::uint64_t>(feed.last_poll[examined])
                                           .compare_exchange_strong(last, now, mo::relaxed))
    return false;
  const std::uint32_t rung =
      feed.doorbells
          ? system_atomic_ref<std::uint32_t>(feed.doorbells[examined].written).load(mo::acquire)
          : written;
  if (rung != written && device_atomic_ref<std::uint32_t>(feed.published[examined])
                             .compare_exchange_strong(written, rung, mo::acq_rel)) {
    box.publish_queue = examined;
    box.publish_n = system_atomic_ref<std::uint32_t>(feed.doorbells[examined].n).load(mo::relaxed);
    box.publish_written = rung;
    return true;
  }
  if (examined == 0 && system_atomic_ref<std::uint32_t>(*feed.halt).load(mo::acquire) != 0)
    device_atomic_ref<std::uint32_t>(*feed.halt_seen).store(1, mo::release);
  return false;
}

// Thread 0: claims tasks (kRun, or kRunCopied for one task it copied and finished itself), or a
// batch to publish (kPublish), or the end (kHalt, kStop), into box.action.
__device__ __forceinline__ void modern_next_action(const TaskQueueRef& queues,
                                                   const ModernFeedRef& feed,
                                                   const BlockContext& ctx, ModernMailbox& box,
                                                   Task* tasks, ModernBlockState& b) {
  bool idle = false;
  unsigned backoff = 32;
  for (;;) {
    const std::uint32_t examined = b.cursor;
    const ModernClaim m = modern_claim(
        queues, b.cursor,
        b.long_tasks ? 1u : fair_claim(queues, b.optimistic ? b.last_left : 0, feed.claim),
        b.optimistic);
    b.optimistic = m.claim.got && b.cursor == examined;
    if (m.claim.got) {
      b.last_left = m.claim.remaining;
      box.claim = m;
      box.action = kRun;
      if (m.claim.count == 1) {  // copied and finished here: every warp starts it together
        thread_copy_one_task(tasks, queues, m);
        modern_finish(queues, b.cursor, m);
        b.optimistic = b.optimistic && b.cursor == m.claim.queue;
        box.action = kRunCopied;
      }
      return;
    }
    if (modern_doorbell_rung(queues, feed, examined, box)) {
      box.action = kPublish;
      return;
    }
    if (b.failed != 0xFFFFFFFFu) ++b.failed;
    if (!idle) ctx.record(trace::EventKind::DequeueFailed, 0, static_cast<std::uint16_t>(examined));
    idle = true;
    if (device_atomic_ref<std::uint32_t>(*feed.halt_seen).load(mo::acquire) != 0) {
      box.action = kHalt;
      return;
    }
    if (ctx.stop_requested()) {
      box.action = kStop;
      return;
    }
    __nanosleep(backoff);
    backoff = backoff < 1024 ? backoff * 2 : backoff;
  }
}

// Every thread: the rung batch from the staging area into its queue; thread 0 then publishes it.
__device__ __forceinline__ void modern_publish(const TaskQueueRef& queues,
                                               const ModernFeedRef& feed, const BlockContext& ctx,
                                               const ModernMailbox& box) {
  const std::uint32_t qi = box.publish_queue, n = box.publish_n;
  block_copy_tasks<true>(queues.tasks + static_cast<std::size_t>(qi) * queues.capacity,
                         feed.staging + static_cast<std::size_t>(qi) * queues.capacity, n);
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // the copied slots are visible device-wide before the counters say so
    TaskQueueCounters& q = queues.counters[qi];
    device_atomic_ref<std::uint32_t>(q.written.value).store(box.publish_written, mo::release);
    device_atomic_ref<std::int32_t>(q.n.value).store(static_cast<std::int32_t>(n), mo::release);
  }
  ctx.record(trace::EventKind::QueueLevel, n, static_cast<std::uint16_t>(qi));
  __syncthreads();
}

// Every thread: the claimed tasks (copied here where thread 0 has not), then run one after the
// other on the whole block. Returns how many.
template <class Body>
__device__ __forceinline__ std::uint32_t modern_run_claim(const TaskQueueRef& queues,
                                                          const BlockContext& ctx, const Body& body,
                                                          ModernMailbox& box, Task* tasks,
                                                          int action, ModernBlockState& b) {
  const TaskQueueRef::Claim c = box.claim.claim;
  if (action == kRun) {  // a claim of several: every thread copies, then thread 0 finishes it
    const Task* batch = queues.tasks + static_cast<std::size_t>(c.queue) * queues.capacity;
    if (box.claim.range != 0)
      block_expand_range(tasks, batch, c.first, c.count);
    else
      block_copy_tasks<false>(tasks, batch + c.first, c.count);
    __syncthreads();
    if (threadIdx.x == 0) {
      modern_finish(queues, b.cursor, box.claim);
      // the batch is done: look before the next claim
      b.optimistic = b.optimistic && b.cursor == c.queue;
    }
  }
  if (threadIdx.x == 0)
    ctx.record(trace::EventKind::QueueLevel, static_cast<std::uint32_t>(c.remaining),
               static_cast<std::uint16_t>(c.queue));
  const std::uint64_t started = threadIdx.x == 0 ? globaltimer() : 0;
  for (std::uint32_t k = 0; k < c.count; ++k) {
    const Task mine = tasks[k];
    run_one(ctx, body, mine);
  }
  if (threadIdx.x == 0) {
    b.saw_long = b.saw_long || globaltimer() - started > kLongTaskNs * c.count;
    if (b.ran < kShortEvidence) b.ran += c.count;  // only `ran < kShortEvidence` is ever read
    b.long_tasks = b.saw_long || b.ran < kShortEvidence;
  }
  return c.count;
}

template <class Body>
__device__ __forceinline__ void task_queue_modern_worker(TaskQueueRef queues, ModernFeedRef feed,
                                                         Body body, DeviceTraceRef trace,
                                                         const std::uint32_t* stop,
                                                         std::uint32_t* tasks_done) {
  __shared__ ModernMailbox box;
  Task* tasks = reinterpret_cast<Task*>(box.task_bytes);
  const BlockContext ctx(blockIdx.x, trace.segment(blockIdx.x), stop, &box.scratch);
  ctx.record(trace::EventKind::WorkerStart, blockIdx.x, static_cast<std::uint16_t>(smid()));
  ModernBlockState b{blockIdx.x % queues.num_queues};
  std::uint32_t done = 0;
  for (;;) {
    if (threadIdx.x == 0) modern_next_action(queues, feed, ctx, box, tasks, b);
    __syncthreads();
    const int action = box.action;
    if (action == kHalt) ctx.record(trace::EventKind::Halt);
    if (action == kHalt || action == kStop) break;
    if (action == kPublish) {
      modern_publish(queues, feed, ctx, box);
      continue;
    }
    done += modern_run_claim(queues, ctx, body, box, tasks, action, b);
    __syncthreads();
  }
  ctx.record(trace::EventKind::WorkerEnd, b.failed);
  if (threadIdx.x == 0) tasks_done[blockIdx.x] = done;
}

// The kernel, without and with the body's register cap (RegisterCapped, worker_kernels.cuh).
template <class Body>
requires(!RegisterCapped<Body>) __global__
    void task_queue_modern_kernel(TaskQueueRef queues, ModernFeedRef feed, Body body,
                                  DeviceTraceRef trace, const std::uint32_t* stop,
                                  std::uint32_t* tasks_done) {
  task_queue_modern_worker(queues, feed, body, trace, stop, tasks_done);
}
template <class Body>
requires RegisterCapped<Body> __global__ void __maxnreg__(Body::kRegisterCap)
    task_queue_modern_kernel(TaskQueueRef queues, ModernFeedRef feed, Body body,
                             DeviceTraceRef trace, const std::uint32_t* stop,
                             std::uint32_t* tasks_done) {
  task_queue_modern_worker(queues, feed, body, trace, stop, tasks_done);
}

}  // namespace gpulb::kernels
