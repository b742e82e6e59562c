// The blocking queue on the CPU backend (gpulb/blocking_queue.hpp, Mohan & Gopalan's CAS-lock
// queue): every worker takes from and puts into one global queue under one spin lock. The
// initial tasks are in the queue before the workers start (as a kernel launched over it would
// find them); the run ends when no task is queued or running.
//
// Trace: QueueLevel (aux 0, arg: tasks queued after the operation) after each take and put;
// DequeueFailed once per idle spell; SpawnBatch; TaskBegin/TaskEnd. Every task is timed at its begin
// and its end (the lock waits between them are the lesson); the levels take no clock read of
// their own: a take's level is written right after the task's begin and takes its time, a put's
// takes the time of the task's end (early by the put's lock wait; flagged interpolated). With a
// clock read for each of its four records a task, tracing cost 8-10% of UTS T1's time on 16 host
// threads (docs/benchmarks.md, issue 12).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "gpulb/blocking_queue.hpp"
#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/policies/blocking_queue.hpp"

namespace gpulb::cpu {
namespace detail {

template <class Body>
ExecOutput run_blocking_queue(const ExecPlan& plan, const Body& body) {
  const PolicyOptions& o = plan.options;
  const std::uint64_t expected = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  // Its lock waits between tasks are its lesson: every task timed, unless --param trace_batch says.
  Runtime rt(plan, 4 * expected + 16, 1);
  const std::uint32_t workers = rt.workers();
  HostBlockingQueue queue(o.blocking_capacity);
  const BlockingQueueRef q = queue.ref();
  std::uint32_t level = 0;
  if (plan.tasks.size() > o.blocking_capacity ||
      !q.enqueue(plan.tasks.data(), static_cast<std::uint32_t>(plan.tasks.size()), level)) {
    throw RunError("blocking-queue: the " + std::to_string(plan.tasks.size()) +
                   " initial tasks do not fit blocking_capacity=" + std::to_string(o.blocking_capacity) +
                   "; raise --param blocking_capacity");
  }
  q.add_pending(static_cast<std::int64_t>(plan.tasks.size()));
  rt.host_record(EventKind::HostEnqueue, static_cast<std::uint32_t>(plan.tasks.size()), 0);
  TaskIdCounter ids;
  ids.next = first_spawn_id(plan);
  const std::uint64_t limit = id_limit(plan);
  SpawnBuffers spawn(workers, o.spawn_capacity);

  rt.start([&](std::uint32_t rank) {
    WorkerSlot& slot = rt.slot(rank);
    SpawnBuffer& kids = *spawn.get(rank);
    const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(), rt.stop_flag(), &kids);
    worker_begin(ctx, slot, rank);
    IdleTracker idle;
    Task task;
    std::uint32_t lvl = 0;
    while (!rt.stop_requested()) {
      if (!q.try_dequeue(task, lvl)) {
        idle.failed_attempt(ctx, 0);
        if (q.terminated()) break;
        std::this_thread::yield();
        continue;
      }
      idle.idle = false;
      const std::uint32_t taken_level = lvl;
      const auto level_at_begin = [&] { ctx.record_at_last(EventKind::QueueLevel, taken_level, 0); };
      if (!run_spawning_task(rt, ctx, slot, body, task, kids, &ids, limit, level_at_begin)) break;
      if (kids.count == 0) {
        q.add_pending(-1);
        continue;
      }
      q.add_pending(static_cast<std::int64_t>(kids.count) - 1);  // before they are visible
      if (!q.enqueue(kids.slots, kids.count, lvl)) {
        rt.fail("blocking-queue: the queue is full (blocking_capacity=" + std::to_string(o.blocking_capacity) +
                "); raise --param blocking_capacity");
        break;
      }
      ctx.record_at_last(EventKind::QueueLevel, lvl, 0);
    }
    worker_end(ctx, slot, idle.failed);
  });

  try {
    rt.wait_workers([&] { return "pending " + std::to_string(device_atomic_ref<std::int64_t>(q.ctl->pending).load(mo::relaxed)); });
  } catch (...) {
    rt.fail("the host side of the run stopped");
    rt.join();
    throw;
  }
  ExecOutput out = rt.finish("host", 0);
  out.tasks_run = rt.tasks_done();
  for (std::uint32_t w = 0; w < workers; ++w) out.tasks_spawned += rt.slot(w).tasks_spawned.load(std::memory_order_relaxed);
  out.metrics["peak_task_slots"] = queue.peak();
  return out;
}

}  // namespace detail

struct BlockingQueueDriver {
  static const PolicyDescriptor& descriptor() { return policies::blocking_queue(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    return detail::run_blocking_queue(plan, body);
  }
};

}  // namespace gpulb::cpu
