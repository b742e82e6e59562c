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
// Termination (not a count of failed steals; Grossman's criticism of Lastras-Montano et al.):
// the run is over when
//     host_done  (the host has inserted its last task; release store, acquire load)
//  && the sharing queue is empty (every host task was claimed)
//  && pending == 0 (no claimed or spawned task is unfinished).
// `pending` lives in device memory and only workers touch it:
//   - a worker adds 1 *before* it tries to claim from the sharing queue (and takes it back if the
//     claim fails), so a claimed host task is counted before the queue can look empty;
//   - a task that spawns k children adds k - 1 before the children are published (its own unit
//     passes to a child; k = 0: subtract 1 after the task): pending never reaches 0 while a
//     published task is unfinished;
//   - every RMW is acq_rel, so the worker that reads pending == 0 (acquire) also sees every
//     finished task's writes (the chain of RMWs on one word carries them).
// The test reads host_done, then the queue, then pending, in that order, each an acquire: seeing
// the queue empty means every claim happened before, and each claimer's increment was sequenced
// before its claim, so it is visible to the pending load. Once true, it stays true (nothing can
// add work: the host is done, the queue is empty, and no task runs to spawn).
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/sharing_queue.hpp"
#include "gpulb/spawn.hpp"
#include "gpulb/task.hpp"
#include "gpulb/work_stealing_deque.hpp"

namespace gpulb {

enum class VictimChoice : std::uint8_t { Random, RoundRobin };
enum class TaskSource : std::uint8_t { None, Own, Sharing, Overflow, Stolen };

struct WorkStealingControl {
  alignas(kHotLine) std::int64_t pending = 0;     // claimed or spawned tasks not yet finished
  alignas(kHotLine) std::uint32_t host_done = 0;  // the host inserts no more (system scope)
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
  std::uint32_t victim = 0;        // Stolen / failed steal: whom we tried
  bool steal_failed = false;       // a steal was tried and got nothing
  std::uint32_t deque_level = 0;   // Own: tasks left in our deque
};

// What publish_children did.
struct PublishResult {
  std::uint32_t pushed = 0;    // onto our deque
  std::uint32_t spilled = 0;   // into the overflow queue
  bool failed = false;         // the deque was full and spilling is off, or the overflow queue is full
  std::uint32_t deque_level = 0;
};

struct WorkStealingRef {
  WorkStealingDequesRef deques;
  SharingQueueRef sharing;
  SharingQueueRef overflow;
  WorkStealingControl* ctl = nullptr;
  std::uint32_t workers = 0;
  bool spill = true;  // a full deque spills to `overflow` (else publish fails)

  // One pass of the lookup. Steals once per call (the caller loops, tracing and backing off).
  GPULB_HD FindResult find_task(std::uint32_t self, VictimPicker& picker, Task& out) const {
    FindResult r;
    if (deques.deque(self).pop_bottom(out, r.deque_level)) {
      r.source = TaskSource::Own;
      return r;
    }
    if (!sharing.empty()) {
      device_atomic_ref<std::int64_t> pending(ctl->pending);
      pending.fetch_add(1, mo::acq_rel);  // counted before the claim (see the top)
      if (sharing.try_pop(out)) {
        r.source = TaskSource::Sharing;
        return r;
      }
      pending.fetch_sub(1, mo::acq_rel);
    }
    if (!overflow.empty() && overflow.try_pop(out)) {  // already counted when spawned
      r.source = TaskSource::Overflow;
      return r;
    }
    if (workers > 1) {
      r.victim = picker.next(self, workers);
      if (deques.deque(r.victim).pop_top(out) == StealResult::Got) {
        r.source = TaskSource::Stolen;
        return r;
      }
      r.steal_failed = true;
    }
    return r;
  }

  // After a task's body: count and publish its k children (ids already assigned). Children that
  // do not fit the deque go to the overflow queue when spilling is on.
  GPULB_HD PublishResult publish_children(std::uint32_t self, const Task* kids, std::uint32_t k) const {
    PublishResult r;
    if (k == 0) return r;
    // k - 1 more units: the finishing task's own unit passes to its first child (see the top).
    if (k > 1) device_atomic_ref<std::int64_t>(ctl->pending).fetch_add(k - 1, mo::acq_rel);
    r.pushed = deques.deque(self).push_bottom(kids, k, r.deque_level);
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

  // After a task that spawned nothing.
  GPULB_HD void task_done() const { device_atomic_ref<std::int64_t>(ctl->pending).fetch_sub(1, mo::acq_rel); }

  GPULB_HD bool terminated() const {
    if (system_atomic_ref<std::uint32_t>(ctl->host_done).load(mo::acquire) == 0) return false;
    if (!sharing.empty()) return false;
    return device_atomic_ref<std::int64_t>(ctl->pending).load(mo::acquire) == 0;
  }

  // Host side (Grossman's host insert_task): append to the sharing queue while workers run.
  // Returns how many fit; the caller retries the rest once workers have drained some.
  std::uint32_t host_insert(const Task* tasks, std::uint32_t n) const { return sharing.try_push(tasks, n); }
  // release: every task inserted before is visible to a worker that sees host_done.
  void host_finish() const { system_atomic_ref<std::uint32_t>(ctl->host_done).store(1, mo::release); }
};

// Queue ids in QueueLevel / DequeueFailed events of the work-stealing policy.
inline constexpr std::uint16_t kSharingQueueId = 0;
inline constexpr std::uint16_t kOverflowQueueId = 1;

// The trace event for a task find_task found, the same on both backends. Returns true for a
// steal, which the caller counts.
template <class Ctx>
GPULB_HD bool record_found(const Ctx& ctx, const WorkStealingRef& ws, const FindResult& f, std::uint16_t owner) {
  switch (f.source) {
    case TaskSource::Own: ctx.record(trace::EventKind::DequeLevel, f.deque_level, owner); break;
    case TaskSource::Stolen: ctx.record(trace::EventKind::Steal, f.victim); return true;
    case TaskSource::Sharing: ctx.record(trace::EventKind::QueueLevel, ws.sharing.size_hint(), kSharingQueueId); break;
    case TaskSource::Overflow: ctx.record(trace::EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId); break;
    case TaskSource::None: break;
  }
  return false;
}

}  // namespace gpulb
