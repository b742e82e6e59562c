// The work-stealing policy's shared state and scheduling steps: Grossman, "Dynamic Task
// Parallelism with a GPU Work-Stealing Runtime System" (persistent worker blocks, a private deque
// each, a global work-sharing queue that the host writes while the kernel runs, device-side task
// creation), with the deques of Arora, Blumofe & Plaxton as Mohan & Gopalan describe them.
//
// One source for both backends. A worker (thread 0 of a block on the GPU, a thread on the CPU):
//   loop: find_task -> run the body -> publish_children (its spawns) -> task_done
//         until terminated().
// Grossman's lookup order: own deque (LIFO, bottom) -> the sharing queue (host work) -> steal.
// gpulb adds the overflow queue between them: a deque that is full spills there (the run never
// drops a task), and anyone may take from it.
//
// How the host's tasks reach the sharing queue: through accept_host_tasks(), which counts them in
// `pending` before it pushes them and then advances `fed`. The CPU backend's host thread calls it
// itself. On the GPU the host cannot take part in device-memory atomics (and PCIe atomics on
// mapped memory are not universally supported), so it writes a staging ring in mapped memory and a
// block that finds nothing else moves the tasks from there (kernels/work_stealing_kernels.cuh).
//
// Termination (not a count of failed steals; Grossman's criticism of Lastras-Montano et al.):
// the run is over when
//     host_end != 0        (the host has inserted its last task: host_end = 1 + tasks inserted)
//  && fed == host_end - 1  (every one of them is in the sharing queue, so counted in pending)
//  && pending == 0         (no counted task is queued, in a deque, or unfinished).
// `pending` only ever counts up before the work it counts becomes visible:
//   - accept_host_tasks adds n before it pushes n host tasks (and takes back what did not fit),
//     and advances `fed` (release) after that;
//   - a task that spawns k children adds k - 1 before the children are published (its own unit
//     passes to a child; k = 0: subtract 1 after the task): pending never reaches 0 while a
//     published task is unfinished;
//   - every RMW is acq_rel, so the worker that reads pending == 0 (acquire) also sees every
//     finished task's writes (the chain of RMWs on one word carries them).
// Each worker keeps its own unflushed share of `pending` (PendingCredit), never above zero: a
// finished leaf only lowers the credit, and children are counted on the shared word only when the
// credit cannot absorb them; a worker that finds nothing flushes its credit before it tests for
// termination. So pending >= the tasks outstanding at every instant (it reaches 0 only when they
// do), and the hot shared counter sees a fraction of the tasks. (An optimisation of gpulb's; on
// an H100 it took one acq_rel RMW on one address per task out of UTS's inner loop.)
// The test reads host_end, then fed, then pending, in that order, each an acquire. Once true, it
// stays true (nothing can add work: the host is done, every host task was counted and finished,
// and no task runs to spawn).
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/policy_choices.hpp"
#include "gpulb/sharing_queue.hpp"
#include "gpulb/spawn.hpp"
#include "gpulb/task.hpp"
#include "gpulb/work_stealing_deque.hpp"

namespace gpulb {

enum class TaskSource : std::uint8_t { None, Own, Sharing, Overflow, Stolen };

struct WorkStealingControl {
  alignas(kHotLine) std::int64_t pending = 0;    // host or spawned tasks not yet finished
  alignas(kHotLine) std::uint64_t fed = 0;       // host tasks pushed into the sharing queue
  alignas(kHotLine) std::uint64_t host_end = 0;  // 0 while the host inserts; then 1 + its total
};

// A worker's private victim chooser (xorshift32 for random; a cursor for round robin).
struct VictimPicker {
  VictimChoice choice = VictimChoice::Random;
  std::uint32_t state = 1;
  std::uint32_t cursor = 0;

  GPULB_HD static VictimPicker make(VictimChoice c, std::uint32_t rank) {
    VictimPicker p;
    p.choice = c;
    p.state = 0x9E3779B9u ^ (rank * 0x85EBCA6Bu) ^ 0x27d4eb2fu;
    if (p.state == 0) p.state = 1;
    p.cursor = rank;
    return p;
  }
  // A worker other than `self` (workers >= 2).
  GPULB_HD std::uint32_t next(std::uint32_t self, std::uint32_t workers) {
    if (choice == VictimChoice::RoundRobin) {
      cursor = cursor + 1 >= workers ? 0 : cursor + 1;
      if (cursor == self) cursor = cursor + 1 >= workers ? 0 : cursor + 1;
      return cursor;
    }
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const std::uint32_t v = state % (workers - 1);
    return v >= self ? v + 1 : v;
  }
};

// What one find_task call did, for the trace.
struct FindResult {
  TaskSource source = TaskSource::None;
  std::uint32_t victim = 0;       // Stolen / failed steal: whom we tried
  bool steal_failed = false;      // a steal was tried and got nothing
  std::uint32_t deque_level = 0;  // Own: tasks left in our deque
};

// A worker's unflushed change to `pending` (see the top): <= 0 between calls.
// No initializer, so that a GPU block can keep it in shared memory: start it at {}.
struct PendingCredit {
  std::int64_t units;
};

// What publish_children did.
struct PublishResult {
  std::uint32_t pushed = 0;   // onto our deque
  std::uint32_t spilled = 0;  // into the overflow queue
  bool failed = false;  // the deque was full and spilling is off, or the overflow queue is full
  std::uint32_t deque_level = 0;
};

// S: the scope of the deques (see BasicWorkStealingDequeRef); C: the scope of the control words.
// Device, Device: one GPU, or the CPU backend (WorkStealingRef). In a run across GPUs (kernels/
// work_stealing_multi_gpu.cuh) `deques` are this GPU's and `ctl` is the run's one control word set
// in GPU 0's memory (C = System). With remote=steal blocks of other GPUs steal from these deques in
// batches (S = System): the owners then pop with the chunked pair (pop_bottom_chunked, `chunk`)
// and the local thieves take one task with pop_top_chunk. With remote=request only this GPU's
// blocks touch them (S = Device, ABP as on one GPU). The sharing and overflow queues stay this
// GPU's own (device scope).
template <Scope S, Scope C = S>
struct BasicWorkStealingRef {
  template <class T>
  using atomic_ref = scoped_atomic_ref<C, T>;  // the control words

  WorkStealingDequesRef deques;
  SharingQueueRef sharing;
  SharingQueueRef overflow;
  WorkStealingControl* ctl = nullptr;
  std::uint32_t workers = 0;
  bool spill = true;  // a full deque spills to `overflow` (else publish fails)
  // S == System only: the most tasks a thief from another GPU takes at once (the owners' chunk).
  std::uint32_t chunk = 1;
  // Units a worker takes ahead on `pending` when it must count children on the shared word
  // (count_children): it then absorbs the next `lease` children in its credit. 0 on one GPU; in a
  // run across GPUs (control words at system scope, in GPU 0's memory) it keeps the remote RMWs on
  // that word rare. Correct for any value: the credit stays <= 0, so pending >= the tasks
  // outstanding (see the top). A constant, not a member: the one-GPU kernel keeps its registers.
  static constexpr std::int64_t lease = C == Scope::System ? 64 : 0;

  GPULB_HD BasicWorkStealingDequeRef<S> own(std::uint32_t self) const {
    return deques.template at<S>(self);
  }

  // One pass of the lookup. Steals once per call (the caller loops, tracing and backing off).
  GPULB_HD FindResult find_task(std::uint32_t self, VictimPicker& picker, Task& out) const {
    FindResult r;
    bool got = false;
    if constexpr (S == Scope::System)
      got = own(self).pop_bottom_chunked(out, r.deque_level, chunk);
    else
      got = own(self).pop_bottom(out, r.deque_level);
    if (got) {
      r.source = TaskSource::Own;
      return r;
    }
    if (!sharing.empty() && sharing.try_pop(out)) {  // counted when it was accepted
      r.source = TaskSource::Sharing;
      return r;
    }
    if (!overflow.empty() && overflow.try_pop(out)) {  // already counted when spawned
      r.source = TaskSource::Overflow;
      return r;
    }
    if (workers > 1) {
      r.victim = picker.next(self, workers);
      bool stolen = false;
      if constexpr (S == Scope::System) {
        StealResult res = StealResult::Empty;
        stolen = deques.template at<S>(r.victim).pop_top_chunk(&out, 1, res) == 1;
      } else {
        stolen = deques.deque(r.victim).pop_top(out) == StealResult::Got;
      }
      if (stolen) {
        r.source = TaskSource::Stolen;
        return r;
      }
      r.steal_failed = true;
    }
    return r;
  }

  // After a task's body: count and publish its k children (ids already assigned). Children that
  // do not fit the deque go to the overflow queue when spilling is on.
  GPULB_HD PublishResult publish_children(std::uint32_t self, const Task* kids, std::uint32_t k,
                                          PendingCredit& credit) const {
    PublishResult r;
    if (k == 0) return r;
    count_children(k, credit);
    r.pushed = own(self).push_bottom(kids, k, r.deque_level);
    std::uint32_t rest = k - r.pushed;
    if (rest == 0) return r;
    if (!spill) {
      r.failed = true;
      return r;
    }
    r.spilled = overflow.try_push(kids + r.pushed, rest);
    r.failed = r.spilled < rest;
    return r;
  }

  // k > 0 children of a finishing task: k - 1 more units (its own unit passes to its first child,
  // see the top), counted before any child is visible, on the shared word unless the credit
  // absorbs them. publish_children calls it; the CPU driver, which keeps the youngest children
  // private for a while (cpu/policies/work_stealing.hpp), calls it before it stores them.
  GPULB_HD void count_children(std::uint32_t k, PendingCredit& credit) const {
    count_batch(k, 1, credit);
  }

  // count_children for `finished` tasks that end together with `k` children between them (a
  // batch of tasks run a thread each: kernels/work_stealing_lanes.cuh): k - finished more units,
  // counted as above before any child is visible; fewer children than tasks only lower the credit.
  GPULB_HD void count_batch(std::uint32_t k, std::uint32_t finished, PendingCredit& credit) const {
    const std::int64_t need = static_cast<std::int64_t>(k) - static_cast<std::int64_t>(finished);
    if (credit.units + need > 0) {
      atomic_ref<std::int64_t>(ctl->pending).fetch_add(credit.units + need + lease, mo::acq_rel);
      credit.units = -lease;
    } else {
      credit.units += need;
    }
  }

  // After a task that spawned nothing: its unit leaves the worker's credit.
  GPULB_HD void task_done(PendingCredit& credit) const { --credit.units; }
  // Before a worker that found nothing tests terminated(): its credit goes to the shared word
  // (acq_rel: the writes of the tasks it finished travel with it to whoever reads pending == 0).
  GPULB_HD void flush_pending(PendingCredit& credit) const {
    if (credit.units == 0) return;
    atomic_ref<std::int64_t>(ctl->pending).fetch_add(credit.units, mo::acq_rel);
    credit.units = 0;
  }

  // host_end: a system-scope load because on the GPU the host writes it (a copy into device
  // memory while the kernel runs).
  GPULB_HD bool terminated() const {
    return host_drained() && atomic_ref<std::int64_t>(ctl->pending).load(mo::acquire) == 0;
  }
  // The last test of terminated(), for a caller that has seen host_drained() (which stays true).
  GPULB_HD bool no_pending() const {
    return atomic_ref<std::int64_t>(ctl->pending).load(mo::acquire) == 0;
  }
  // Every host task is in the sharing queue (the GPU's feeders stop looking at the host).
  GPULB_HD bool host_drained() const {
    const std::uint64_t end = system_atomic_ref<std::uint64_t>(ctl->host_end).load(mo::acquire);
    return end != 0 && atomic_ref<std::uint64_t>(ctl->fed).load(mo::acquire) == end - 1;
  }

  // Grossman's insert_task, the device-memory half: counts n host tasks, pushes what fits into the
  // sharing queue, and returns how many it pushed. One caller at a time (the host thread on the
  // CPU; the block holding the feed lock on the GPU), which is why `fed` needs no RMW.
  GPULB_HD std::uint32_t accept_host_tasks(const Task* tasks, std::uint32_t n) const {
    if (n == 0) return 0;
    atomic_ref<std::int64_t> pending(ctl->pending);
    pending.fetch_add(n, mo::acq_rel);  // counted before any of them can be taken (see the top)
    const std::uint32_t pushed = sharing.try_push(tasks, n);
    if (pushed < n) pending.fetch_sub(n - pushed, mo::acq_rel);
    atomic_ref<std::uint64_t> fed(ctl->fed);
    fed.store(fed.load(mo::relaxed) + pushed, mo::release);
    return pushed;
  }
  // The host's last word on the CPU backend (the CUDA backend copies host_end into device memory).
  void host_finish() const {
    system_atomic_ref<std::uint64_t>(ctl->host_end)
        .store(atomic_ref<std::uint64_t>(ctl->fed).load(mo::acquire) + 1, mo::release);
  }
};

using WorkStealingRef = BasicWorkStealingRef<Scope::Device>;

// Queue ids in QueueLevel / DequeueFailed events of the work-stealing policy.
inline constexpr std::uint16_t kSharingQueueId = 0;
inline constexpr std::uint16_t kOverflowQueueId = 1;

// The trace event for a task find_task found, the same on both backends (kind None where it
// found none).
template <Scope S, Scope C>
GPULB_HD trace::EventPayload found_event(const BasicWorkStealingRef<S, C>& ws, const FindResult& f,
                                         std::uint16_t owner) {
  switch (f.source) {
    case TaskSource::Own: return {trace::EventKind::DequeLevel, f.deque_level, owner};
    case TaskSource::Stolen: return {trace::EventKind::Steal, f.victim, 0};
    case TaskSource::Sharing:
      return {trace::EventKind::QueueLevel, ws.sharing.size_hint(), kSharingQueueId};
    case TaskSource::Overflow:
      return {trace::EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId};
    case TaskSource::None: break;
  }
  return {};
}

// Records found_event. Returns true for a steal, which the caller counts.
template <class Ctx, Scope S, Scope C>
GPULB_HD bool record_found(const Ctx& ctx, const BasicWorkStealingRef<S, C>& ws,
                           const FindResult& f, std::uint16_t owner) {
  const trace::EventPayload e = found_event(ws, f, owner);
  if (e.kind != trace::EventKind::None) ctx.record(e.kind, e.arg, e.aux);
  return f.source == TaskSource::Stolen;
}

}  // namespace gpulb
