// Work-stealing deques: Arora, Blumofe, Plaxton, "Thread Scheduling for Multiprogrammed
// Multiprocessors" (SPAA 1998), as used on GPUs by Cederman & Tsigas and described by Mohan &
// Gopalan (IJISA 2014, section 2.2): one deque per worker in global memory; the owner pushes and
// pops at the bottom without atomics on the common path; thieves take from the top with a CAS on
// one 64-bit `age` word holding (tag, top). The tag grows every time the owner resets an emptied
// deque to index 0, so a thief that read (tag, top) before the reset cannot succeed after it: no
// ABA even though `top` returns to old values.
//
// One source for both backends: on the GPU thread 0 of a worker block runs these, on the CPU the
// worker thread does. A fixed array (ABP, not a ring): `bottom` only falls when the owner pops,
// and the array restarts at 0 only when the owner finds it empty, so a busy deque that thieves
// drain from the top can reach `capacity` with few live tasks; push_bottom then reports how many
// fit and the caller spills the rest (work_stealing.hpp).
//
// Memory orders (C++ / PTX; device scope on one GPU, system scope across GPUs, see
// BasicWorkStealingDequeRef):
//   - the slot words are relaxed atomics (spawn.hpp detail::TaskWords): a thief may read a slot
//     the owner is rewriting after a reset; its CAS then fails and the copy is discarded;
//   - owner: the store of `bottom` after writing slots is a release (a thief that acquires the
//     new bottom sees the slots);
//   - owner pop / thief steal race for the last task (the Dekker pattern): the owner stores
//     bottom and then loads age, the thief loads age and then bottom; both pairs are seq_cst so
//     that at least one of them sees the other's write (acquire/release alone allows both to miss
//     it and both to take the task). seq_cst on the atomics themselves, not a fence: TSAN models
//     it, and on the GPU it compiles to fence.sc + the access, which is what ABP needs;
//   - the CAS on age is acq_rel / seq_cst: success hands the task to exactly one taker.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#include "gpulb/atomic.hpp"
#include "gpulb/spawn.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

// One deque's control words, each on its own line: the owner writes bottom, thieves CAS age.
struct WsDequeControl {
  alignas(kHotLine) std::uint32_t bottom = 0;  // next free slot; written by the owner only
  std::uint32_t peak = 0;                      // highest level the owner saw (owner-private)
  alignas(kHotLine) std::uint64_t age = 0;     // (tag << 32) | top
};

enum class StealResult : std::uint8_t { Empty, Abort, Got };

GPULB_HD constexpr std::uint64_t ws_make_age(std::uint32_t tag, std::uint32_t top) {
  return (static_cast<std::uint64_t>(tag) << 32) | top;
}
GPULB_HD constexpr std::uint32_t ws_age_top(std::uint64_t age) {
  return static_cast<std::uint32_t>(age);
}
GPULB_HD constexpr std::uint32_t ws_age_tag(std::uint64_t age) {
  return static_cast<std::uint32_t>(age >> 32);
}

// What pop_bottom_batch claimed: k tasks at slots [first, first + k); `level` tasks left in the
// deque; `bottom`, its bottom afterwards (the owner's to remember: its next push writes there).
struct BatchPop {
  std::uint32_t k = 0;
  std::uint32_t first = 0;
  std::uint32_t level = 0;
  std::uint32_t bottom = 0;
};

// A view of one deque (trivially copyable; cuCollections' *_ref pattern). S is the scope of every
// atomic access: Device where one GPU's blocks (or the CPU's threads) share the deque, System in a
// run across GPUs, where a block of another GPU may steal over peer memory -- then the owner, the
// local thieves and the remote ones all use system scope, or their accesses would not be morally
// strong to each other (PTX memory model) and the Dekker pair below would not hold.
template <Scope S>
struct BasicWorkStealingDequeRef {
  template <class T>
  using atomic_ref = scoped_atomic_ref<S, T>;

  WsDequeControl* ctl = nullptr;
  detail::TaskWords* slots = nullptr;  // capacity slots
  std::uint32_t capacity = 0;

#if defined(__CUDA_ARCH__)
  // The batch pop's and the chunk steal's Dekker pair on the device: a relaxed (or acquire)
  // access, one fence.sc at the deque's scope, then the other access -- Chase-Lev's take and
  // steal as Le, Pop, Cohen & Zappa Nardelli prove them for C11 ("Correct and Efficient
  // Work-Stealing for Weak Memory Models", PPoPP 2013). A seq_cst store followed by a seq_cst
  // load compiles to two fence.sc; this is one. The host keeps the seq_cst accesses, which TSAN
  // models (it does not model fences). Both forms order the pair the same way, so a side using
  // one and a side using the other still exclude each other.
  __device__ static void dekker_fence() {
    ::cuda::atomic_thread_fence(
        ::cuda::std::memory_order_seq_cst,
        S == Scope::Device ? ::cuda::thread_scope_device : ::cuda::thread_scope_system);
  }
#endif

  // Owner only. Writes up to `n` tasks at the bottom and publishes them with one release store;
  // returns how many fit (the caller spills or fails with the rest). `level` receives the number
  // of tasks in the deque afterwards (bottom - top as the owner sees it).
  GPULB_HD std::uint32_t push_bottom(const Task* tasks, std::uint32_t n,
                                     std::uint32_t& level) const {
    const std::uint32_t b = atomic_ref<std::uint32_t>(ctl->bottom).load(mo::relaxed);  // own write
    const std::uint32_t room = capacity - b;
    const std::uint32_t k = n < room ? n : room;
    for (std::uint32_t i = 0; i < k; ++i) detail::store_task_relaxed<S>(slots[b + i], tasks[i]);
    // release: a thief that reads the new bottom also reads the slots written above.
    atomic_ref<std::uint32_t>(ctl->bottom).store(b + k, mo::release);
    const std::uint32_t top = ws_age_top(atomic_ref<std::uint64_t>(ctl->age).load(mo::relaxed));
    level = b + k > top ? b + k - top : 0;
    if (level > ctl->peak) ctl->peak = level;
    return k;
  }

  // Owner only: ABP popBottom. Returns false when the deque is empty (and then resets it to 0).
  GPULB_HD bool pop_bottom(Task& out, std::uint32_t& level) const {
    atomic_ref<std::uint32_t> bottom(ctl->bottom);
    atomic_ref<std::uint64_t> age(ctl->age);
    std::uint32_t b = bottom.load(mo::relaxed);
    level = 0;
    if (b == 0) return false;
    --b;
    // seq_cst store then seq_cst load of age: the owner side of the Dekker pair (see the top).
    bottom.store(b, mo::seq_cst);
    out = detail::load_task_relaxed<S>(slots[b]);
    const std::uint64_t old_age = age.load(mo::seq_cst);
    const std::uint32_t top = ws_age_top(old_age);
    if (b > top) {
      level = b - top;
      return true;  // more than one task was there: no thief can reach slot b
    }
    // The deque is empty now (b == top: we race the thieves for the last task; b < top: they
    // took it). Either way it restarts at 0 with a new tag, so a pending thief CAS fails.
    bottom.store(0, mo::relaxed);  // ordered before thieves see it by the age update below
    const std::uint64_t new_age = ws_make_age(ws_age_tag(old_age) + 1, 0);
    if (b == top) {
      std::uint64_t expected = old_age;
      // acq_rel (seq_cst for simplicity of reasoning): winning gives us the last task; the
      // release publishes bottom = 0 together with the new age.
      if (age.compare_exchange_strong(expected, new_age, mo::seq_cst, mo::seq_cst)) return true;
    }
    // A thief won the last task (or had already taken it): install the new age. seq_cst: a
    // later thief that reads this age also reads bottom = 0.
    age.store(new_age, mo::seq_cst);
    return false;
  }

  // Any worker other than the owner: ABP popTop. Abort means another taker won the race; the
  // thief may retry or move on (a failed steal either way).
  GPULB_HD StealResult pop_top(Task& out) const {
    atomic_ref<std::uint64_t> age(ctl->age);
    // seq_cst load of age then seq_cst load of bottom: the thief side of the Dekker pair.
    const std::uint64_t old_age = age.load(mo::seq_cst);
    const std::uint32_t b = atomic_ref<std::uint32_t>(ctl->bottom).load(mo::seq_cst);
    const std::uint32_t top = ws_age_top(old_age);
    if (b <= top) return StealResult::Empty;
    out = detail::load_task_relaxed<S>(slots[top]);  // may be torn if the owner reset meanwhile...
    std::uint64_t expected = old_age;
    // ...in which case the tag changed and this CAS fails. Success (seq_cst, so acquire of the
    // slot's publication and release of our claim) makes the copy ours.
    if (age.compare_exchange_strong(expected, ws_make_age(ws_age_tag(old_age), top + 1),
                                    mo::seq_cst, mo::relaxed)) {
      return StealResult::Got;
    }
    return StealResult::Abort;
  }

  // --- Chunked steals (gpulb's extension; the CPU backend's driver uses these, the CUDA kernels
  // do not yet). A thief takes up to `chunk` tasks from the top with the one CAS on age: half of
  // what it sees, at most `chunk` (the official UTS steals chunks of 20 nodes; one node of a
  // binomial UTS tree is most often a leaf, so single-task steals feed an idle worker one leaf at
  // a time). ABP's owner takes slot b without a CAS when b > top, which is only safe for one-task
  // steals: a thief's `bottom` may be stale, so a k-task steal decided on it can reach slot b.
  // What still holds: a thief that succeeds with the age value the owner read claims
  // [top, top + k) with k <= chunk. So the owner pops without a CAS only while b >= top + chunk;
  // nearer the top it bumps the tag with a CAS (same top), which fails every thief that read the
  // old age, and a thief that reads the new age also reads bottom = b (seq_cst, the Dekker pair)
  // and so takes at most half of [top, b). Both sides must use the chunked pair on a deque (and
  // the same chunk); chunk = 1 is ABP exactly, except for the tag bumps.
  // (The tag is 32 bits: a thief would have to sleep between its age load and its CAS through
  // 2^32 of the owner's near-top pops to see a repeated age.)

  // Owner only: popBottom for a deque whose thieves use pop_top_chunk(chunk).
  GPULB_HD bool pop_bottom_chunked(Task& out, std::uint32_t& level, std::uint32_t chunk) const {
    atomic_ref<std::uint32_t> bottom(ctl->bottom);
    atomic_ref<std::uint64_t> age(ctl->age);
    std::uint32_t b = bottom.load(mo::relaxed);
    level = 0;
    if (b == 0) return false;
    --b;
    bottom.store(b, mo::seq_cst);  // the owner side of the Dekker pair, as in pop_bottom
    out = detail::load_task_relaxed<S>(slots[b]);
    std::uint64_t old_age = age.load(mo::seq_cst);
    for (;;) {
      const std::uint32_t top = ws_age_top(old_age);
      if (b >= top && b - top >= chunk) {
        level = b - top;
        return true;  // no thief holding this age can reach slot b
      }
      const std::uint64_t reset_age = ws_make_age(ws_age_tag(old_age) + 1, 0);
      if (b < top) {  // thieves took slot b: empty, restart at 0 (as in pop_bottom)
        bottom.store(0, mo::relaxed);
        age.store(reset_age, mo::seq_cst);
        return false;
      }
      if (b == top) {  // the last task: ABP's race, won by the CAS that also resets the deque
        bottom.store(0, mo::relaxed);
        std::uint64_t expected = old_age;
        if (age.compare_exchange_strong(expected, reset_age, mo::seq_cst, mo::seq_cst)) return true;
        age.store(reset_age, mo::seq_cst);  // a thief took it (only thieves move top, only past b)
        return false;
      }
      // top < b < top + chunk: fence off thieves that read old_age; on failure one of them moved
      // top, so look again with the age it wrote.
      if (age.compare_exchange_strong(old_age, ws_make_age(ws_age_tag(old_age) + 1, top),
                                      mo::seq_cst, mo::seq_cst)) {
        level = b - top;
        return true;
      }
    }
  }

  // --- Batch pops (gpulb's extension, for workers that run a task a thread: the CUDA backend's
  // task_per=lane, kernels/work_stealing_lanes.cuh). The owner takes up to `max` tasks from the
  // bottom at once, on a deque whose thieves use pop_top_chunk(chunk) (chunk = 1: ABP's one-task
  // steal). The argument of pop_bottom_chunked, for a range: the owner lowers bottom to nb = b - k
  // and then reads age (the Dekker pair); a thief that read the old bottom read an age no later
  // than the owner's, and can only succeed with exactly the owner's, taking [top, top + chunk) at
  // most. So [nb, b) is the owner's without a CAS while nb >= top + chunk. Nearer the top the
  // owner bumps the tag with a CAS (same top): every thief holding the old age then fails, and one
  // that reads the new age also reads bottom = nb, so takes at most half of [top, nb). If thieves
  // had already passed nb, the owner takes what is left, [top, b), and restarts the deque at 0.

  // Owner only; `b` is the deque's bottom (the owner's own last write: bottom_index(), or what its
  // last pop or publish left). Claims up to `max` tasks: slots [first, first + k), oldest first
  // (k = 0: empty; the deque is then reset to 0). The slots stay as they are until the owner's
  // next push, so the caller copies them out before it pushes. On the device the Dekker pair is a
  // relaxed store, one fence.sc and a relaxed load (dekker_fence).
  GPULB_HD BatchPop pop_bottom_batch(std::uint32_t b, std::uint32_t max,
                                     std::uint32_t chunk) const {
    atomic_ref<std::uint32_t> bottom(ctl->bottom);
    atomic_ref<std::uint64_t> age(ctl->age);
    BatchPop r;
    r.bottom = b;
    if (b == 0 || max == 0) return r;
    const std::uint32_t k = max < b ? max : b;
    const std::uint32_t nb = b - k;
    std::uint64_t old_age = 0;
#if defined(__CUDA_ARCH__)
    bottom.store(nb, mo::relaxed);
    dekker_fence();
    old_age = age.load(mo::relaxed);
#else
    bottom.store(nb, mo::seq_cst);  // the owner side of the Dekker pair, as in pop_bottom
    old_age = age.load(mo::seq_cst);
#endif
    r.bottom = nb;
    for (;;) {
      const std::uint32_t top = ws_age_top(old_age);
      if (nb >= top && nb - top >= chunk) {  // no thief holding this age can reach [nb, b)
        r.k = k;
        r.first = nb;
        r.level = nb - top;
        return r;
      }
      if (top >= b) {  // thieves took every task: restart at 0 (as pop_bottom)
        bottom.store(0, mo::relaxed);
        age.store(ws_make_age(ws_age_tag(old_age) + 1, 0), mo::seq_cst);
        r.bottom = 0;
        return r;
      }
      if (nb <= top) {
        // What is left, [top, b), is all ours if no thief moves top first: one CAS both fences
        // off the thieves that read old_age and restarts the deque at 0 (bottom = 0 before it,
        // published by it, as in pop_bottom). On failure a thief moved top: look again.
        bottom.store(0, mo::relaxed);
        r.bottom = 0;
        if (age.compare_exchange_strong(old_age, ws_make_age(ws_age_tag(old_age) + 1, 0),
                                        mo::seq_cst, mo::seq_cst)) {
          r.k = b - top;
          r.first = top;
          return r;
        }
        continue;
      }
      // top < nb < top + chunk: fence off the thieves that read old_age with a tag bump (same top);
      // one that reads the new age also reads bottom = nb. On failure a thief moved top: look again.
      if (age.compare_exchange_strong(old_age, ws_make_age(ws_age_tag(old_age) + 1, top),
                                      mo::seq_cst, mo::seq_cst)) {
        r.k = k;
        r.first = nb;
        r.level = nb - top;
        return r;
      }
    }
  }

  // Owner only: publishes `n` tasks that the owner's threads have written at slots [b, b + n),
  // b being the bottom (detail::store_task_relaxed; the caller checked the room, capacity - b),
  // with one release store, as push_bottom does after its own writes. Returns the level after.
  GPULB_HD std::uint32_t publish_written(std::uint32_t b, std::uint32_t n) const {
    atomic_ref<std::uint32_t>(ctl->bottom).store(b + n, mo::release);
    const std::uint32_t top = ws_age_top(atomic_ref<std::uint64_t>(ctl->age).load(mo::relaxed));
    const std::uint32_t level = b + n > top ? b + n - top : 0;
    if (level > ctl->peak) ctl->peak = level;
    return level;
  }
  // Owner only: where the next push writes, and how many slots are left from there.
  GPULB_HD std::uint32_t bottom_index() const {
    return atomic_ref<std::uint32_t>(ctl->bottom).load(mo::relaxed);
  }

  // Any worker other than the owner: takes up to `chunk` tasks (half of those it sees, rounded
  // up) from the top into out[0..k), oldest first; returns k, 0 with `result` Empty or Abort.
  GPULB_HD std::uint32_t pop_top_chunk(Task* out, std::uint32_t chunk, StealResult& result) const {
    atomic_ref<std::uint64_t> age(ctl->age);
#if defined(__CUDA_ARCH__)
    // The thief side of the Dekker pair with one fence.sc (dekker_fence); acquire: the slots
    // below the bottom we read were published by the owner's release store of it.
    const std::uint64_t old_age = age.load(mo::acquire);
    dekker_fence();
    const std::uint32_t b = atomic_ref<std::uint32_t>(ctl->bottom).load(mo::acquire);
#else
    const std::uint64_t old_age = age.load(mo::seq_cst);
    const std::uint32_t b = atomic_ref<std::uint32_t>(ctl->bottom).load(mo::seq_cst);
#endif
    const std::uint32_t top = ws_age_top(old_age);
    if (b <= top) {
      result = StealResult::Empty;
      return 0;
    }
    const std::uint32_t half = (b - top + 1) / 2;
    const std::uint32_t k = half < chunk ? half : chunk;
    for (std::uint32_t i = 0; i < k; ++i)
      out[i] = detail::load_task_relaxed<S>(slots[top + i]);  // torn copies are discarded below
    std::uint64_t expected = old_age;
    if (age.compare_exchange_strong(expected, ws_make_age(ws_age_tag(old_age), top + k),
                                    mo::seq_cst, mo::relaxed)) {
      result = StealResult::Got;
      return k;
    }
    result = StealResult::Abort;
    return 0;
  }

  // Approximate number of tasks (any thread): for traces and idle heuristics only.
  GPULB_HD std::uint32_t size_hint() const {
    const std::uint32_t top = ws_age_top(atomic_ref<std::uint64_t>(ctl->age).load(mo::relaxed));
    const std::uint32_t b = atomic_ref<std::uint32_t>(ctl->bottom).load(mo::relaxed);
    return b > top ? b - top : 0;
  }
};

using WorkStealingDequeRef = BasicWorkStealingDequeRef<Scope::Device>;

// Views of all workers' deques: deque w's slots start at slots + w * capacity.
struct WorkStealingDequesRef {
  WsDequeControl* ctl = nullptr;
  detail::TaskWords* slots = nullptr;
  std::uint32_t count = 0;
  std::uint32_t capacity = 0;

  GPULB_HD WorkStealingDequeRef deque(std::uint32_t w) const { return at<Scope::Device>(w); }
  template <Scope S>
  GPULB_HD BasicWorkStealingDequeRef<S> at(std::uint32_t w) const {
    return {ctl + w, slots + static_cast<std::size_t>(w) * capacity, capacity};
  }
};

// Host memory for `count` deques of `capacity` tasks (the CPU backend). The CUDA backend builds a
// WorkStealingDequesRef over device memory it allocates and zeroes itself.
class HostWorkStealingDeques {
 public:
  HostWorkStealingDeques(std::uint32_t count, std::uint32_t capacity)
      : count_(count), capacity_(capacity), ctl_(new WsDequeControl[count]) {
    // Slots are never read before written, so no initialisation: pages are touched on first push.
    const std::size_t bytes =
        static_cast<std::size_t>(count) * capacity * sizeof(detail::TaskWords);
    slots_ = static_cast<detail::TaskWords*>(std::aligned_alloc(64, bytes > 0 ? bytes : 64));
    if (!slots_) throw std::bad_alloc();
  }
  ~HostWorkStealingDeques() {
    std::free(slots_);
    delete[] ctl_;
  }
  HostWorkStealingDeques(const HostWorkStealingDeques&) = delete;
  HostWorkStealingDeques& operator=(const HostWorkStealingDeques&) = delete;

  WorkStealingDequesRef ref() const { return {ctl_, slots_, count_, capacity_}; }
  // Highest level deque w reached (read after the workers have joined).
  std::uint32_t peak(std::uint32_t w) const { return ctl_[w].peak; }

 private:
  std::uint32_t count_;
  std::uint32_t capacity_;
  WsDequeControl* ctl_;
  detail::TaskWords* slots_ = nullptr;
};

}  // namespace gpulb
