// The work-stealing policy on the CPU backend: the scheduling steps of gpulb/work_stealing.hpp
// (the same source the CUDA kernel's thread 0 runs) driven by one host thread per worker, and
// the host inserting tasks into the work-sharing queue while they run (Grossman's insert_task).
//
// Trace: TaskBegin/TaskEnd; Spawn (arg: children); DequeLevel (aux: owner, arg: tasks in its
// deque) after each pop from and push onto a worker's own deque; Steal (arg: victim) for every
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
#include "gpulb/exec_plan.hpp"
#include "gpulb/policies/work_stealing.hpp"
#include "gpulb/work_stealing.hpp"

namespace gpulb::cpu {
namespace detail {

struct alignas(kHotLine) WsWorkerStats {
  std::uint64_t steals = 0;
  std::uint64_t steals_failed = 0;
  std::uint64_t spilled = 0;
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

 private:
  WorkStealingRef ws_;
  Runtime& rt_;
  std::function<std::string()> state_;
};

// Everything the workers and the host share during one run.
struct WsRun {
  explicit WsRun(const ExecPlan& p)
      : plan(p),
        // Per task: begin, end, a deque level, a spawn and a steal at most, plus idle spells.
        rt(p, 5 * std::max<std::uint64_t>(p.expected_tasks, p.tasks.size()) + 16),
        deques(rt.workers(), p.options.deque_capacity),
        sharing(p.options.sharing_capacity),
        overflow(p.options.overflow_capacity),
        limit(id_limit(p)),
        spawn(rt.workers(), p.options.spawn_capacity),
        stats(rt.workers()),
        ws{deques.ref(), sharing.ref(), overflow.ref(), &control, rt.workers(), p.options.deque_overflow == "spill"},
        choice(p.options.victim == "round-robin" ? VictimChoice::RoundRobin : VictimChoice::Random) {
    ids.next = first_spawn_id(p);
  }

  // For the watchdog's message.
  std::string state() const {
    return "pending " + std::to_string(device_atomic_ref<std::int64_t>(control.pending).load(mo::relaxed)) +
           ", sharing queue " + std::to_string(ws.sharing.size_hint()) + ", overflow queue " + std::to_string(ws.overflow.size_hint());
  }

  const ExecPlan& plan;
  Runtime rt;
  HostWorkStealingDeques deques;
  HostSharingQueue sharing;
  HostSharingQueue overflow;
  mutable WorkStealingControl control;
  TaskIdCounter ids;
  std::uint64_t limit;
  SpawnBuffers spawn;
  std::vector<WsWorkerStats> stats;
  WorkStealingRef ws;
  VictimChoice choice;
};

// Publishes a task's children (deque, else overflow) and traces where they went; false (the run
// failed with a message) when neither had room.
inline bool publish_children(WsRun& r, const WorkerContext& ctx, std::uint32_t rank, const SpawnBuffer& kids, PendingCredit& credit) {
  const auto owner = static_cast<std::uint16_t>(rank);
  const PublishResult p = r.ws.publish_children(rank, kids.slots, kids.count, credit);
  if (p.pushed > 0) ctx.record(EventKind::DequeLevel, p.deque_level, owner);
  if (p.spilled > 0) {
    r.stats[rank].spilled += p.spilled;
    ctx.record(EventKind::QueueLevel, r.ws.overflow.size_hint(), kOverflowQueueId);
  }
  if (p.failed) r.rt.fail(policies::work_stealing_full_message("worker", rank, r.plan.options));
  return !p.failed;
}

// One worker: find a task (own deque, sharing queue, overflow queue, a steal), run it, publish its
// children; when idle, flush the pending credit and test for termination.
template <class Body>
void work_stealing_worker(WsRun& r, const Body& body, std::uint32_t rank) {
  WorkerSlot& slot = r.rt.slot(rank);
  SpawnBuffer& kids = *r.spawn.get(rank);
  WsWorkerStats& st = r.stats[rank];
  const WorkerContext ctx(rank, r.plan.block_size, r.rt.worker_segment(rank), r.rt.origin_ns(), r.rt.stop_flag(), &kids);
  worker_begin(ctx, slot, rank);
  VictimPicker picker = VictimPicker::make(r.choice, rank);
  IdleTracker idle;
  PendingCredit credit{};
  Task task;
  while (!r.rt.stop_requested()) {
    const FindResult f = r.ws.find_task(rank, picker, task);
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
    if (!run_spawning_task(r.rt, ctx, slot, body, task, kids, &r.ids, r.limit)) break;
    if (kids.count == 0) {
      r.ws.task_done(credit);
      continue;
    }
    if (!publish_children(r, ctx, rank, kids, credit)) break;
  }
  worker_end(ctx, slot, idle.failed);
}

// The host's side (Grossman's insert_task): the initial tasks through the sharing queue, the
// plan's host feed, then host_finish and the wait for the workers, ticking the watchdog.
inline void work_stealing_host(WsRun& r) {
  const auto state = [&r] { return r.state(); };
  CpuSharingInserter inserter(r.ws, r.rt, state);
  inserter.insert(r.plan.tasks);
  if (r.plan.host_feed) r.plan.host_feed(inserter);
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
  out.metrics["peak_task_slots"] = std::uint64_t{r.rt.workers()} * peak_deque + r.overflow.peak() + r.sharing.peak();
  if (out.metrics["spilled"] > 0) {
    out.notes.push_back(std::to_string(out.metrics["spilled"]) +
                        " spawned tasks did not fit a deque and went through the overflow queue (deque_capacity=" +
                        std::to_string(r.plan.options.deque_capacity) + ")");
  }
}

template <class Body>
ExecOutput run_work_stealing(const ExecPlan& plan, const Body& body) {
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
