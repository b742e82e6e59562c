// Task creation from a task body (`ctx.spawn(child)`), shared by every policy that runs spawned
// tasks (work-stealing, static-list, blocking-queue on both backends; task-queue on the CPU).
//
// The contract a body sees, the same on the GPU and on the CPU:
//   - any thread of the block may call ctx.spawn(child) any number of times while the body runs;
//   - the children become visible to other workers only after the body has returned: the worker
//     collects them in its SpawnBuffer (device: the block's threads reserve slots with a shared
//     atomic counter, then thread 0 publishes the whole batch after a __syncthreads), so every
//     shared structure is touched once per task, not once per child (block aggregation);
//   - the runtime fills in the child's id (unique, from one run-wide counter), parent (the id of
//     the task that spawned it) and depth (the parent's depth + 1); the body sets kind, flags and
//     payload. A body that needs its child's id learns it when the child runs (task.id) and its
//     parent's as task.parent.
//   - at most `spawn_capacity` children per task (a policy parameter); more fails the run with an
//     error naming that parameter, it never drops a child.
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

// A worker's private collection of the children of the task it is running (trivially copyable;
// the slots live in memory the runtime owns, `capacity` of them per worker).
struct SpawnBuffer {
  Task* slots = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t count = 0;  // children offered so far (may pass capacity: then the run fails)

  // Single-threaded (the CPU worker). The device context reserves `count` atomically instead.
  GPULB_HD void push(const Task& child) {
    if (count < capacity) slots[count] = child;
    ++count;
  }
  GPULB_HD bool overflowed() const { return count > capacity; }
  GPULB_HD void clear() { count = 0; }
};

// The run-wide id counter (one 32-bit word in memory every worker reaches).
struct TaskIdCounter {
  alignas(kHotLine) std::uint32_t next = 0;
};

// Gives `n` children their ids, parent and depth. One fetch-and-add per batch (the block's
// aggregate), relaxed: ids only need to be unique; publication orders the rest.
// Returns false where the ids would pass `id_limit` (per-id tables of the scenario are that
// large; the caller fails the run, naming ExecPlan::id_capacity).
GPULB_HD inline bool assign_child_ids(Task* kids, std::uint32_t n, const Task& parent,
                                      TaskIdCounter* ids, std::uint64_t id_limit) {
  if (n == 0) return true;
  const std::uint32_t base = device_atomic_ref<std::uint32_t>(ids->next).fetch_add(n, mo::relaxed);
  if (static_cast<std::uint64_t>(base) + n > id_limit) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    kids[i].id = base + i;
    kids[i].parent = parent.id;
    kids[i].depth = parent.depth + 1;
  }
  return true;
}

// assign_child_ids for a run across `stride` GPUs: each GPU counts its own children on its own
// counter (no traffic between GPUs), which GPU g starts at first + g and advances by n * stride
// for n children, whose ids are base, base + stride, ...: the GPUs' ids never collide. Ids are
// then unique but not dense (a GPU that spawns more reaches higher ids); the limit is checked on
// the largest id given.
GPULB_HD inline bool assign_child_ids_strided(Task* kids, std::uint32_t n, const Task& parent,
                                              TaskIdCounter* ids, std::uint64_t id_limit,
                                              std::uint32_t stride) {
  if (n == 0) return true;
  const std::uint32_t base =
      device_atomic_ref<std::uint32_t>(ids->next).fetch_add(n * stride, mo::relaxed);
  if (static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(n - 1) * stride >= id_limit)
    return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    kids[i].id = base + i * stride;
    kids[i].parent = parent.id;
    kids[i].depth = parent.depth + 1;
  }
  return true;
}

namespace detail {

// A Task as eight 64-bit words, for slots that a reader may access while the owner rewrites them
// (the ABP thief reads a slot that the owner may recycle; the thief's CAS then fails and the copy
// is thrown away). Each word is a relaxed atomic, so such a torn read is benign rather than a data
// race; ordering comes from the index words around it.
struct alignas(64) TaskWords {
  std::uint64_t w[8];
};
static_assert(sizeof(TaskWords) == sizeof(Task));

// S: the scope of every party that touches the slot (System where blocks of other GPUs read it).
template <Scope S = Scope::Device>
GPULB_HD inline void store_task_relaxed(TaskWords& slot, const Task& t) {
  TaskWords src;
  __builtin_memcpy(&src, &t, sizeof(Task));
  for (int i = 0; i < 8; ++i)
    scoped_atomic_ref<S, std::uint64_t>(slot.w[i]).store(src.w[i], mo::relaxed);
}

template <Scope S = Scope::Device>
GPULB_HD inline Task load_task_relaxed(TaskWords& slot) {
  TaskWords dst;
  for (int i = 0; i < 8; ++i)
    dst.w[i] = scoped_atomic_ref<S, std::uint64_t>(slot.w[i]).load(mo::relaxed);
  Task t;
  __builtin_memcpy(static_cast<void*>(&t), &dst, sizeof(Task));
  return t;
}

}  // namespace detail
}  // namespace gpulb
