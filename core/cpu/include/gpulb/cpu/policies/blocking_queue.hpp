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
// threads (docs/benchmarks.md).
//
// The queue starts at blocking_queue_slots() and a full one grows (enqueue_growing), within the
// memory available: a FIFO queue walks a tree level by level, so it holds about its widest level.
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
#include "gpulb/memory_estimate.hpp"
#include "gpulb/policies/blocking_queue.hpp"
#include "gpulb/static_list_sizing.hpp"

namespace gpulb::cpu {
namespace detail {

// The queue grows under its lock, twice as large or at least room for the batch, within the
// memory available; the error names the numbers where memory cannot hold it.
class GrowingBlockingQueue {
 public:
  explicit GrowingBlockingQueue(std::uint32_t slots) : queue_(slots), ref_(queue_.ref()) {}
  BlockingQueueRef& ref() { return ref_; }
  std::uint64_t peak() const { return queue_.peak(); }
  std::uint32_t capacity() const { return queue_.capacity(); }
  std::uint32_t growths() const { return growths_.load(std::memory_order_relaxed); }

  // ENQUEUE of a batch, growing the queue where it is full; an empty string, or why it cannot.
  std::string enqueue_growing(const Task* tasks, std::uint32_t n, std::uint32_t& level) {
    while (!ref_.enqueue(tasks, n, level)) {
      if (std::string why = grow(n); !why.empty()) return why;
    }
    return {};
  }

 private:
  std::string grow(std::uint32_t n) {
    ref_.lock();
    const std::uint64_t queued = ref_.ctl->end - ref_.ctl->beg;
    std::string why;
    if (queued + n > ref_.capacity) {  // no other worker grew it meanwhile
      const std::uint64_t need = queued + n, free = memory_limit().available;
      const std::uint64_t slots =
          fit_list_slots(std::max<std::uint64_t>(need, 2 * std::uint64_t{ref_.capacity}), need,
                         free != 0 ? free : ~std::uint64_t{0});
      if (slots == 0 || need > kMaxListSlots) {
        why = "blocking-queue: the queue holds " + std::to_string(queued) +
              " tasks and a worker has " + std::to_string(n) + " more; " + std::to_string(need) +
              " task slots (" + format_gib(need * sizeof(Task)) + ") do not fit the " +
              format_gib(free) + " of host memory available (MemAvailable) beside the queue's " +
              format_gib(std::uint64_t{ref_.capacity} * sizeof(Task)) +
              "; the queue holds a tree's widest level: use work-stealing";
      } else {
        queue_.grow_locked(ref_, static_cast<std::uint32_t>(std::min(slots, kMaxListSlots)));
        growths_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    ref_.unlock();
    return why;
  }

  HostBlockingQueue queue_;
  BlockingQueueRef ref_;  // the one every worker uses
  std::atomic<std::uint32_t> growths_{0};
};

// The queue's first slots. It walks a tree level by level: where memory cannot hold the widest
// level the scenario states, the run is refused before it starts; else the queue starts at
// blocking_queue_slots(), or what memory holds of it.
inline std::uint64_t first_queue_slots(const ExecPlan& plan) {
  const std::uint64_t slots = std::max<std::uint64_t>(
      policies::blocking_queue_slots(plan.policy_options<policies::BlockingQueueOptions>(),
                                     plan.widest_generation, plan.tasks.size()),
      plan.tasks.size());
  if (slots > kMaxListSlots) {
    throw RunError("blocking-queue: " + std::to_string(slots) +
                   " task slots are more than one queue indexes (" + std::to_string(kMaxListSlots) +
                   ")");
  }
  const std::uint64_t available = memory_limit().available;
  if (available == 0) return slots;
  if (plan.widest_generation != 0 &&
      fit_list_slots(plan.widest_generation, plan.widest_generation, available) == 0) {
    throw RunError("blocking-queue: the scenario's widest generation, " +
                   std::to_string(plan.widest_generation) + " tasks (" +
                   format_gib(plan.widest_generation * sizeof(Task)) +
                   "), is what the queue holds at its fullest; " + format_gib(available) +
                   " of host memory is available (MemAvailable): use work-stealing");
  }
  return std::max<std::uint64_t>(fit_list_slots(slots, 0, available), plan.tasks.size());
}

template <class Body>
ExecOutput run_blocking_queue(const ExecPlan& plan, const Body& body) {
  const policies::BlockingQueueOptions& o = plan.policy_options<policies::BlockingQueueOptions>();
  const std::uint64_t first = first_queue_slots(plan);
  const std::uint64_t expected = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  // Its lock waits between tasks are its lesson: every task timed, unless --param trace_batch says.
  Runtime rt(plan, 4 * expected + 16, 1);
  const std::uint32_t workers = rt.workers();
  GrowingBlockingQueue queue(static_cast<std::uint32_t>(first));
  BlockingQueueRef& q = queue.ref();
  std::uint32_t level = 0;
  q.enqueue(plan.tasks.data(), static_cast<std::uint32_t>(plan.tasks.size()),
            level);  // fits: slots >= initial tasks
  q.add_pending(static_cast<std::int64_t>(plan.tasks.size()));
  rt.host_record(EventKind::HostEnqueue, static_cast<std::uint32_t>(plan.tasks.size()), 0);
  TaskIdCounter ids;
  ids.next = first_spawn_id(plan);
  const std::uint64_t limit = id_limit(plan);
  SpawnBuffers spawn(workers, o.spawn_capacity);

  rt.start([&](std::uint32_t rank) {
    WorkerSlot& slot = rt.slot(rank);
    SpawnBuffer& kids = *spawn.get(rank);
    const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(),
                            rt.stop_flag(), &kids);
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
      const auto level_at_begin = [&] {
        ctx.record_at_last(EventKind::QueueLevel, taken_level, 0);
      };
      if (!run_spawning_task(rt, ctx, slot, body, task, kids, &ids, limit, level_at_begin)) break;
      if (kids.count == 0) {
        q.add_pending(-1);
        continue;
      }
      q.add_pending(static_cast<std::int64_t>(kids.count) - 1);  // before they are visible
      if (const std::string why = queue.enqueue_growing(kids.slots, kids.count, lvl);
          !why.empty()) {
        rt.fail(why);
        break;
      }
      ctx.record_at_last(EventKind::QueueLevel, lvl, 0);
    }
    worker_end(ctx, slot, idle.failed);
  });

  try {
    rt.wait_workers([&] {
      return "pending " +
             std::to_string(device_atomic_ref<std::int64_t>(q.ctl->pending).load(mo::relaxed));
    });
  } catch (...) {
    rt.fail("the host side of the run stopped");
    rt.join();
    throw;
  }
  ExecOutput out = rt.finish("host", 0);
  out.tasks_run = rt.tasks_done();
  for (std::uint32_t w = 0; w < workers; ++w)
    out.tasks_spawned += rt.slot(w).tasks_spawned.load(std::memory_order_relaxed);
  out.metrics["peak_task_slots"] = queue.peak();
  out.metrics["queue_slots"] = queue.capacity();
  if (queue.growths() > 0) {
    out.notes.push_back("blocking-queue: the queue filled and grew " +
                        std::to_string(queue.growths()) + " times, to " +
                        std::to_string(queue.capacity()) +
                        " task slots (blocking_capacity sizes the first)");
  }
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
