// The work-stealing policy on the CPU backend: the shared state and steps of gpulb/work_stealing.hpp
// (the deques, queues, pending count and termination test the CUDA kernel's thread 0 uses)
// driven by one host thread per worker, and the host inserting tasks into the work-sharing queue
// while they run (Grossman's insert_task).
//
// Two departures from the GPU's loop, for a CPU thread that runs a UTS node in ~100 ns (where an
// atomic RMW is ~20 cycles and a contended line ~100 ns); docs/papers.md gives the measurements:
//   - a private stack below the deque (the official UTS's uts_shm splits each thread's stack
//     the same way): a task's children go there, counted in `pending` first, and the worker runs
//     its youngest task from there without touching its deque. It releases its oldest
//     steal_chunk tasks to the deque whenever it holds 2 x steal_chunk, and half of them whenever
//     its deque is empty and it holds two or more, so thieves see work as soon as there is some.
//     The deque stays ABP's, ordered oldest at the top; private tasks are younger than all of it.
//   - chunked steals: a thief takes half the victim's deque, at most steal_chunk tasks (20, as
//     uts_shm), with one CAS (work_stealing_deque.hpp, "Chunked steals"); it runs the youngest
//     and keeps the rest on its private stack. steal_chunk=1 gives ABP's one-task steals and
//     keeps a single private task.
// Children get ids from per-worker blocks of the run-wide counter where the scenario indexes no
// table by id (WorkerIds, cpu/worker.hpp).
//
// Trace: TaskBegin/TaskEnd; SpawnBatch (arg: first child, aux: children); DequeLevel (aux: owner, arg: tasks in its
// deque) after each pop from and release onto a worker's own deque (private-stack moves are not
// traced); Steal (arg: victim) for every
// successful steal; StealFailed (arg: victim) and DequeueFailed once at the start of each idle
// spell (every failed attempt is counted in WorkerEnd's arg); QueueLevel for the sharing queue
// (aux 0) and the overflow queue (aux 1). Host track: HostEnqueue + QueueLevel per insert batch.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/policies/work_stealing.hpp"
#include "gpulb/work_stealing.hpp"

namespace gpulb::cpu {
namespace detail {

struct alignas(kHotLine) WsWorkerStats {
  std::uint64_t steals = 0;
  std::uint64_t steals_failed = 0;
  std::uint64_t spilled = 0;
  std::uint32_t peak_private = 0;  // the most tasks its private stack held
};

// Host inserts into the sharing queue; blocks (ticking the watchdog) while it is full.
class CpuSharingInserter final : public HostInserter {
 public:
  CpuSharingInserter(const WorkStealingRef& ws, Runtime& rt, std::function<std::string()> state)
      : ws_(ws), rt_(rt), state_(std::move(state)) {}
  void insert(std::span<const Task> tasks) override {
    const Task* p = tasks.data();
    std::size_t n = tasks.size();
    while (n > 0) {
      const auto chunk = static_cast<std::uint32_t>(std::min<std::size_t>(n, 1u << 20));
      const std::uint32_t wrote = ws_.accept_host_tasks(p, chunk);
      if (wrote == 0) {
        std::this_thread::yield();  // full: the workers drain it
        rt_.tick(state_);
        continue;
      }
      rt_.host_record(EventKind::HostEnqueue, wrote, kSharingQueueId);
      rt_.host_record(EventKind::QueueLevel, ws_.sharing.size_hint(), kSharingQueueId);
      p += wrote;
      n -= wrote;
    }
  }

  // For another rank (a distributed run): queued tasks from the sharing and overflow queues, then
  // chunks off the top of the workers' deques, the oldest tasks, as a thief takes them (the host
  // is one more thief: pop_top_chunk's CAS makes that safe). Tasks on a worker's private stack
  // stay; publish_private keeps the deque fed while a worker holds two or more.
  // At most half of what is queued leaves, rounded down: a rank that gave all its queued tasks
  // away went idle at once and stole them back, and on an oversubscribed host (workers slower to
  // be scheduled than the host threads answering) chunks bounced between two ranks without
  // running (UTS T1 over 2 ranks: 26 million tasks moved for 4 million nodes, 30 s instead of 0.3).
  std::uint32_t take(std::span<Task> out) override {
    std::uint64_t queued = std::uint64_t{ws_.sharing.size_hint()} + ws_.overflow.size_hint();
    for (std::uint32_t w = 0; w < ws_.workers; ++w) queued += ws_.deques.deque(w).size_hint();
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(out.size(), queued / 2));
    std::uint32_t got = 0;
    while (got < n && ws_.sharing.try_pop(out[got])) ++got;
    while (got < n && ws_.overflow.try_pop(out[got])) ++got;
    for (std::uint32_t w = 0; w < ws_.workers && got < n; ++w) {
      StealResult res = StealResult::Empty;
      got += ws_.deques.deque(w).pop_top_chunk(out.data() + got, n - got, res);
    }
    // They were counted in `pending` when published; they leave the run now (acq_rel as every
    // RMW on pending: see gpulb/work_stealing.hpp).
    if (got > 0) device_atomic_ref<std::int64_t>(ws_.ctl->pending).fetch_sub(got, mo::acq_rel);
    return got;
  }
  // pending counts every published and running task (work_stealing.hpp); workers' unflushed
  // credits only make it larger, so 0 means idle.
  bool idle() const override {
    return device_atomic_ref<std::int64_t>(ws_.ctl->pending).load(mo::acquire) == 0;
  }
  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override {
    rt_.host_record(kind, arg, aux);
  }
  // A worker failed, or (a distributed run's balancer calls this between messages) this rank's
  // tasks stopped finishing while it had some: the local watchdog (Runtime::watch).
  void check() override {
    rt_.rethrow_failure();
    rt_.watch(!idle(), state_);
  }

 private:
  WorkStealingRef ws_;
  Runtime& rt_;
  std::function<std::string()> state_;
};

// Everything the workers and the host share during one run.
struct WsRun {
  explicit WsRun(const ExecPlan& p)
      : plan(p),
        o(p.policy_options<policies::WorkStealingOptions>()),
        // Per task: begin, end, a deque level, a spawn and a steal at most, plus idle spells.
        rt(p, 5 * std::max<std::uint64_t>(p.expected_tasks, p.tasks.size()) + 16),
        deques(rt.workers(), o.deque_capacity),
        sharing(o.sharing_capacity),
        overflow(o.overflow_capacity),
        stats(rt.workers()),
        ws{deques.ref(), sharing.ref(), overflow.ref(),
           &control,     rt.workers(),  o.deque_overflow == DequeOverflow::Spill},
        choice(o.victim) {
    ids.next = first_spawn_id(p);
  }

  // For the watchdog's message.
  std::string state() const {
    return "pending " +
           std::to_string(device_atomic_ref<std::int64_t>(control.pending).load(mo::relaxed)) +
           ", sharing queue " + std::to_string(ws.sharing.size_hint()) + ", overflow queue " +
           std::to_string(ws.overflow.size_hint());
  }

  const ExecPlan& plan;
  const policies::WorkStealingOptions& o;
  Runtime rt;
  HostWorkStealingDeques deques;
  HostSharingQueue sharing;
  HostSharingQueue overflow;
  mutable WorkStealingControl control;
  TaskIdCounter ids;
  std::vector<WsWorkerStats> stats;
  WorkStealingRef ws;
  VictimChoice choice;
};

// A worker's private stack: the bottom end of its deque, which thieves cannot reach yet (see the
// top). [0, size) holds tasks oldest first, all younger than any task in the worker's deque; the
// spawn buffer of the running task is the free space above them, so children are written once.
struct PrivateStack {
  PrivateStack(std::uint32_t chunk, std::uint32_t spawn_capacity)
      : slots(2 * std::size_t{chunk} + std::max(spawn_capacity, chunk)),
        spawn_capacity(spawn_capacity) {}
  std::vector<Task> slots;
  std::uint32_t spawn_capacity;
  std::uint32_t size = 0;
  std::uint32_t peak = 0;
};

// Grossman's lookup (WorkStealingRef::find_task's order) for a worker whose private stack is
// empty, with chunked steals (work_stealing_deque.hpp): own deque, the sharing queue, the overflow
// queue, then one steal of up to steal_chunk tasks into the private stack. The thief runs the
// youngest of its loot; the rest stay on its private stack, and publish_private hands them on.
inline FindResult find_task_chunked(WsRun& r, std::uint32_t rank, VictimPicker& picker,
                                    PrivateStack& mine, Task& out) {
  FindResult f;
  const WorkStealingRef& ws = r.ws;
  const std::uint32_t chunk = r.o.steal_chunk;
  if (ws.deques.deque(rank).pop_bottom_chunked(out, f.deque_level, chunk)) {
    f.source = TaskSource::Own;
    return f;
  }
  if (!ws.sharing.empty() && ws.sharing.try_pop(out)) {
    f.source = TaskSource::Sharing;
    return f;
  }
  if (!ws.overflow.empty() && ws.overflow.try_pop(out)) {
    f.source = TaskSource::Overflow;
    return f;
  }
  if (ws.workers < 2) return f;
  f.victim = picker.next(rank, ws.workers);
  StealResult res = StealResult::Empty;
  // Already counted in `pending` (the victim published them): only their place changes.
  const std::uint32_t k = ws.deques.deque(f.victim).pop_top_chunk(mine.slots.data(), chunk, res);
  if (k == 0) {
    f.steal_failed = true;
    return f;
  }
  f.source = TaskSource::Stolen;
  out = mine.slots[k - 1];
  mine.size = k - 1;
  return f;
}

// Moves the oldest m private tasks to the bottom of the worker's deque, where thieves see them
// (what does not fit spills to the overflow queue); false (the run failed) when neither had room.
inline bool release_private(WsRun& r, const WorkerContext& ctx, std::uint32_t rank,
                            PrivateStack& mine, std::uint32_t m) {
  const WorkStealingRef& ws = r.ws;
  Task* const p = mine.slots.data();
  std::uint32_t level = 0;
  const std::uint32_t pushed = ws.deques.deque(rank).push_bottom(p, m, level);
  if (pushed > 0) ctx.record(EventKind::DequeLevel, level, static_cast<std::uint16_t>(rank));
  if (pushed < m) {
    const std::uint32_t rest = m - pushed;
    const std::uint32_t spilled = ws.spill ? ws.overflow.try_push(p + pushed, rest) : 0;
    r.stats[rank].spilled += spilled;
    if (spilled > 0) ctx.record(EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId);
    if (spilled < rest) {
      r.rt.fail(policies::work_stealing_full_message("worker", rank, r.o));
      return false;
    }
  }
  std::copy(p + m, p + mine.size, p);
  mine.size -= m;
  return true;
}

// After a task's children joined the private stack: keep it below 2 x steal_chunk by releasing
// its oldest chunk (the official UTS's rule), and keep the deque from running dry while the stack
// holds two tasks or more (release half), so that a thief finds work as soon as there is some.
inline bool publish_private(WsRun& r, const WorkerContext& ctx, std::uint32_t rank,
                            PrivateStack& mine) {
  const std::uint32_t chunk = r.o.steal_chunk;
  while (mine.size >= 2 * chunk) {
    if (!release_private(r, ctx, rank, mine, chunk)) return false;
  }
  if (mine.size >= 2 && r.ws.deques.deque(rank).size_hint() == 0)
    return release_private(r, ctx, rank, mine, mine.size / 2);
  return true;
}

// One worker: take a task (its private stack, else the lookup above), run it with its children
// written onto the private stack, count them and publish some; when idle, flush the pending
// credit and test for termination.
template <class Body>
void work_stealing_worker(WsRun& r, const Body& body, std::uint32_t rank) {
  WorkerSlot& slot = r.rt.slot(rank);
  SpawnBuffer kids{};  // its slots: the private stack's free space, set before each task
  WsWorkerStats& st = r.stats[rank];
  const WorkerContext ctx(rank, r.plan.block_size, r.rt.worker_segment(rank), r.rt.origin_ns(),
                          r.rt.stop_flag(), &kids);
  worker_begin(ctx, slot, rank);
  VictimPicker picker = VictimPicker::make(r.choice, rank);
  IdleTracker idle;
  PendingCredit credit{};
  WorkerIds ids = WorkerIds::for_plan(&r.ids, r.plan);
  PrivateStack mine(r.o.steal_chunk, r.o.spawn_capacity);
  Task task;
  while (!r.rt.stop_requested()) {
    if (mine.size > 0) {
      task = mine.slots[--mine.size];
    } else {
      const FindResult f = find_task_chunked(r, rank, picker, mine, task);
      if (f.source == TaskSource::None) {
        if (f.steal_failed) {
          ++st.steals_failed;
          if (!idle.idle) ctx.record(EventKind::StealFailed, f.victim);
        }
        idle.failed_attempt(ctx, kSharingQueueId);
        r.ws.flush_pending(credit);
        if (r.ws.terminated()) break;
        std::this_thread::yield();  // workers may outnumber cores (CI: 2)
        continue;
      }
      idle.idle = false;
      if (record_found(ctx, r.ws, f, static_cast<std::uint16_t>(rank))) ++st.steals;
    }
    kids.slots = mine.slots.data() + mine.size;  // the children land on the private stack
    kids.capacity = mine.spawn_capacity;
    if (!run_spawning_task(r.rt, ctx, slot, body, task, kids, ids)) break;
    if (kids.count == 0) {
      r.ws.task_done(credit);
      continue;
    }
    r.ws.count_children(kids.count, credit);  // before any of them can be seen by a thief
    mine.size += kids.count;
    mine.peak = std::max(mine.peak, mine.size);
    if (!publish_private(r, ctx, rank, mine)) break;
  }
  st.peak_private = mine.peak;
  worker_end(ctx, slot, idle.failed);
}

// The host's side (Grossman's insert_task): the initial tasks through the sharing queue, the
// plan's host feed, then host_finish and the wait for the workers, ticking the watchdog.
inline void work_stealing_host(WsRun& r) {
  const auto state = [&r] { return r.state(); };
  CpuSharingInserter inserter(r.ws, r.rt, state);
  inserter.insert(r.plan.tasks);
  if (r.plan.host_feed) r.plan.host_feed(inserter);
  if (r.plan.distribution != nullptr) r.plan.distribution->balance(inserter);
  r.ws.host_finish();
  r.rt.wait_workers(state);
}

// Steals, spills, deque peaks and task slots (Mohan & Gopalan, Fig. 7: deque memory is per worker).
inline void work_stealing_metrics(WsRun& r, ExecOutput& out) {
  std::uint32_t peak_deque = 0;
  for (std::uint32_t w = 0; w < r.rt.workers(); ++w) {
    peak_deque = std::max(peak_deque, r.deques.peak(w));
    out.metrics["steals"] += r.stats[w].steals;
    out.metrics["steals_failed"] += r.stats[w].steals_failed;
    out.metrics["spilled"] += r.stats[w].spilled;
    out.tasks_spawned += r.rt.slot(w).tasks_spawned.load(std::memory_order_relaxed);
  }
  out.tasks_run = r.rt.tasks_done();
  out.metrics["peak_deque_level"] = peak_deque;
  std::uint64_t peak_private = 0;
  for (std::uint32_t w = 0; w < r.rt.workers(); ++w)
    peak_private = std::max<std::uint64_t>(peak_private, r.stats[w].peak_private);
  out.metrics["peak_private"] = peak_private;
  out.metrics["peak_task_slots"] = std::uint64_t{r.rt.workers()} * (peak_deque + peak_private) +
                                   r.overflow.peak() + r.sharing.peak();
  if (out.metrics["spilled"] > 0) {
    out.notes.push_back(
        std::to_string(out.metrics["spilled"]) +
        " spawned tasks did not fit a deque and went through the overflow queue (deque_capacity=" +
        std::to_string(r.o.deque_capacity) + ")");
  }
}

template <class Body>
ExecOutput run_work_stealing(const ExecPlan& plan, const Body& body) {
  const TaskPer task_per = plan.policy_options<policies::WorkStealingOptions>().task_per;
  if (task_per != TaskPer::Block) {
    throw ConfigError("work-stealing: task_per=" + choice_text(task_per) +
                      " is the cuda backend's (a task per thread of a block); a cpu worker is one "
                      "thread already: use task_per=block");
  }
  WsRun r(plan);
  r.rt.start([&](std::uint32_t rank) { work_stealing_worker(r, body, rank); });
  try {
    work_stealing_host(r);
  } catch (...) {
    r.rt.fail("the host side of the run stopped");
    r.rt.join();
    throw;
  }
  ExecOutput out = r.rt.finish("host (sharing queue)", 0);
  work_stealing_metrics(r, out);
  return out;
}

}  // namespace detail

struct WorkStealingDriver {
  static const PolicyDescriptor& descriptor() { return policies::work_stealing(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    return detail::run_work_stealing(plan, body);
  }
};

}  // namespace gpulb::cpu
