// A bounded multi-producer multi-consumer task queue: Dmitry Vyukov's bounded MPMC queue (2010,
// "Bounded MPMC queue", 1024cores.net), a ring of slots each with a sequence word.
//
// gpulb uses it twice in the work-stealing policy (work_stealing.hpp):
//   - the work-sharing queue of Grossman's runtime, which receives the host's tasks while the
//     workers run (insert_task from the host) and every worker reads;
//   - the overflow queue that a full ABP deque spills into (workers write and read).
// Why this algorithm: a claim is one CAS on a 64-bit position that never wraps, so no ABA; a
// consumer never reads a slot the producer is writing (the slot's sequence says whose turn it
// is), so the task copies need no atomics; and unlike a fetch-and-add claim (Chen et al.), a
// failed attempt leaves no trace in the indices, so the host may keep appending while workers poll.
//
// Per slot i, seq cycles: i (free for the producer at position i) -> i + 1 (holds the task of
// position i) -> i + capacity (free for position i + capacity) ...
// Capacity at least 2: with one slot, "holds the task of position i" (seq i + 1) reads as "free for
// position i + 1", and a push overwrites an unread task (Vyukov's queue assumes two or more slots).
// Both owners (HostSharingQueue, the CUDA backend's DeviceSharingQueue) refuse fewer, and the
// options that size the queues start at 2.
// Memory orders (device scope: on the GPU both queues live in device memory and only blocks touch
// them; see work_stealing.hpp for how the host's tasks reach the sharing queue there):
//   - seq loads are acquire, seq stores release: they hand each slot's task between producer and
//     consumer;
//   - the CAS on enqueue_pos / dequeue_pos is acq_rel: positions are claimed once; acq_rel (not
//     relaxed as in Vyukov's original) because the work-stealing termination test reads
//     dequeue_pos to learn that every host task was claimed, and must then see what the claimer
//     did before its claim (work_stealing.hpp).
// On the CPU backend device scope is std::atomic_ref, and the host thread pushes into the sharing
// queue directly.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

#if !defined(__CUDA_ARCH__)
#include <stdexcept>
#include <string>
#endif

namespace gpulb {

struct SharingQueueControl {
  alignas(kHotLine) std::uint64_t enqueue_pos = 0;
  alignas(kHotLine) std::uint64_t dequeue_pos = 0;
  alignas(kHotLine) std::uint64_t peak = 0;  // highest occupancy a producer saw (atomic max)
};

struct SharingQueueRef {
  SharingQueueControl* ctl = nullptr;
  std::uint64_t* seq = nullptr;  // capacity words; seq[i] starts at i
  Task* tasks = nullptr;         // capacity slots
  std::uint32_t capacity = 0;

  // Appends up to n tasks (one slot claim each); returns how many were appended (fewer when full).
  GPULB_HD std::uint32_t try_push(const Task* in, std::uint32_t n) const {
    device_atomic_ref<std::uint64_t> enq(ctl->enqueue_pos);
    std::uint32_t done = 0;
    std::uint64_t pos = enq.load(mo::relaxed);
    while (done < n) {
      const std::uint32_t i = static_cast<std::uint32_t>(pos % capacity);
      const std::uint64_t s = device_atomic_ref<std::uint64_t>(seq[i]).load(mo::acquire);
      const std::int64_t diff = static_cast<std::int64_t>(s - pos);
      if (diff == 0) {
        if (enq.compare_exchange_weak(pos, pos + 1, mo::acq_rel, mo::relaxed)) {
          tasks[i] = in[done];
          // release: the consumer that acquires seq == pos + 1 reads the task written above.
          device_atomic_ref<std::uint64_t>(seq[i]).store(pos + 1, mo::release);
          ++done;
          note_level(pos + 1);
          pos = enq.load(mo::relaxed);
        }
        // CAS failure reloaded pos: retry.
      } else if (diff < 0) {
        break;  // the slot still holds the task of position pos - capacity: full
      } else {
        pos = enq.load(mo::relaxed);  // another producer took pos
      }
    }
    return done;
  }

  // Takes one task; false when the queue is empty. The loop retries only when another consumer
  // claimed the position first (someone made progress), so with two slots or more it cannot spin
  // forever; with one slot it could (a push overwrote an unread task and the sequence words never
  // met the position again: the hang), which is why one slot is refused.
  GPULB_HD bool try_pop(Task& out) const {
    device_atomic_ref<std::uint64_t> deq(ctl->dequeue_pos);
    std::uint64_t pos = deq.load(mo::acquire);
    for (;;) {
      const std::uint32_t i = static_cast<std::uint32_t>(pos % capacity);
      const std::uint64_t s = device_atomic_ref<std::uint64_t>(seq[i]).load(mo::acquire);
      const std::int64_t diff = static_cast<std::int64_t>(s - (pos + 1));
      if (diff == 0) {
        if (deq.compare_exchange_weak(pos, pos + 1, mo::acq_rel, mo::acquire)) {
          out = tasks[i];
          // release: the producer that acquires this seq may overwrite the slot we just read.
          device_atomic_ref<std::uint64_t>(seq[i]).store(pos + capacity, mo::release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // position pos not written yet: empty
      } else {
        pos = deq.load(mo::acquire);  // another consumer took pos
      }
    }
  }

  // True when the queue certainly holds no unclaimed task at this instant (the next position to
  // claim has not been written). Used by idle workers before an RMW, and by the termination test.
  GPULB_HD bool empty() const {
    const std::uint64_t pos = device_atomic_ref<std::uint64_t>(ctl->dequeue_pos).load(mo::acquire);
    const std::uint64_t s = device_atomic_ref<std::uint64_t>(seq[pos % capacity]).load(mo::acquire);
    return static_cast<std::int64_t>(s - (pos + 1)) < 0;
  }

  // Tasks written and not yet claimed (approximate under concurrency): the trace's queue level.
  GPULB_HD std::uint32_t size_hint() const {
    const std::uint64_t e = device_atomic_ref<std::uint64_t>(ctl->enqueue_pos).load(mo::relaxed);
    const std::uint64_t d = device_atomic_ref<std::uint64_t>(ctl->dequeue_pos).load(mo::relaxed);
    return e > d ? static_cast<std::uint32_t>(e - d) : 0;
  }

 private:
  // Relaxed atomic max of the occupancy after a push: statistics only (task memory per policy).
  GPULB_HD void note_level(std::uint64_t enq_after) const {
    const std::uint64_t d = device_atomic_ref<std::uint64_t>(ctl->dequeue_pos).load(mo::relaxed);
    const std::uint64_t level = enq_after > d ? enq_after - d : 0;
    device_atomic_ref<std::uint64_t> peak(ctl->peak);
    std::uint64_t p = peak.load(mo::relaxed);
    while (level > p && !peak.compare_exchange_weak(p, level, mo::relaxed, mo::relaxed)) {}
  }
};

// Host memory for one queue (the CPU backend; the CUDA backend keeps both queues in device memory).
class HostSharingQueue {
 public:
  explicit HostSharingQueue(std::uint32_t capacity)
      : capacity_(checked_capacity(capacity)),
        ctl_(new SharingQueueControl),
        seq_(new std::uint64_t[capacity]) {
    for (std::uint32_t i = 0; i < capacity; ++i) seq_[i] = i;
    tasks_ = static_cast<Task*>(
        std::aligned_alloc(64, static_cast<std::size_t>(capacity) * sizeof(Task)));
    if (!tasks_) throw std::bad_alloc();
  }
  ~HostSharingQueue() {
    std::free(tasks_);
    delete[] seq_;
    delete ctl_;
  }
  HostSharingQueue(const HostSharingQueue&) = delete;
  HostSharingQueue& operator=(const HostSharingQueue&) = delete;

  SharingQueueRef ref() const { return {ctl_, seq_, tasks_, capacity_}; }
  std::uint64_t peak() const { return ctl_->peak; }
  std::uint64_t pushed() const { return ctl_->enqueue_pos; }

  // Vyukov's queue needs two slots at least (see the top of this file).
  static std::uint32_t checked_capacity(std::uint32_t capacity) {
    if (capacity < 2) {
      throw std::invalid_argument("a sharing queue needs at least 2 slots (asked for " +
                                  std::to_string(capacity) + ")");
    }
    return capacity;
  }

 private:
  std::uint32_t capacity_;
  SharingQueueControl* ctl_;
  std::uint64_t* seq_;
  Task* tasks_ = nullptr;
};

}  // namespace gpulb
