// What every CPU policy's worker loop shares: idle-spell tracing and running one task (with its
// spawns collected in the worker's spawn buffer, gpulb/spawn.hpp).
#pragma once

#include <string>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/spawn.hpp"

namespace gpulb::cpu::detail {

using trace::EventKind;

// A worker's idle spell: one DequeueFailed event at its start, every attempt counted.
struct IdleTracker {
  bool idle = false;
  std::uint32_t failed = 0;
  void failed_attempt(const WorkerContext& ctx, std::uint16_t queue) {
    if (failed != 0xFFFFFFFFu) ++failed;
    if (!idle) ctx.record(EventKind::DequeueFailed, 0, queue);
    idle = true;
  }
};

template <class Body>
void run_task(Runtime& rt, const WorkerContext& ctx, WorkerSlot& slot, const Body& body, const Task& task) {
  ctx.record(EventKind::TaskBegin, task.id, task.kind);
  body(ctx, task);
  ctx.record(EventKind::TaskEnd, task.id, task.kind);
  slot.tasks_done.store(slot.tasks_done.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (ctx.refused_spawns() != 0) [[unlikely]] {
    rt.fail("task " + std::to_string(task.id) + " spawned child tasks, which policy '" +
            std::string(rt.policy().name) +
            "' cannot run; use work-stealing, static-list or blocking-queue");
  }
}

// Per-worker spawn buffers: spawn_capacity task slots for each worker.
class SpawnBuffers {
 public:
  SpawnBuffers(std::uint32_t workers, std::uint32_t capacity)
      : capacity_(capacity), slots_(static_cast<std::size_t>(workers) * capacity), buffers_(workers) {
    for (std::uint32_t w = 0; w < workers; ++w) buffers_[w] = SpawnBuffer{slots_.data() + std::size_t{w} * capacity, capacity, 0};
  }
  SpawnBuffer* get(std::uint32_t w) { return &buffers_[w]; }

 private:
  std::uint32_t capacity_;
  std::vector<Task> slots_;
  std::vector<SpawnBuffer> buffers_;
};

// Runs one task whose body may spawn; on return the children are in `spawn` with their ids,
// parent and depth set. Returns false (the run has been failed with a message naming the
// parameter to raise) when the body spawned more than spawn_capacity children or the ids ran out.
template <class Body>
bool run_spawning_task(Runtime& rt, const WorkerContext& ctx, WorkerSlot& slot, const Body& body, const Task& task,
                       SpawnBuffer& spawn, TaskIdCounter* ids, std::uint64_t id_limit) {
  spawn.clear();
  ctx.record(EventKind::TaskBegin, task.id, task.kind);
  body(ctx, task);
  ctx.record(EventKind::TaskEnd, task.id, task.kind);
  slot.tasks_done.store(slot.tasks_done.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (spawn.overflowed()) [[unlikely]] {
    rt.fail("task " + std::to_string(task.id) + " spawned " + std::to_string(spawn.count) +
            " children, more than spawn_capacity=" + std::to_string(spawn.capacity) +
            "; raise --param spawn_capacity");
    return false;
  }
  if (spawn.count == 0) return true;
  if (!assign_child_ids(spawn.slots, spawn.count, task, ids, id_limit)) [[unlikely]] {
    rt.fail("spawned task ids passed the scenario's table size (" + std::to_string(id_limit) +
            " ids): the run created more tasks than the scenario expected");
    return false;
  }
  slot.tasks_spawned.store(slot.tasks_spawned.load(std::memory_order_relaxed) + spawn.count, std::memory_order_relaxed);
  ctx.record(EventKind::Spawn, spawn.count);
  return true;
}


// Shared worker start/end events.
inline void worker_begin(const WorkerContext& ctx, WorkerSlot& slot, std::uint32_t rank) {
  slot.start_ns = ctx.now_ns();
  ctx.record(EventKind::WorkerStart, rank, trace::kUnknownSm);
}
inline void worker_end(const WorkerContext& ctx, WorkerSlot& slot, std::uint32_t failed_attempts) {
  slot.end_ns = ctx.now_ns();
  ctx.record(EventKind::WorkerEnd, failed_attempts);
}

}  // namespace gpulb::cpu::detail
