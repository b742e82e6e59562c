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
#include <new>
#include <utility>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

struct StaticTaskListControl {
  alignas(kHotLine) std::uint32_t tail = 0;  // children appended this generation (may pass capacity)
};

struct StaticTaskListRef {
  const Task* in = nullptr;
  Task* out = nullptr;
  StaticTaskListControl* ctl = nullptr;
  std::uint32_t in_count = 0;
  std::uint32_t capacity = 0;  // slots per array

  // DEQUEUE(q, id): the task of block `id` of this generation.
  GPULB_HD const Task& dequeue(std::uint32_t id) const { return in[id]; }

  // ENQUEUE for a whole batch (block-aggregated): one fetch-and-add reserves n slots. Returns
  // false when they would pass `capacity`; `tail` still counts them, so the host can say how many
  // slots the generation needed.
  GPULB_HD bool enqueue(const Task* tasks, std::uint32_t n) const {
    if (n == 0) return true;
    const std::uint32_t base = device_atomic_ref<std::uint32_t>(ctl->tail).fetch_add(n, mo::relaxed);
    if (static_cast<std::uint64_t>(base) + n > capacity) return false;
    for (std::uint32_t i = 0; i < n; ++i) out[base + i] = tasks[i];
    return true;
  }
};

// Host memory for the two arrays (the CPU backend); the CUDA backend keeps the same pair in device
// memory. Slots are not initialised: pages are touched only as far as a generation fills them.
class HostStaticTaskList {
 public:
  explicit HostStaticTaskList(std::uint32_t capacity) : capacity_(capacity) {
    for (Task*& a : arrays_) {
      a = static_cast<Task*>(std::aligned_alloc(64, static_cast<std::size_t>(capacity) * sizeof(Task)));
      if (!a) throw std::bad_alloc();
    }
  }
  ~HostStaticTaskList() {
    for (Task* a : arrays_) std::free(a);
  }
  HostStaticTaskList(const HostStaticTaskList&) = delete;
  HostStaticTaskList& operator=(const HostStaticTaskList&) = delete;

  // The first generation's tasks (the host's ENQUEUE of task_init); false if they do not fit.
  bool load(const Task* tasks, std::uint32_t n) {
    if (n > capacity_) return false;
    for (std::uint32_t i = 0; i < n; ++i) arrays_[0][i] = tasks[i];
    in_count_ = n;
    ctl_.tail = 0;
    return true;
  }

  StaticTaskListRef ref() { return {arrays_[in_], arrays_[1 - in_], &ctl_, in_count_, capacity_}; }

  // NEWTASKCNT: between launches (no worker running). Swaps the arrays and returns the new
  // generation's size; `needed` receives the slots the finished generation asked for.
  std::uint32_t swap(std::uint64_t& needed) {
    needed = ctl_.tail;
    in_ = 1 - in_;
    in_count_ = ctl_.tail < capacity_ ? ctl_.tail : capacity_;
    ctl_.tail = 0;
    return in_count_;
  }
  std::uint32_t in_count() const { return in_count_; }
  std::uint32_t capacity() const { return capacity_; }

 private:
  std::uint32_t capacity_;
  Task* arrays_[2] = {nullptr, nullptr};
  int in_ = 0;
  std::uint32_t in_count_ = 0;
  StaticTaskListControl ctl_;
};

}  // namespace gpulb
