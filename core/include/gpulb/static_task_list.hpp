// The static task list: Cederman & Tsigas, "On Dynamic Load Balancing on Graphics Processors"
// (Graphics Hardware 2008), as given in pseudocode by Mohan & Gopalan (IJISA 2014, section 2.1).
//
// Two arrays: `in` holds one generation's tasks (read only while a generation runs, so taking a
// task needs no synchronisation: block b of the launch runs in[b]); `out` receives the children
// that the generation creates, each batch placed by one fetch-and-add on `tail` (ENQUEUE). When
// the launch ends the arrays swap roles (NEWTASKCNT) and the host launches again, until a
// generation creates nothing. The peak of `tail` over generations is the task memory this policy
// needs (the paper: about 800,000 slots for Connect-Four at lookahead 7).
//
// One source for both backends: on the GPU one launch per generation (a block per task, or
// persistent blocks striding over `in`), on the CPU one pass of the worker threads per generation.
// Memory orders: the fetch-and-add is relaxed (it only hands out distinct ranges); the slots it
// hands out are written with plain stores and read in the next generation, after the launch
// boundary (kernel end on the GPU; the generation barrier's release/acquire on the CPU).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

struct StaticTaskListControl {
  // children appended this generation (may pass capacity)
  alignas(kHotLine) std::uint32_t tail = 0;
};

// What one ENQUEUE did: the batch's first slot, its size, and how many of its tasks were written
// (those below `capacity`). The rest belong at slots [base + written, base + n), past the array.
struct ListAppend {
  std::uint32_t base = 0;
  std::uint32_t n = 0;
  std::uint32_t written = 0;
  GPULB_HD bool complete() const { return written == n; }
};

// Children a worker could not append: they wait in its spawn buffer from `offset` on, for slots
// [slot, slot + count) of the larger output array the host allocates before the generation goes
// on. count 0: none.
struct HeldChildren {
  std::uint32_t slot = 0;
  std::uint32_t offset = 0;
  std::uint32_t count = 0;
};

struct StaticTaskListRef {
  const Task* in = nullptr;
  Task* out = nullptr;
  StaticTaskListControl* ctl = nullptr;
  std::uint32_t in_count = 0;
  std::uint32_t capacity = 0;  // slots of the output array

  // DEQUEUE(q, id): the task of block `id` of this generation.
  GPULB_HD const Task& dequeue(std::uint32_t id) const { return in[id]; }

  // ENQUEUE for a whole batch (block-aggregated): one fetch-and-add reserves n slots, and the ones
  // below `capacity` are written. Every batch that reserved a slot below `capacity` writes up to
  // it, so slots [0, min(tail, capacity)) are all written and [capacity, tail) are exactly the
  // slots of the batches' unwritten rests: the host can grow the array and place those rests
  // (HeldChildren) without a hole. A worker whose batch is incomplete stops taking tasks, so
  // `tail` passes `capacity` by at most one batch a worker.
  GPULB_HD ListAppend enqueue(const Task* tasks, std::uint32_t n) const {
    if (n == 0) return {};
    const std::uint32_t base =
        device_atomic_ref<std::uint32_t>(ctl->tail).fetch_add(n, mo::relaxed);
    const std::uint32_t room = base < capacity ? capacity - base : 0;
    const std::uint32_t written = n < room ? n : room;
    for (std::uint32_t i = 0; i < written; ++i) out[base + i] = tasks[i];
    return {base, n, written};
  }
};

// The worker's side of an incomplete append: where its unwritten children go.
GPULB_HD inline HeldChildren held_rest(const ListAppend& a) {
  return {a.base + a.written, a.written, a.n - a.written};
}

// Host memory for the two arrays (the CPU backend); the CUDA backend keeps the same pair in device
// memory. Each array has its own capacity, grown between launches (static_list_sizing.hpp says by
// how much). Slots are not initialised: pages are touched only as far as a generation fills them.
class HostStaticTaskList {
 public:
  HostStaticTaskList() = default;
  ~HostStaticTaskList() {
    for (Task* a : arrays_) std::free(a);
  }
  HostStaticTaskList(const HostStaticTaskList&) = delete;
  HostStaticTaskList& operator=(const HostStaticTaskList&) = delete;

  // The first generation's tasks (the host's ENQUEUE of task_init), in an input array of
  // `capacity` slots (at least n).
  void load(const Task* tasks, std::uint32_t n, std::uint32_t capacity) {
    reallocate(in_, capacity < n ? n : capacity, 0);
    for (std::uint32_t i = 0; i < n; ++i) arrays_[in_][i] = tasks[i];
    in_count_ = n;
    ctl_.tail = 0;
  }

  StaticTaskListRef ref() {
    return {arrays_[in_], arrays_[1 - in_], &ctl_, in_count_, capacity_[1 - in_]};
  }

  // Before a launch: the output array holds at least `slots` (its contents are kept).
  void reserve_output(std::uint32_t slots) {
    if (slots > capacity_[1 - in_]) reallocate(1 - in_, slots, written());
  }
  // A held batch's rest, into the output array (which reserve_output made large enough).
  void place(const HeldChildren& h, const Task* from) {
    for (std::uint32_t i = 0; i < h.count; ++i) arrays_[1 - in_][h.slot + i] = from[h.offset + i];
  }

  // NEWTASKCNT: between launches (no worker running), once the generation has ended with every
  // child in the output array (tail <= its capacity). Swaps the arrays; returns the new size.
  std::uint32_t swap() {
    in_ = 1 - in_;
    in_count_ = ctl_.tail;
    ctl_.tail = 0;
    return in_count_;
  }
  std::uint32_t tail() const { return ctl_.tail; }
  std::uint32_t in_count() const { return in_count_; }
  std::uint32_t output_capacity() const { return capacity_[1 - in_]; }
  std::uint64_t bytes() const {
    return (std::uint64_t{capacity_[0]} + capacity_[1]) * sizeof(Task);
  }

 private:
  std::uint32_t written() const {
    return ctl_.tail < capacity_[1 - in_] ? ctl_.tail : capacity_[1 - in_];
  }
  // Array `which` to `slots`, its first `keep` tasks copied over.
  void reallocate(int which, std::uint32_t slots, std::uint32_t keep) {
    const std::size_t bytes = slots == 0 ? 64
                                         : (std::size_t{slots} * sizeof(Task) + 63) / 64 *
                                               64;  // aligned_alloc: a multiple of 64
    auto* a = static_cast<Task*>(std::aligned_alloc(64, bytes));
    if (!a) throw std::bad_alloc();
    if (keep > 0)
      std::memcpy(static_cast<void*>(a), arrays_[which], std::size_t{keep} * sizeof(Task));
    std::free(arrays_[which]);
    arrays_[which] = a;
    capacity_[which] = slots;
  }

  Task* arrays_[2] = {nullptr, nullptr};
  std::uint32_t capacity_[2] = {0, 0};
  int in_ = 0;
  std::uint32_t in_count_ = 0;
  StaticTaskListControl ctl_;
};

}  // namespace gpulb
