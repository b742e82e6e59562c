// The task-queue policy on the CPU backend: Chen et al. 2010, Algorithms 2 and 3 (the queue code
// of gpulb/task_queue.hpp, the same source the CUDA kernel runs) with one host thread per worker
// and the producer on the calling thread.
//
// Trace: workers QueueLevel (aux: queue, arg: tasks left) per dequeue, DequeueFailed once per idle
// spell, Halt; host track HostEnqueue + QueueLevel per batch.
#pragma once

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/policies/task_queue.hpp"
#include "gpulb/task_queue.hpp"

namespace gpulb::cpu {
namespace detail {

// The host's view of the CPU queues: plain memory, so publishing is a copy and two stores.
struct CpuQueuePublisher {
  TaskQueueRef ref;
  bool ready(std::uint32_t q, std::uint32_t h_written) const {
    return system_atomic_ref<std::uint32_t>(ref.host_consumed[q].value).load(mo::acquire) == h_written;
  }
  void publish(std::uint32_t q, const Task* tasks, std::uint32_t n, std::uint32_t new_written) const {
    std::copy(tasks, tasks + n, ref.tasks + static_cast<std::size_t>(q) * ref.capacity);
    // d_written_gm before d_n_gm (see the DEPARTURE note in task_queue.hpp); release orders the
    // slot writes before both. On the CPU this release is the paper's host_write_fence().
    device_atomic_ref<std::uint32_t>(ref.counters[q].written.value).store(new_written, mo::release);
    device_atomic_ref<std::int32_t>(ref.counters[q].n.value).store(static_cast<std::int32_t>(n), mo::release);
  }
};

// The host task pool of a distributed run (Chen et al.'s pool, spread over ranks): the tasks this
// rank holds but has not yet put into its queues. The balancer (Distribution::balance) runs on the
// host thread and calls pump() between messages, which moves pool tasks into whichever queue is
// ready (Algorithm 2, without blocking); it lends from the pool's far end to a rank that asks, and
// adds what it gets from others. Tasks in the queues stay here: they are the workers' already.
template <class Publisher>
class TaskPoolPort final : public HostInserter {
 public:
  TaskPoolPort(Runtime& rt, TaskQueueHost<Publisher>& host, std::span<const Task> initial, std::uint32_t refill,
               std::function<std::string()> state)
      : rt_(rt), host_(host), pool_(initial.begin(), initial.end()), refill_(refill), state_(std::move(state)) {}

  void insert(std::span<const Task> tasks) override {
    pool_.insert(pool_.end(), tasks.begin(), tasks.end());
    rt_.host_record(EventKind::PoolLevel, static_cast<std::uint32_t>(pool_.size() - head_));
  }
  // At most half the pool, from its far end (the tasks this rank would reach last).
  std::uint32_t take(std::span<Task> out) override {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(out.size(), (pool_.size() - head_) / 2));
    std::copy(pool_.end() - n, pool_.end(), out.begin());
    pool_.resize(pool_.size() - n);
    if (n > 0) rt_.host_record(EventKind::PoolLevel, static_cast<std::uint32_t>(pool_.size() - head_));
    return n;
  }
  // Nothing left in the pool, and every task this rank put into its queues has run. An empty pool
  // alone would do for Safra (task-queue tasks spawn nothing, so such a rank can never lend
  // again), but then a task that hangs after the last chunk moved would be waited for outside the
  // balancer, where the watchdog cannot end the job without joining that task's worker.
  bool idle() const override { return head_ == pool_.size() && published_ == rt_.tasks_done(); }
  bool hungry() const override { return pool_.size() - head_ < refill_; }
  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override { rt_.host_record(kind, arg, aux); }
  // A worker failed, or this rank's tasks stopped finishing while it had some (in its pool, or in
  // its queues and not yet done): the local watchdog (Runtime::watch).
  void check() override {
    rt_.rethrow_failure();
    rt_.watch(!idle(), state_);
  }
  void pump() override {
    while (head_ < pool_.size()) {
      std::uint32_t q = 0;
      const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(pool_.size() - head_, host_.capacity()));
      const std::uint32_t wrote = host_.try_enqueue(pool_.data() + head_, n, q);
      if (wrote == 0) return;  // every queue still busy: the next pump
      rt_.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(q));
      rt_.host_record(EventKind::QueueLevel, wrote, static_cast<std::uint16_t>(q));
      head_ += wrote;
      published_ += wrote;
    }
    pool_.clear();  // all of it in the queues: start the vector over
    head_ = 0;
  }

 private:
  Runtime& rt_;
  TaskQueueHost<Publisher>& host_;
  std::vector<Task> pool_;  // [head_, size) not yet in a queue
  std::size_t head_ = 0;
  std::uint32_t refill_;
  std::function<std::string()> state_;  // for the watchdog's message
  std::uint64_t published_ = 0;         // tasks this rank put into its queues
};

// Chen et al.: persistent workers, host-fed queues, HALT tasks.
template <class Body>
ExecOutput run_task_queue(const ExecPlan& plan, const Body& body) {
  // Per task: a queue level, begin, end, and at most one idle spell before it. (A distributed
  // run's other ranks start with no tasks: they are sized for the run's.)
  Runtime rt(plan, 4 * std::max<std::uint64_t>(plan.tasks.size(), plan.distribution ? plan.expected_tasks : 0) + 16);
  const policies::TaskQueueShape shape = policies::task_queue_shape(plan.options, false, plan.tasks.size(), 1);
  const std::uint32_t num_queues = shape.queues;
  const std::uint32_t capacity = shape.capacity;
  std::vector<Task> slots(static_cast<std::size_t>(num_queues) * capacity);
  std::vector<TaskQueueCounters> counters(num_queues);
  std::vector<QueueWord> host_consumed(num_queues);
  const TaskQueueRef queues{slots.data(), counters.data(), host_consumed.data(), num_queues, capacity};

  rt.start([&](std::uint32_t rank) {
    WorkerSlot& slot = rt.slot(rank);
    const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(), rt.stop_flag());
    slot.start_ns = ctx.now_ns();
    ctx.record(EventKind::WorkerStart, rank, trace::kUnknownSm);
    IdleTracker idle;
    std::uint32_t cursor = rank % num_queues;
    Task task;
    while (!rt.stop_requested()) {
      const DequeueResult r = queues.try_dequeue(cursor, task);
      if (!r.got) {
        idle.failed_attempt(ctx, static_cast<std::uint16_t>(cursor));
        std::this_thread::yield();  // the producer may share our core
        continue;
      }
      idle.idle = false;
      ctx.record(EventKind::QueueLevel, static_cast<std::uint32_t>(r.remaining), static_cast<std::uint16_t>(r.queue));
      if (task.is_halt()) {
        ctx.record(EventKind::Halt);
        break;
      }
      run_task(rt, ctx, slot, body, task);
    }
    slot.end_ns = ctx.now_ns();
    ctx.record(EventKind::WorkerEnd, idle.failed);
  });

  // The host producer (Algorithm 2), on this thread and its own trace track.
  TaskQueueHost<CpuQueuePublisher> host(CpuQueuePublisher{queues}, num_queues, capacity);
  auto queue_state = [&] {
    std::string s = "queues h_consumed/h_written:";
    for (std::uint32_t q = 0; q < num_queues; ++q) {
      s += " " + std::to_string(system_atomic_ref<std::uint32_t>(host_consumed[q].value).load(mo::relaxed)) + "/" +
           std::to_string(device_atomic_ref<std::uint32_t>(counters[q].written.value).load(mo::relaxed));
    }
    return s;
  };
  auto enqueue_all = [&](const Task* tasks, std::size_t n) {
    std::uint32_t busy_in_a_row = 0;
    while (n > 0) {
      std::uint32_t q = 0;
      const std::uint32_t wrote = host.try_enqueue(tasks, static_cast<std::uint32_t>(std::min<std::size_t>(n, capacity)), q);
      if (wrote == 0) {
        if (++busy_in_a_row >= num_queues) {  // every queue busy: let the workers run
          busy_in_a_row = 0;
          std::this_thread::yield();
          rt.tick(queue_state);
        }
        continue;
      }
      busy_in_a_row = 0;
      rt.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(q));
      rt.host_record(EventKind::QueueLevel, wrote, static_cast<std::uint16_t>(q));
      tasks += wrote;
      n -= wrote;
    }
  };
  try {
    if (plan.distribution != nullptr) {
      // Across ranks: the pool is fed and drained by the balancer until no rank holds a task.
      TaskPoolPort<CpuQueuePublisher> pool(rt, host, plan.tasks, num_queues * capacity, queue_state);
      plan.distribution->balance(pool);
    } else {
      enqueue_all(plan.tasks.data(), plan.tasks.size());
    }
    while (!host.all_empty()) {  // "check whether all queues are empty" before the HALTs
      std::this_thread::yield();
      rt.tick(queue_state);
    }
    const std::vector<Task> halts(rt.workers(), Task::halt());
    enqueue_all(halts.data(), halts.size());
    rt.wait_workers(queue_state);  // a task that never ends must still trip the watchdog
  } catch (...) {
    // Ask the workers to stop first: after an error from the balancer (a distributed run) they
    // would wait for tasks or HALTs that never come, and the join would never return.
    rt.fail("the host producer stopped");
    rt.join();
    throw;
  }
  return rt.finish("host producer", plan.distribution != nullptr ? rt.tasks_done() : plan.tasks.size());
}

}  // namespace detail

struct TaskQueueDriver {
  static const PolicyDescriptor& descriptor() { return policies::task_queue(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    if (plan.options.queues > TaskQueueHost<detail::CpuQueuePublisher>::kMaxQueues) throw ConfigError("at most 64 queues");
    return detail::run_task_queue(plan, body);
  }
};

}  // namespace gpulb::cpu
