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

template <class Body>
ExecOutput run_work_stealing(const ExecPlan& plan, const Body& body) {
  const PolicyOptions& o = plan.options;
  const std::uint64_t expected = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  // Per task: begin, end, a deque level, a spawn and a steal at most, plus idle spells.
  Runtime rt(plan, 5 * expected + 16);
  const std::uint32_t workers = rt.workers();
  HostWorkStealingDeques deques(workers, o.deque_capacity);
  HostSharingQueue sharing(o.sharing_capacity);
  HostSharingQueue overflow(o.overflow_capacity);
  WorkStealingControl control;
  TaskIdCounter ids;
  ids.next = first_spawn_id(plan);
  const std::uint64_t limit = id_limit(plan);
  SpawnBuffers spawn(workers, o.spawn_capacity);
  std::vector<WsWorkerStats> stats(workers);
  std::atomic<std::uint32_t> finished{0};
  const bool spill = o.deque_overflow == "spill";
  const WorkStealingRef ws{deques.ref(), sharing.ref(), overflow.ref(), &control, workers, spill};
  const VictimChoice choice = o.victim == "round-robin" ? VictimChoice::RoundRobin : VictimChoice::Random;

  rt.start([&](std::uint32_t rank) {
    WorkerSlot& slot = rt.slot(rank);
    SpawnBuffer& kids = *spawn.get(rank);
    WsWorkerStats& st = stats[rank];
    const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(), rt.stop_flag(), &kids);
    worker_begin(ctx, slot, rank);
    VictimPicker picker = VictimPicker::make(choice, rank);
    IdleTracker idle;
    PendingCredit credit{};
    const auto owner = static_cast<std::uint16_t>(rank);
    Task task;
    while (!rt.stop_requested()) {
      const FindResult f = ws.find_task(rank, picker, task);
      if (f.source == TaskSource::None) {
        if (f.steal_failed) {
          ++st.steals_failed;
          if (!idle.idle) ctx.record(EventKind::StealFailed, f.victim);
        }
        idle.failed_attempt(ctx, kSharingQueueId);
        ws.flush_pending(credit);
        if (ws.terminated()) break;
        std::this_thread::yield();  // workers may outnumber cores (CI: 2)
        continue;
      }
      idle.idle = false;
      if (record_found(ctx, ws, f, owner)) ++st.steals;
      if (!run_spawning_task(rt, ctx, slot, body, task, kids, &ids, limit)) break;
      if (kids.count == 0) {
        ws.task_done(credit);
        continue;
      }
      const PublishResult p = ws.publish_children(rank, kids.slots, kids.count, credit);
      if (p.pushed > 0) ctx.record(EventKind::DequeLevel, p.deque_level, owner);
      if (p.spilled > 0) {
        st.spilled += p.spilled;
        ctx.record(EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId);
      }
      if (p.failed) {
        rt.fail(spill ? "work-stealing: worker " + std::to_string(rank) + "'s deque (deque_capacity=" +
                            std::to_string(o.deque_capacity) + ") and the overflow queue (overflow_capacity=" +
                            std::to_string(o.overflow_capacity) +
                            ") are full; raise --param overflow_capacity or deque_capacity"
                      : "work-stealing: worker " + std::to_string(rank) + "'s deque is full (deque_capacity=" +
                            std::to_string(o.deque_capacity) +
                            ") and deque_overflow=fail; raise --param deque_capacity or use deque_overflow=spill");
        break;
      }
    }
    worker_end(ctx, slot, idle.failed);
    finished.fetch_add(1, std::memory_order_release);
  });

  auto state = [&] {
    return "pending " + std::to_string(device_atomic_ref<std::int64_t>(control.pending).load(mo::relaxed)) +
           ", sharing queue " + std::to_string(ws.sharing.size_hint()) + ", overflow queue " +
           std::to_string(ws.overflow.size_hint());
  };
  try {
    CpuSharingInserter inserter(ws, rt, state);
    inserter.insert(plan.tasks);  // Grossman: the initial tasks reach the workers through the sharing queue
    if (plan.host_feed) plan.host_feed(inserter);
    ws.host_finish();
    while (finished.load(std::memory_order_acquire) < workers) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      rt.tick(state);
    }
  } catch (...) {
    rt.fail("the host side of the run stopped");
    rt.join();
    throw;
  }
  ExecOutput out = rt.finish("host (sharing queue)", 0);
  std::uint32_t peak_deque = 0;
  for (std::uint32_t w = 0; w < workers; ++w) {
    peak_deque = std::max(peak_deque, deques.peak(w));
    out.metrics["steals"] += stats[w].steals;
    out.metrics["steals_failed"] += stats[w].steals_failed;
    out.metrics["spilled"] += stats[w].spilled;
    out.tasks_spawned += rt.slot(w).tasks_spawned.load(std::memory_order_relaxed);
  }
  out.tasks_run = rt.tasks_done();
  out.metrics["peak_deque_level"] = peak_deque;
  out.metrics["peak_task_slots"] = std::uint64_t{workers} * peak_deque + overflow.peak() + sharing.peak();
  if (out.metrics["spilled"] > 0) {
    out.notes.push_back(std::to_string(out.metrics["spilled"]) +
                        " spawned tasks did not fit a deque and went through the overflow queue (deque_capacity=" +
                        std::to_string(o.deque_capacity) + ")");
  }
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
