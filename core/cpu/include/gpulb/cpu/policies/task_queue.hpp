// The task-queue policy on the CPU backend: Chen et al. 2010, Algorithms 2 and 3 (the queue code
// of gpulb/task_queue.hpp, the same source the CUDA kernel runs) with one host thread per worker
// and the producer on the calling thread.
//
// Spawned tasks (a DEPARTURE from Chen et al., whose tasks never spawn; docs/papers.md): where the
// scenario spawns (ExecPlan::spawns), a worker runs each task with a spawn buffer, gives the
// children ids from its own block of the run's counter (WorkerIds, as work-stealing does), and
// writes them into its SpawnOutbox, a ring only it writes and only the host thread reads: no lock
// and no shared RMW per task. The host thread drains the outboxes into its task pool and feeds the
// queues from the pool's young end (depth first, so the pool stays near a tree's depth x fan-out
// instead of its width); the run ends when the pool is empty, every task put into a queue has
// retired (run, and its children in an outbox) and no outbox holds a child (TaskPoolPort::idle).
//
// Trace: workers QueueLevel (aux: queue, arg: tasks left) per dequeue, DequeueFailed once per idle
// spell, SpawnBatch (arg: first child, aux: children), Halt; host track HostEnqueue + QueueLevel per batch, PoolLevel.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <functional>
#include <memory>
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
    return system_atomic_ref<std::uint32_t>(ref.host_consumed[q].value).load(mo::acquire) ==
           h_written;
  }
  void publish(std::uint32_t q, const Task* tasks, std::uint32_t n,
               std::uint32_t new_written) const {
    std::copy(tasks, tasks + n, ref.tasks + static_cast<std::size_t>(q) * ref.capacity);
    // d_written_gm before d_n_gm (see the DEPARTURE note in task_queue.hpp); release orders the
    // slot writes before both. On the CPU this release is the paper's host_write_fence().
    device_atomic_ref<std::uint32_t>(ref.counters[q].written.value).store(new_written, mo::release);
    device_atomic_ref<std::int32_t>(ref.counters[q].n.value)
        .store(static_cast<std::int32_t>(n), mo::release);
  }
};

// A worker's spawned children on their way to the host pool: a single-producer (the worker),
// single-consumer (the host thread) ring, as Lamport's queue. The worker writes the slots, then
// `tail` (release: the host that reads tail sees the slots); the host copies them out, then
// writes `head` (release: its reads of the slots happen before the worker reuses them). After a
// task's children are in, the worker bumps `retired` (release, after tail): a host that reads
// `retired` (acquire) and then `tail` sees every child of every task it counts as retired, which is
// what makes TaskPoolPort::idle exact. Worker and host fields sit on separate lines; each side
// keeps a private copy of the other's index and rereads it only when the ring looks full (worker)
// or on a drain (host).
class alignas(kHotLine) SpawnOutbox {
 public:
  // The worker's side. Waits (yielding) while the ring lacks room for n; false where the run was
  // stopped meanwhile (a failure elsewhere: the host may never drain again).
  bool push(const Task* kids, std::uint32_t n, const std::atomic<bool>& stop) {
    while (capacity_ - (tail_mine_ - head_seen_) < n) {
      head_seen_ = head_.load(std::memory_order_acquire);
      if (capacity_ - (tail_mine_ - head_seen_) >= n) break;
      if (stop.load(std::memory_order_relaxed)) return false;
      std::this_thread::yield();  // the host thread drains it
    }
    for (std::uint32_t i = 0; i < n; ++i) slots_[(tail_mine_ + i) & mask_] = kids[i];
    tail_mine_ += n;
    tail_.store(tail_mine_, std::memory_order_release);
    return true;
  }
  void retire() { retired_.store(++retired_mine_, std::memory_order_release); }

  // The host's side.
  std::uint64_t retired() const { return retired_.load(std::memory_order_acquire); }
  bool has_unread() const { return tail_.load(std::memory_order_acquire) != head_mine_; }
  // Appends every child in the ring to `pool`; returns how many.
  std::uint64_t drain(std::vector<Task>& pool) {
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    for (std::uint64_t i = head_mine_; i != tail; ++i) pool.push_back(slots_[i & mask_]);
    const std::uint64_t n = tail - head_mine_;
    head_mine_ = tail;
    if (n > 0) head_.store(tail, std::memory_order_release);
    return n;
  }

  void init(Task* slots, std::uint32_t capacity) {
    slots_ = slots;
    capacity_ = capacity;
    mask_ = capacity - 1;
  }

 private:
  // Read by both, written once before the workers start.
  Task* slots_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t mask_ = 0;
  // The worker's line.
  alignas(kHotLine) std::atomic<std::uint64_t> tail_{0};
  std::atomic<std::uint64_t> retired_{0};
  std::uint64_t tail_mine_ = 0, head_seen_ = 0, retired_mine_ = 0;
  // The host's line.
  alignas(kHotLine) std::atomic<std::uint64_t> head_{0};
  std::uint64_t head_mine_ = 0;
};

// Every worker's outbox and their slots: at least 16 Ki tasks a worker (1 MiB), and room for
// two tasks' worth of children at spawn_capacity, so a worker rarely waits for the host.
class SpawnOutboxes {
 public:
  SpawnOutboxes(std::uint32_t workers, std::uint32_t spawn_capacity)
      : capacity_(std::bit_ceil(std::max(std::uint32_t{1} << 14, 2 * spawn_capacity))),
        slots_(std::size_t{workers} * capacity_),
        boxes_(workers) {
    for (std::uint32_t w = 0; w < workers; ++w)
      boxes_[w].init(slots_.data() + std::size_t{w} * capacity_, capacity_);
  }
  SpawnOutbox& operator[](std::uint32_t w) { return boxes_[w]; }
  const SpawnOutbox& operator[](std::uint32_t w) const { return boxes_[w]; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(boxes_.size()); }

 private:
  std::uint32_t capacity_;
  std::vector<Task> slots_;
  std::vector<SpawnOutbox> boxes_;
};

// The host task pool (Chen et al.'s pool): the tasks this rank holds but has not yet put into its
// queues. The host thread calls pump(), which moves pool tasks into whichever queue is ready
// (Algorithm 2, without blocking) and, where the scenario spawns, first collects the workers'
// children from their outboxes. A distributed run's balancer (Distribution::balance) calls pump()
// between messages, lends from the end the pool would reach last to a rank that asks, and adds
// what it gets from others; a spawning run on one host calls pump() until idle(). Tasks in the
// queues stay out of it: they are the workers' already.
//
// Order: without spawning, first in first out (the scenario's order, as Chen et al.); with
// spawning, the youngest first (children before their parents' siblings: depth first, so that
// the pool holds about a tree's depth x fan-out, not its widest level), and lent oldest first
// (the largest subtrees, as a work-stealing victim gives).
template <class Publisher>
class TaskPoolPort final : public HostInserter {
 public:
  // `outboxes`: the workers' children (null where the scenario spawns nothing).
  TaskPoolPort(Runtime& rt, TaskQueueHost<Publisher>& host, std::span<const Task> initial,
               std::uint32_t refill, std::function<std::string()> state,
               SpawnOutboxes* outboxes = nullptr)
      : rt_(rt),
        host_(host),
        pool_(initial.begin(), initial.end()),
        refill_(refill),
        state_(std::move(state)),
        outboxes_(outboxes) {
    peak_ = pool_.size();
  }

  void insert(std::span<const Task> tasks) override {
    pool_.insert(pool_.end(), tasks.begin(), tasks.end());
    note_level();
  }
  // At most half the pool, from the end this rank would reach last.
  std::uint32_t take(std::span<Task> out) override {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(out.size(), held() / 2));
    if (n == 0) return 0;
    if (lifo()) {
      std::copy(pool_.begin() + static_cast<std::ptrdiff_t>(head_),
                pool_.begin() + static_cast<std::ptrdiff_t>(head_ + n), out.begin());
      head_ += n;
    } else {
      std::copy(pool_.end() - n, pool_.end(), out.begin());
      pool_.resize(pool_.size() - n);
    }
    rt_.host_record(EventKind::PoolLevel, static_cast<std::uint32_t>(held()));
    return n;
  }
  // Nothing left in the pool, and every task this rank put into its queues has run (and, where the
  // scenario spawns, has its children in an outbox, none of which holds one). An empty pool alone
  // would do for Safra without spawning (such a rank can never lend again), but then a task that
  // hangs after the last chunk moved would be waited for outside the balancer, where the watchdog
  // cannot end the job without joining that task's worker.
  bool idle() const override {
    if (held() != 0) return false;
    if (outboxes_ == nullptr) return published_ == rt_.tasks_done();
    // retired before the tails (SpawnOutbox): if every published task has retired, no worker runs
    // a task, and every child they made is behind a tail read below.
    std::uint64_t retired = 0;
    for (std::uint32_t w = 0; w < outboxes_->size(); ++w) retired += (*outboxes_)[w].retired();
    if (retired != published_) return false;
    for (std::uint32_t w = 0; w < outboxes_->size(); ++w) {
      if ((*outboxes_)[w].has_unread()) return false;
    }
    return true;
  }
  bool hungry() const override { return held() < refill_; }
  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override {
    rt_.host_record(kind, arg, aux);
  }
  // A worker failed, or this rank's tasks stopped finishing while it had some (in its pool, or in
  // its queues and not yet done): the local watchdog (Runtime::watch).
  void check() override {
    rt_.rethrow_failure();
    rt_.watch(!idle(), state_);
  }
  void pump() override {
    if (outboxes_ != nullptr) {
      std::uint64_t got = 0;
      for (std::uint32_t w = 0; w < outboxes_->size(); ++w) got += (*outboxes_)[w].drain(pool_);
      if (got > 0) peak_ = std::max<std::uint64_t>(peak_, held());
    }
    std::uint32_t busy = 0;  // queues found busy in a row
    while (held() > 0 && busy < host_.num_queues()) {
      std::uint32_t q = 0;
      const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(held(), host_.capacity()));
      const Task* from = lifo() ? pool_.data() + pool_.size() - n : pool_.data() + head_;
      const std::uint32_t wrote = host_.try_enqueue(from, n, q);
      if (wrote == 0) {
        ++busy;
        continue;
      }
      busy = 0;
      rt_.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(q));
      rt_.host_record(EventKind::QueueLevel, wrote, static_cast<std::uint16_t>(q));
      if (lifo()) {
        pool_.resize(pool_.size() - wrote);
      } else {
        head_ += wrote;
      }
      published_ += wrote;
      if (outboxes_ != nullptr)
        rt_.host_record(EventKind::PoolLevel, static_cast<std::uint32_t>(held()));
    }
    if (held() == 0) {  // all of it in the queues: start the vector over
      pool_.clear();
      head_ = 0;
    } else if (head_ > 4096 && head_ > pool_.size() / 2) {  // lent from the front: drop the gap
      pool_.erase(pool_.begin(), pool_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  std::uint64_t peak() const { return peak_; }

 private:
  bool lifo() const { return outboxes_ != nullptr; }
  std::size_t held() const { return pool_.size() - head_; }
  void note_level() {
    peak_ = std::max<std::uint64_t>(peak_, held());
    rt_.host_record(EventKind::PoolLevel, static_cast<std::uint32_t>(held()));
  }

  Runtime& rt_;
  TaskQueueHost<Publisher>& host_;
  std::vector<Task> pool_;  // [head_, size) not yet in a queue
  std::size_t head_ = 0;
  std::uint32_t refill_;
  std::function<std::string()> state_;  // for the watchdog's message
  SpawnOutboxes* outboxes_;
  std::uint64_t published_ = 0;  // tasks this rank put into its queues
  std::uint64_t peak_ = 0;       // the most tasks the pool held
};

// A worker's loop (Algorithm 3 and the task): dequeue until a HALT. With `outbox` (the scenario
// spawns), each task runs with a spawn buffer, its children get ids from the worker's id block and
// go into the outbox, and the task retires; without, a spawn fails the run (run_task).
template <class Body>
void task_queue_worker(Runtime& rt, const ExecPlan& plan, const Body& body,
                       const TaskQueueRef& queues, std::uint32_t rank, SpawnOutbox* outbox,
                       TaskIdCounter* id_counter) {
  WorkerSlot& slot = rt.slot(rank);
  std::vector<Task> kid_slots(
      outbox != nullptr ? plan.policy_options<policies::TaskQueueOptions>().spawn_capacity : 0);
  SpawnBuffer kids{kid_slots.data(), static_cast<std::uint32_t>(kid_slots.size()), 0};
  const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(),
                          rt.stop_flag(), outbox != nullptr ? &kids : nullptr);
  WorkerIds ids = WorkerIds::for_plan(id_counter, plan);
  worker_begin(ctx, slot, rank);
  IdleTracker idle;
  std::uint32_t cursor = rank % queues.num_queues;
  Task task;
  while (!rt.stop_requested()) {
    const DequeueResult r = queues.try_dequeue(cursor, task);
    if (!r.got) {
      idle.failed_attempt(ctx, static_cast<std::uint16_t>(cursor));
      std::this_thread::yield();  // the producer may share our core
      continue;
    }
    idle.idle = false;
    ctx.record(EventKind::QueueLevel, static_cast<std::uint32_t>(r.remaining),
               static_cast<std::uint16_t>(r.queue));
    if (task.is_halt()) {
      ctx.record(EventKind::Halt);
      break;
    }
    if (outbox == nullptr) {
      run_task(rt, ctx, slot, body, task);
      continue;
    }
    if (!run_spawning_task(rt, ctx, slot, body, task, kids, ids)) break;
    if (kids.count > 0 && !outbox->push(kids.slots, kids.count, *rt.stop_flag())) break;
    outbox->retire();
  }
  worker_end(ctx, slot, idle.failed);
}

// The host producer (Algorithm 2), on the run's host thread and its own trace track: the tasks,
// through the pool where children come back or ranks balance, then a HALT per worker.
class CpuTaskQueueProducer {
 public:
  CpuTaskQueueProducer(Runtime& rt, const ExecPlan& plan, const TaskQueueRef& queues,
                       SpawnOutboxes* outboxes)
      : rt_(rt),
        plan_(plan),
        queues_(queues),
        outboxes_(outboxes),
        host_(CpuQueuePublisher{queues}, queues.num_queues, queues.capacity) {}

  // Feeds every task and the HALTs, and waits for the workers; the pool's peak (0 without a pool).
  std::uint64_t run() {
    std::uint64_t peak_pool = 0;
    if (plan_.distribution != nullptr || plan_.spawns) {
      peak_pool = feed_pool();
    } else {
      enqueue_all(plan_.tasks.data(), plan_.tasks.size());
    }
    while (!host_.all_empty()) {  // "check whether all queues are empty" before the HALTs
      std::this_thread::yield();
      rt_.tick([this] { return state(); });
    }
    const std::vector<Task> halts(rt_.workers(), Task::halt());
    enqueue_all(halts.data(), halts.size());
    rt_.wait_workers(
        [this] { return state(); });  // a task that never ends must still trip the watchdog
    return peak_pool;
  }

 private:
  std::string state() const {
    std::string s = "queues h_consumed/h_written:";
    for (std::uint32_t q = 0; q < queues_.num_queues; ++q) {
      const std::uint32_t consumed =
          system_atomic_ref<std::uint32_t>(queues_.host_consumed[q].value).load(mo::relaxed);
      const std::uint32_t written =
          device_atomic_ref<std::uint32_t>(queues_.counters[q].written.value).load(mo::relaxed);
      s += ' ';
      s += std::to_string(consumed);
      s += '/';
      s += std::to_string(written);
    }
    return s;
  }

  void enqueue_all(const Task* tasks, std::size_t n) {
    std::uint32_t busy_in_a_row = 0;
    while (n > 0) {
      std::uint32_t q = 0;
      const std::uint32_t wrote = host_.try_enqueue(
          tasks, static_cast<std::uint32_t>(std::min<std::size_t>(n, queues_.capacity)), q);
      if (wrote == 0) {
        if (++busy_in_a_row >= queues_.num_queues) {  // every queue busy: let the workers run
          busy_in_a_row = 0;
          std::this_thread::yield();
          rt_.tick([this] { return state(); });
        }
        continue;
      }
      busy_in_a_row = 0;
      rt_.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(q));
      rt_.host_record(EventKind::QueueLevel, wrote, static_cast<std::uint16_t>(q));
      tasks += wrote;
      n -= wrote;
    }
  }

  // The pool, fed and drained by the balancer until no rank holds a task (across ranks), or fed
  // from the workers' children until none is left anywhere (spawning, on one host).
  std::uint64_t feed_pool() {
    const std::function<std::string()> queue_state = [this] { return state(); };
    TaskPoolPort<CpuQueuePublisher> pool(
        rt_, host_, plan_.tasks, queues_.num_queues * queues_.capacity, queue_state, outboxes_);
    if (plan_.distribution != nullptr) {
      plan_.distribution->balance(pool);
    } else {
      for (;;) {
        pool.pump();
        if (pool.idle()) break;
        std::this_thread::yield();  // the workers may share our core
        rt_.tick(queue_state);
      }
    }
    return pool.peak();
  }

  Runtime& rt_;
  const ExecPlan& plan_;
  TaskQueueRef queues_;
  SpawnOutboxes* outboxes_;
  TaskQueueHost<CpuQueuePublisher> host_;
};

// Chen et al.: persistent workers, host-fed queues, HALT tasks.
template <class Body>
ExecOutput run_task_queue(const ExecPlan& plan, const Body& body) {
  // Per task: a queue level, begin, end, a spawn and at most one idle spell before it. (A
  // distributed run's other ranks start with no tasks: they are sized for the run's.)
  const bool sized_by_expected = plan.distribution != nullptr || plan.spawns;
  Runtime rt(plan, (plan.spawns ? 5 : 4) *
                           std::max<std::uint64_t>(plan.tasks.size(),
                                                   sized_by_expected ? plan.expected_tasks : 0) +
                       16);
  const policies::TaskQueueOptions& o = plan.policy_options<policies::TaskQueueOptions>();
  const policies::TaskQueueShape shape =
      policies::task_queue_shape(o, false, plan.tasks.size(), 1, plan.spawns);
  std::vector<Task> slots(static_cast<std::size_t>(shape.queues) * shape.capacity);
  std::vector<TaskQueueCounters> counters(shape.queues);
  std::vector<QueueWord> host_consumed(shape.queues);
  const TaskQueueRef queues{slots.data(), counters.data(), host_consumed.data(), shape.queues,
                            shape.capacity};
  // Spawned children (plan.spawns): the workers' outboxes and the run's id counter.
  std::unique_ptr<SpawnOutboxes> outboxes =
      plan.spawns ? std::make_unique<SpawnOutboxes>(rt.workers(), o.spawn_capacity) : nullptr;
  TaskIdCounter id_counter;
  id_counter.next = first_spawn_id(plan);

  rt.start([&](std::uint32_t rank) {
    task_queue_worker(rt, plan, body, queues, rank, outboxes ? &(*outboxes)[rank] : nullptr,
                      &id_counter);
  });
  std::uint64_t peak_pool = 0;
  try {
    peak_pool = CpuTaskQueueProducer(rt, plan, queues, outboxes.get()).run();
  } catch (...) {
    // Ask the workers to stop first: after an error from the balancer (a distributed run) they
    // would wait for tasks or HALTs that never come, and the join would never return.
    rt.fail("the host producer stopped");
    rt.join();
    throw;
  }
  ExecOutput out =
      rt.finish("host producer",
                plan.distribution != nullptr || plan.spawns ? rt.tasks_done() : plan.tasks.size());
  if (plan.spawns) {
    for (std::uint32_t w = 0; w < rt.workers(); ++w)
      out.tasks_spawned += rt.slot(w).tasks_spawned.load(std::memory_order_relaxed);
    out.metrics["peak_pool"] = peak_pool;
    // The pool at its fullest, and the queues.
    out.metrics["peak_task_slots"] = peak_pool + std::uint64_t{shape.queues} * shape.capacity;
  }
  return out;
}

}  // namespace detail

struct TaskQueueDriver {
  static const PolicyDescriptor& descriptor() { return policies::task_queue(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    if (plan.policy_options<policies::TaskQueueOptions>().queues >
        TaskQueueHost<detail::CpuQueuePublisher>::kMaxQueues)
      throw ConfigError("at most 64 queues");
    return detail::run_task_queue(plan, body);
  }
};

}  // namespace gpulb::cpu
