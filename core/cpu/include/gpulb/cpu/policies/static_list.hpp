// The static task list on the CPU backend (gpulb/static_task_list.hpp, Cederman & Tsigas via
// Mohan & Gopalan): the host "launches" one generation at a time; the worker threads take the
// generation's tasks in launch order (the hardware block scheduler's stand-in), append their
// children to the output array, and the host swaps the arrays and launches again until a
// generation creates nothing.
//
// The arrays are sized and grown as gpulb/static_list_sizing.hpp says: a launch whose children
// outgrow the output array stops early (each worker whose batch did not fit holds the rest in its
// spawn buffer and stops), the host grows the array within the memory available (MemAvailable),
// places the held batches and launches the generation's remaining tasks.
//
// Trace: host KernelLaunch / KernelEnd (arg: tasks in the launch) per launch; workers
// TaskBegin/TaskEnd and SpawnBatch. ExecOutput::metrics: generations, peak_task_slots (the largest
// generation), list_slots (the largest array allocated), list_resumes (launches that stopped on a
// full array and went on).
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
#include "gpulb/memory_estimate.hpp"
#include "gpulb/static_list_sizing.hpp"
#include "gpulb/static_task_list.hpp"

namespace gpulb::cpu {
namespace detail {

// The launch gate: the host publishes `current` and then bumps `launch` (release); workers that
// acquire the new launch read `current`, take tasks by fetch-and-add on `next_task` (the block
// scheduler), and count themselves out in `finished` (release) for the host. A launch that goes
// on with a generation keeps `next_task`.
struct ListGate {
  StaticTaskListRef current{};
  std::atomic<std::uint32_t> launch{0};
  std::atomic<bool> quit{false};
  std::atomic<std::uint64_t> next_task{0};
  std::atomic<std::uint32_t> finished{0};
};

// What the workers of a static-list run share besides the gate.
struct ListWorkers {
  SpawnBuffers spawn;
  std::vector<HeldChildren> held;  // per worker, written by it before it counts itself out
  TaskIdCounter ids;
  std::uint64_t id_limit;
};

// One worker: each launch, tasks until the generation is taken or its children do not fit.
template <class Body>
void static_list_worker(Runtime& rt, const ExecPlan& plan, const Body& body, ListGate& gate,
                        ListWorkers& w, std::uint32_t rank) {
  WorkerSlot& slot = rt.slot(rank);
  SpawnBuffer& kids = *w.spawn.get(rank);
  const WorkerContext ctx(rank, plan.block_size, rt.worker_segment(rank), rt.origin_ns(),
                          rt.stop_flag(), &kids);
  worker_begin(ctx, slot, rank);
  std::uint32_t seen = 0;
  while (!rt.stop_requested()) {
    const std::uint32_t g = gate.launch.load(std::memory_order_acquire);
    if (g == seen) {
      if (gate.quit.load(std::memory_order_acquire)) break;
      std::this_thread::yield();
      continue;
    }
    seen = g;
    const StaticTaskListRef list_ref = gate.current;  // published before `launch`
    while (!rt.stop_requested()) {
      const std::uint64_t b = gate.next_task.fetch_add(1, std::memory_order_relaxed);
      if (b >= list_ref.in_count) break;
      if (!run_spawning_task(rt, ctx, slot, body, list_ref.dequeue(static_cast<std::uint32_t>(b)),
                             kids, &w.ids, w.id_limit))
        break;
      const ListAppend put = list_ref.enqueue(kids.slots, kids.count);
      if (!put.complete()) {
        w.held[rank] = held_rest(put);  // the rest stays in `kids` until the host places it
        break;
      }
    }
    ctx.pause_trace();  // the wait for the next launch is no task's time
    gate.finished.fetch_add(1, std::memory_order_release);
  }
  worker_end(ctx, slot, 0);
}

// The host's side: launches generation after generation, growing the output array where a launch
// stops on it.
class ListLauncher {
 public:
  ListLauncher(Runtime& rt, const ExecPlan& plan, ListGate& gate, ListWorkers& w,
               HostStaticTaskList& list)
      : rt_(rt),
        gate_(gate),
        w_(w),
        list_(list),
        sizer_(plan.policy_options<policies::StaticListOptions>().list_capacity,
               plan.widest_generation, plan.expected_tasks) {}

  void run() {
    for (std::uint32_t n = list_.in_count(); n > 0;) {
      ++generations_;
      reserve_output(n);
      launch(n, true);
      while (list_.tail() > list_.output_capacity()) {
        const std::uint64_t done =
            std::min<std::uint64_t>(gate_.next_task.load(std::memory_order_relaxed), n);
        grow(n, done);
        if (done < n) launch(static_cast<std::uint32_t>(n - done), false);
      }
      sizer_.generation_ended(n, list_.tail());
      peak_ = std::max<std::uint64_t>(peak_, list_.tail());
      n = list_.swap();  // NEWTASKCNT
    }
    gate_.quit.store(true, std::memory_order_release);
  }

  void report(ExecOutput& out, std::uint64_t initial) const {
    report_list({generations_, std::max(peak_, initial), largest_, resumes_}, out.metrics,
                out.notes);
  }

 private:
  // The output array as the sizer predicts, within the memory available now (never refused here:
  // a launch that outgrows it stops, and grow() decides).
  void reserve_output(std::uint32_t n) {
    const std::uint64_t want = sizer_.before_launch(n);
    if (want <= list_.output_capacity()) return;
    const std::uint64_t slots = fit_list_slots(want, list_.output_capacity(), free_bytes());
    list_.reserve_output(
        static_cast<std::uint32_t>(std::max<std::uint64_t>(slots, list_.output_capacity())));
    largest_ = std::max<std::uint64_t>(largest_, list_.output_capacity());
  }

  // After a launch that stopped on a full output array, `done` of the generation's `n` tasks taken.
  void grow(std::uint32_t n, std::uint64_t done) {
    const std::uint64_t asked = list_.tail();
    if (asked > kMaxListSlots) {
      throw RunError("static-list: generation " + std::to_string(generations_) +
                     " needs more than " + std::to_string(kMaxListSlots) +
                     " task slots, more than one array indexes");
    }
    const std::uint64_t free = free_bytes();
    const std::uint64_t slots = fit_list_slots(sizer_.after_overflow(asked, done, n), asked, free);
    if (slots == 0)
      throw RunError(list_memory_refusal(generations_, asked, "host memory", list_.bytes(), free,
                                         "MemAvailable"));
    list_.reserve_output(static_cast<std::uint32_t>(slots));
    largest_ = std::max<std::uint64_t>(largest_, slots);
    for (std::uint32_t r = 0; r < w_.held.size(); ++r) {
      if (w_.held[r].count != 0) list_.place(w_.held[r], w_.spawn.get(r)->slots);
      w_.held[r] = {};
    }
    ++resumes_;
  }

  // A launch of `count` tasks (the generation's first when `first`, else its remaining ones).
  void launch(std::uint32_t count, bool first) {
    gate_.current = list_.ref();
    if (first) gate_.next_task.store(0, std::memory_order_relaxed);
    gate_.finished.store(0, std::memory_order_relaxed);
    rt_.host_record(EventKind::KernelLaunch, count);
    gate_.launch.store(++launches_, std::memory_order_release);  // "launch"
    const std::uint32_t workers = rt_.workers();
    while (gate_.finished.load(std::memory_order_acquire) < workers) {
      std::this_thread::yield();
      rt_.tick([&] {
        return "generation " + std::to_string(generations_) + ", a launch of " +
               std::to_string(count) + " tasks, " + std::to_string(gate_.finished.load()) + " of " +
               std::to_string(workers) + " workers done";
      });
    }
    rt_.host_record(EventKind::KernelEnd, count);
  }

  static std::uint64_t free_bytes() {
    const std::uint64_t available = memory_limit().available;
    return available != 0 ? available : ~std::uint64_t{0};
  }

  Runtime& rt_;
  ListGate& gate_;
  ListWorkers& w_;
  HostStaticTaskList& list_;
  ListSizer sizer_;
  std::uint32_t launches_ = 0, generations_ = 0;
  std::uint64_t peak_ = 0, largest_ = 0, resumes_ = 0;
};

// Where the scenario states its widest generation, a run whose memory cannot hold it is refused
// before it starts.
inline void check_widest_generation(const ExecPlan& plan) {
  const MemoryLimit limit = memory_limit();
  const std::uint64_t widest = plan.widest_generation;
  if (widest == 0 || limit.available == 0 || fit_list_slots(widest, widest, limit.available) != 0)
    return;
  throw RunError(list_memory_refusal(0, widest, "host memory", 0, limit.available, "MemAvailable"));
}

template <class Body>
ExecOutput run_static_list(const ExecPlan& plan, const Body& body) {
  const policies::StaticListOptions& o = plan.policy_options<policies::StaticListOptions>();
  if (plan.tasks.size() > kMaxListSlots) {
    throw RunError("static-list: " + std::to_string(plan.tasks.size()) +
                   " initial tasks are more than one array holds (" +
                   std::to_string(kMaxListSlots) + ")");
  }
  check_widest_generation(plan);
  const std::uint64_t expected = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  Runtime rt(plan, 3 * expected + 16);
  HostStaticTaskList list;
  list.load(plan.tasks.data(), static_cast<std::uint32_t>(plan.tasks.size()), o.list_capacity);
  ListWorkers w{SpawnBuffers(rt.workers(), o.spawn_capacity),
                std::vector<HeldChildren>(rt.workers()),
                {},
                id_limit(plan)};
  w.ids.next = first_spawn_id(plan);
  ListGate gate;
  rt.start([&](std::uint32_t rank) { static_list_worker(rt, plan, body, gate, w, rank); });
  ListLauncher launcher(rt, plan, gate, w, list);
  try {
    launcher.run();
  } catch (...) {
    rt.fail("the host side of the run stopped");
    rt.join();
    throw;
  }
  ExecOutput out = rt.finish("host launcher", 0);
  out.tasks_run = rt.tasks_done();
  for (std::uint32_t r = 0; r < rt.workers(); ++r)
    out.tasks_spawned += rt.slot(r).tasks_spawned.load(std::memory_order_relaxed);
  launcher.report(out, plan.tasks.size());
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
