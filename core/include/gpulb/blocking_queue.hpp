// The blocking dynamic queue: one global task queue guarded by a CAS spin lock, Cederman &
// Tsigas's blocking baseline as given in pseudocode by Mohan & Gopalan (IJISA 2014, section 2.1):
//   DEQUEUE: while atomicCAS(&q.lock, 0, 1) == 1 spin; if beg != end take data[beg++] else NIL;
//            q.lock <- 0
//   ENQUEUE: the same lock around end++ / data[end] <- task.
// Departures: a ring of `capacity` slots instead of an ever-growing array (beg and end count
// tasks and never wrap; the slot is index % capacity; a full ring fails the enqueue so that the run
// reports the capacity to raise), and a block enqueues all its children under one acquisition.
// DEPARTURE (found on an H100): DEQUEUE first peeks at beg and end without the lock and takes the
// lock only when the queue looks non-empty. As in the pseudocode (lock first), every idle block
// took the lock on every look; on an H100 and an H200 the ~260 idle blocks of a persistent grid
// then kept it so busy that the few blocks waiting to ENQUEUE their children lost the CAS race for
// seconds (CAS spin locks promise no fairness), and the watchdog stopped the run with "pending 3,
// queued 0". A stale peek costs only a retry: termination is decided by `pending`, not by it.
//
// Independent thread scheduling (Volta and later): a lock that several threads of one warp spin
// on can starve the holder on older GPUs and is fragile on newer ones; here only one thread per
// worker block ever calls lock() (thread 0, via ctx.once / the worker loop), so no two threads of
// a warp contend, and the holder never waits for anything while holding it.
// Memory orders: the successful CAS is acquire (what the previous holder wrote under the lock is
// visible), unlock is a release store; the data and indices under the lock are plain accesses.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

struct BlockingQueueControl {
  alignas(kHotLine) std::uint32_t lock = 0;
  std::uint64_t beg = 0;   // tasks taken so far (written under the lock; peeked without it)
  std::uint64_t end = 0;   // tasks put so far (written under the lock; peeked without it)
  std::uint64_t peak = 0;  // highest end - beg (under the lock)
  alignas(kHotLine) std::int64_t pending = 0;  // tasks queued or running: 0 ends the run
};

struct BlockingQueueRef {
  BlockingQueueControl* ctl = nullptr;
  Task* data = nullptr;
  std::uint32_t capacity = 0;

  GPULB_HD void lock() const {
    device_atomic_ref<std::uint32_t> l(ctl->lock);
    for (;;) {
      std::uint32_t expected = 0;
      // acquire on success: we see the previous holder's writes. relaxed on failure: spin.
      if (l.compare_exchange_weak(expected, 1, mo::acquire, mo::relaxed)) return;
      while (l.load(mo::relaxed) != 0) {
        // test-and-test-and-set: spin on a load, not on RMWs, while the lock is held.
      }
    }
  }
  GPULB_HD void unlock() const {
    device_atomic_ref<std::uint32_t>(ctl->lock).store(0, mo::release);
  }

  // DEQUEUE. `level` receives the tasks left after it (the trace's queue level).
  GPULB_HD bool try_dequeue(Task& out, std::uint32_t& level) const {
    if (looks_empty()) {  // the DEPARTURE above: no lock for a look at an empty queue
      level = 0;
      return false;
    }
    lock();
    const std::uint64_t beg = ctl->beg, end = ctl->end;
    const bool got = beg != end;
    if (got) {
      out = data[beg % capacity];
      set(ctl->beg, beg + 1);
    }
    level = static_cast<std::uint32_t>(end - beg - (got ? 1 : 0));
    unlock();
    return got;
  }

  // ENQUEUE of a batch under one acquisition; false (nothing enqueued) when it does not fit.
  GPULB_HD bool enqueue(const Task* tasks, std::uint32_t n, std::uint32_t& level) const {
    lock();
    const std::uint64_t beg = ctl->beg, end = ctl->end;
    const bool fits = end - beg + n <= capacity;
    if (fits) {
      for (std::uint32_t i = 0; i < n; ++i) data[(end + i) % capacity] = tasks[i];
      set(ctl->end, end + n);
      if (end + n - beg > ctl->peak) ctl->peak = end + n - beg;
    }
    level = static_cast<std::uint32_t>(end - beg + (fits ? n : 0));
    unlock();
    return fits;
  }

  // The lock-free look: relaxed loads of the two indices (written under the lock with relaxed
  // stores, so that the look is not a data race). It may be stale; the caller retries.
  GPULB_HD bool looks_empty() const {
    return device_atomic_ref<std::uint64_t>(ctl->end).load(mo::relaxed) ==
           device_atomic_ref<std::uint64_t>(ctl->beg).load(mo::relaxed);
  }

  // Termination: `pending` counts queued and running tasks. A task with k children adds k - 1
  // before enqueueing them (its own unit passes to a child), one with none subtracts 1 when done;
  // acq_rel on every RMW, acquire on the test, as in work_stealing.hpp.
  GPULB_HD void add_pending(std::int64_t d) const {
    if (d != 0) device_atomic_ref<std::int64_t>(ctl->pending).fetch_add(d, mo::acq_rel);
  }
  GPULB_HD bool terminated() const {
    return device_atomic_ref<std::int64_t>(ctl->pending).load(mo::acquire) == 0;
  }

 private:
  // A store under the lock to an index that looks_empty() reads without it.
  GPULB_HD static void set(std::uint64_t& index, std::uint64_t value) {
    device_atomic_ref<std::uint64_t>(index).store(value, mo::relaxed);
  }
};

// Host memory for the queue (the CPU backend).
class HostBlockingQueue {
 public:
  explicit HostBlockingQueue(std::uint32_t capacity)
      : capacity_(capacity), ctl_(new BlockingQueueControl) {
    data_ = allocate(capacity);
  }
  ~HostBlockingQueue() {
    std::free(data_);
    delete ctl_;
  }
  HostBlockingQueue(const HostBlockingQueue&) = delete;
  HostBlockingQueue& operator=(const HostBlockingQueue&) = delete;

  BlockingQueueRef ref() const { return {ctl_, data_, capacity_}; }
  std::uint64_t peak() const { return ctl_->peak; }
  std::uint32_t capacity() const { return capacity_; }

  // The CPU backend's growth of a full queue: with the lock held, moves the queued tasks into an
  // array of `slots` (more than are queued) and points `shared` at it. `shared` must be the one
  // ref every worker uses: they read its array and capacity only under the lock, whose release
  // publishes the change. The kernels cannot do this (their grid holds copies of the ref).
  void grow_locked(BlockingQueueRef& shared, std::uint32_t slots) {
    Task* bigger = allocate(slots);
    const std::uint64_t beg = ctl_->beg, end = ctl_->end;
    for (std::uint64_t i = beg; i != end; ++i) bigger[i % slots] = data_[i % capacity_];
    std::free(data_);
    data_ = bigger;
    capacity_ = slots;
    shared.data = data_;
    shared.capacity = capacity_;
  }

 private:
  static Task* allocate(std::uint32_t slots) {
    const std::size_t bytes = slots == 0 ? 64
                                         : (std::size_t{slots} * sizeof(Task) + 63) / 64 *
                                               64;  // aligned_alloc: a multiple of 64
    auto* p = static_cast<Task*>(std::aligned_alloc(64, bytes));
    if (!p) throw std::bad_alloc();
    return p;
  }

  std::uint32_t capacity_;
  BlockingQueueControl* ctl_;
  Task* data_ = nullptr;
};

}  // namespace gpulb
