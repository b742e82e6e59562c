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
void run_task(Runtime& rt, const WorkerContext& ctx, WorkerSlot& slot, const Body& body,
              const Task& task) {
  ctx.task_begin(task);
  body(ctx, task);
  ctx.task_end();
  slot.tasks_done.store(slot.tasks_done.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  if (ctx.refused_spawns() != 0) [[unlikely]] {
    rt.fail("task " + std::to_string(task.id) + " spawned child tasks, which policy '" +
            std::string(rt.policy().name) +
            "' cannot run here (task-queue runs them only where the scenario says it spawns); use "
            "work-stealing, static-list "
            "or blocking-queue");
  }
}

// Per-worker spawn buffers: spawn_capacity task slots for each worker.
class SpawnBuffers {
 public:
  SpawnBuffers(std::uint32_t workers, std::uint32_t capacity)
      : capacity_(capacity),
        slots_(static_cast<std::size_t>(workers) * capacity),
        buffers_(workers) {
    for (std::uint32_t w = 0; w < workers; ++w)
      buffers_[w] = SpawnBuffer{slots_.data() + std::size_t{w} * capacity, capacity, 0};
  }
  SpawnBuffer* get(std::uint32_t w) { return &buffers_[w]; }

 private:
  std::uint32_t capacity_;
  std::vector<Task> slots_;
  std::vector<SpawnBuffer> buffers_;
};

// Where a worker's children get their ids: the run-wide counter of gpulb/spawn.hpp, either one
// fetch-and-add per task that spawns (block 1: ids stay dense, as a scenario whose tables are
// indexed by id needs, ExecPlan::id_capacity) or `block` ids reserved at a time, so that the
// shared counter sees one RMW per `block` children instead of one per parent (the official UTS
// keeps no shared counter per node; at 16 threads that one cache line was a bottleneck). Ids stay
// unique and below `limit`; reserved ones a worker does not use are skipped.
struct WorkerIds {
  TaskIdCounter* counter = nullptr;
  std::uint64_t limit = 0;
  std::uint32_t block = 1;
  std::uint64_t next = 0, end = 0;  // this worker's reserved, unused ids [next, end)

  // For a plan: blocks of 4096 where no table is indexed by id, else exact.
  static WorkerIds for_plan(TaskIdCounter* counter, const ExecPlan& plan) {
    return {counter, id_limit(plan), plan.id_capacity == 0 ? 4096u : 1u};
  }

  // Ids, parent and depth for n children; false when the ids would pass `limit`.
  bool assign(Task* kids, std::uint32_t n, const Task& parent) {
    if (n == 0) return true;
    if (block <= 1) return assign_child_ids(kids, n, parent, counter, limit);
    if (end - next < n) {
      const std::uint32_t want = n > block ? n : block;
      // relaxed: ids only need to be unique (as in assign_child_ids).
      const std::uint64_t base =
          device_atomic_ref<std::uint32_t>(counter->next).fetch_add(want, mo::relaxed);
      if (base + want > limit) return false;
      next = base;
      end = base + want;
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      kids[i].id = static_cast<std::uint32_t>(next + i);
      kids[i].parent = parent.id;
      kids[i].depth = parent.depth + 1;
    }
    next += n;
    return true;
  }
};

// Nothing to record between a task's begin and its body (run_spawning_task's default).
struct NothingAtBegin {
  void operator()() const {}
};

// Runs one task whose body may spawn; on return the children are in `spawn` with their ids,
// parent and depth set. `at_begin` runs right after the task's begin is recorded (an event that
// shares its time). Returns false (the run has been failed with a message naming the parameter
// to raise) when the body spawned more than spawn_capacity children or the ids ran out.
template <class Body, class AtBegin = NothingAtBegin>
bool run_spawning_task(Runtime& rt, const WorkerContext& ctx, WorkerSlot& slot, const Body& body,
                       const Task& task, SpawnBuffer& spawn, WorkerIds& ids,
                       const AtBegin& at_begin = {}) {
  spawn.clear();
  ctx.task_begin(task);
  at_begin();
  body(ctx, task);
  ctx.task_end();
  slot.tasks_done.store(slot.tasks_done.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  if (spawn.overflowed()) [[unlikely]] {
    rt.fail("task " + std::to_string(task.id) + " spawned " + std::to_string(spawn.count) +
            " children, more than spawn_capacity=" + std::to_string(spawn.capacity) +
            "; raise --param spawn_capacity");
    return false;
  }
  if (spawn.count == 0) return true;
  if (!ids.assign(spawn.slots, spawn.count, task)) [[unlikely]] {
    rt.fail("spawned task ids passed the scenario's table size (" + std::to_string(ids.limit) +
            " ids): the run created more tasks than the scenario expected");
    return false;
  }
  slot.tasks_spawned.store(slot.tasks_spawned.load(std::memory_order_relaxed) + spawn.count,
                           std::memory_order_relaxed);
  // WorkerIds gives one batch consecutive ids.
  const trace::EventPayload p = trace::spawn_event(spawn.slots[0].id, spawn.count);
  ctx.record(p.kind, p.arg, p.aux);
  return true;
}

// The same with one fetch-and-add on the run-wide counter per task that spawns (exact ids).
template <class Body, class AtBegin = NothingAtBegin>
bool run_spawning_task(Runtime& rt, const WorkerContext& ctx, WorkerSlot& slot, const Body& body,
                       const Task& task, SpawnBuffer& spawn, TaskIdCounter* ids,
                       std::uint64_t id_limit, const AtBegin& at_begin = {}) {
  WorkerIds exact{ids, id_limit, 1};
  return run_spawning_task(rt, ctx, slot, body, task, spawn, exact, at_begin);
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

namespace gpulb::cpu {

// The worker loop's pieces under their public names: a driver outside this tree
// (cpu/add_policy.hpp) builds its loop from them as the compiled drivers do.
using detail::IdleTracker;
using detail::run_spawning_task;
using detail::run_task;
using detail::SpawnBuffers;
using detail::worker_begin;
using detail::worker_end;
using detail::WorkerIds;

}  // namespace gpulb::cpu
