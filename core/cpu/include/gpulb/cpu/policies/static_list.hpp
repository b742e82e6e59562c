// The static task list on the CPU backend (gpulb/static_task_list.hpp, Cederman & Tsigas via
// Mohan & Gopalan): the host "launches" one generation at a time; the worker threads take the
// generation's tasks in launch order (the hardware block scheduler's stand-in), append their
// children to the output array, and the host swaps the arrays and launches again until a
// generation creates nothing.
//
// Trace: host KernelLaunch / KernelEnd (arg: tasks in the generation) per generation; workers
// TaskBegin/TaskEnd and SpawnBatch. ExecOutput::metrics: generations, peak_task_slots (the largest
// array the run needed).
#pragma once

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/cpu/context.hpp"
#include "gpulb/cpu/runtime.hpp"
#include "gpulb/cpu/worker.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/policies/static_list.hpp"
#include "gpulb/static_task_list.hpp"

namespace gpulb::cpu {
namespace detail {

template <class Body>
ExecOutput run_static_list(const ExecPlan& plan, const Body& body) {
  const PolicyOptions& o = plan.options;
  const std::uint64_t expected = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  Runtime rt(plan, 3 * expected + 16);
  const std::uint32_t workers = rt.workers();
  HostStaticTaskList list(o.list_capacity);
  if (!list.load(plan.tasks.data(), static_cast<std::uint32_t>(std::min<std::size_t>(plan.tasks.size(), 0xFFFFFFFFu))) ||
      plan.tasks.size() > 0xFFFFFFFFu) {
    throw RunError("static-list: the " + std::to_string(plan.tasks.size()) + " initial tasks do not fit list_capacity=" +
                   std::to_string(o.list_capacity) + "; raise --param list_capacity");
  }
  TaskIdCounter ids;
  ids.next = first_spawn_id(plan);
  const std::uint64_t limit = id_limit(plan);
  SpawnBuffers spawn(workers, o.spawn_capacity);

  // The launch gate: the host publishes `current` and then bumps `generation` (release); workers
  // that acquire the new generation read `current`, take tasks by fetch-and-add on `next_task`
  // (the block scheduler), and count themselves out in `finished` (release) for the host.
  StaticTaskListRef current{};
  std::atomic<std::uint32_t> generation{0};
  std::atomic<bool> quit{false};
  std::atomic<std::uint64_t> next_task{0};
  std::atomic<std::uint32_t> finished{0};
  std::atomic<std::uint32_t> overflow_generation{0};

  rt.start([&](std::uint32_t rank) {
    WorkerSlot& slot = rt.slot(rank);
    SpawnBuffer& kids = *spawn.get(rank);
    const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(), rt.stop_flag(), &kids);
    worker_begin(ctx, slot, rank);
    std::uint32_t seen = 0;
    while (!rt.stop_requested()) {
      const std::uint32_t g = generation.load(std::memory_order_acquire);
      if (g == seen) {
        if (quit.load(std::memory_order_acquire)) break;
        std::this_thread::yield();
        continue;
      }
      seen = g;
      const StaticTaskListRef list_ref = current;  // published before `generation`
      while (!rt.stop_requested()) {
        const std::uint64_t b = next_task.fetch_add(1, std::memory_order_relaxed);
        if (b >= list_ref.in_count) break;
        const Task task = list_ref.dequeue(static_cast<std::uint32_t>(b));
        if (!run_spawning_task(rt, ctx, slot, body, task, kids, &ids, limit)) break;
        if (!list_ref.enqueue(kids.slots, kids.count)) {
          overflow_generation.store(g, std::memory_order_relaxed);
          rt.fail("static-list: generation " + std::to_string(g) + " created more than list_capacity=" +
                  std::to_string(list_ref.capacity) + " tasks; raise --param list_capacity");
          break;
        }
      }
      ctx.pause_trace();  // the wait for the next generation is no task's time
      finished.fetch_add(1, std::memory_order_release);
    }
    worker_end(ctx, slot, 0);
  });

  std::uint64_t peak = plan.tasks.size();
  std::uint32_t generations = 0;
  std::uint32_t launched = 0;
  auto state = [&] {
    return "generation " + std::to_string(generations) + " of " + std::to_string(launched) + " tasks, " +
           std::to_string(finished.load()) + " of " + std::to_string(workers) + " workers done";
  };
  try {
    for (std::uint32_t n = list.in_count(); n > 0;) {
      current = list.ref();
      next_task.store(0, std::memory_order_relaxed);
      finished.store(0, std::memory_order_relaxed);
      launched = n;
      ++generations;
      rt.host_record(EventKind::KernelLaunch, n);
      generation.store(generations, std::memory_order_release);  // "launch"
      while (finished.load(std::memory_order_acquire) < workers) {
        std::this_thread::yield();
        rt.tick(state);
      }
      rt.host_record(EventKind::KernelEnd, n);
      std::uint64_t needed = 0;
      n = list.swap(needed);  // NEWTASKCNT
      peak = std::max(peak, needed);
    }
    quit.store(true, std::memory_order_release);
  } catch (...) {
    rt.fail("the host side of the run stopped");
    rt.join();
    throw;
  }
  ExecOutput out = rt.finish("host launcher", 0);
  out.tasks_run = rt.tasks_done();
  for (std::uint32_t w = 0; w < workers; ++w) out.tasks_spawned += rt.slot(w).tasks_spawned.load(std::memory_order_relaxed);
  out.metrics["generations"] = generations;
  out.metrics["peak_task_slots"] = peak;
  out.notes.push_back("static-list: " + std::to_string(generations) + " generations; the largest needed " +
                      std::to_string(peak) + " task slots (two arrays of that size)");
  return out;
}

}  // namespace detail

struct StaticListDriver {
  static const PolicyDescriptor& descriptor() { return policies::static_list(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    return detail::run_static_list(plan, body);
  }
};

}  // namespace gpulb::cpu
