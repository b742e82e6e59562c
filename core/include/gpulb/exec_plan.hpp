// What a backend is asked to do (ExecPlan) and what it hands back (ExecOutput): the contract
// between gpulb::run and the policy drivers of each backend.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpulb/backend.hpp"
#include "gpulb/distribution.hpp"
#include "gpulb/policy.hpp"
#include "gpulb/requests.hpp"
#include "gpulb/task.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb {

struct ExecPlan;
struct ExecOutput;
namespace cpu {
class AnyBody;
}
// A CPU policy driver added to a registry at run time (Registry::add_cpu_driver; a program's own
// policy, outside the backend's compiled DriverList): it runs any scenario's body through AnyBody
// (gpulb/cpu/add_policy.hpp), one indirect call a task.
using AddedCpuDriver = ExecOutput (*)(const ExecPlan&, const cpu::AnyBody&);

// Progress of a run, for progress lines and bars: tasks finished so far and the tasks expected
// (0 where unknown, e.g. while tasks are still being spawned).
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t expected)>;

// The host's side of Grossman's insert_task while a run is going on (work-stealing): a feed
// function receives one and may insert tasks, from the host thread, until it returns; the run ends
// only after it has returned and every task is done. Inserted tasks keep the ids the caller gave
// them (keep them apart from spawned ids: see ExecPlan::spawn_id_base).
//
// A distributed run (gpulb/distribution.hpp) also lends work out of the run and asks whether the
// run is idle, through the same object: the host thread is where the ranks' balancing runs.
class HostInserter {
 public:
  virtual ~HostInserter() = default;
  // Blocks while the sharing queue is full (the workers drain it).
  virtual void insert(std::span<const Task> tasks) = 0;
  // Takes up to out.size() queued tasks (not yet running) out of the run, for another rank: they
  // leave the run's count of outstanding tasks. Returns how many (0 where the policy cannot).
  virtual std::uint32_t take(std::span<Task> out) {
    (void)out;
    return 0;
  }
  // True when no task the run counted is queued or running: only an insert can change that.
  virtual bool idle() const { return false; }
  // An event on the run's host track (a no-op where the run is not traced).
  virtual void record(trace::EventKind kind, std::uint32_t arg = 0, std::uint16_t aux = 0) {
    (void)kind, (void)arg, (void)aux;
  }
  // Throws RunError where a worker failed (the feed must not wait for work that will never come).
  // A distributed run's balancer calls it between messages, and there it is also the local
  // watchdog: RunError where this rank's tasks made no progress for watchdog_ms while it had some
  // queued or running (a hung task), without waiting for the workers (that task may never return).
  virtual void check() {}
  // Whether the run wants more work from elsewhere: by default when idle; a host pool (task-queue)
  // asks while it still holds less than one refill of its queues, so that its workers never wait.
  virtual bool hungry() const { return idle(); }
  // The host's own periodic work while a distributed run's balancer waits for messages (task-queue:
  // refill the workers' queues from the pool, collect their children). Never blocks.
  virtual void pump() {}
};
using HostFeed = std::function<void(HostInserter&)>;

// What a backend is asked to do.
struct ExecPlan {
  const PolicyDescriptor* policy = nullptr;  // from the registry's policy table
  Backend backend = Backend::Cpu;
  std::uint32_t workers = 0;       // 0: hardware threads (CPU) / occupancy bound (CUDA)
  std::uint32_t block_size = 128;  // threads a worker has (CPU: iterations of for_each_thread)
  std::uint32_t gpus = 0;          // CUDA: 0 = all
  bool trace = true;
  // bytes all trace segments may take (0: trace_budget()'s default)
  std::uint64_t trace_budget = 0;
  RunOptions run_options;  // the options every policy takes
  // The policy's own options, the struct its descriptor declares (options_for); its drivers read
  // them with policy_options<T>().
  PolicyOptionsValue options;
  std::span<const Task> tasks;  // the initial tasks
  ProgressFn progress;          // may be empty

  // Spawned tasks (ctx.spawn; see gpulb/spawn.hpp). Spawned ids count up from spawn_id_base
  // (0: one past the largest initial task id) and must stay below id_capacity (0: no limit but
  // 2^32) -- the size of any per-task-id table the scenario keeps; passing it fails the run.
  std::uint32_t spawn_id_base = 0;
  std::uint64_t id_capacity = 0;
  // Tasks the run is expected to execute, spawned ones included (0: unknown). Sizes trace
  // segments and the progress total; scenarios with spawning set it from their own estimate.
  std::uint64_t expected_tasks = 0;
  // The most tasks one generation holds, or an upper bound (0: unknown; ScenarioInstance::
  // widest_generation). Sizes the structures that hold a generation: the static list's arrays
  // (gpulb/static_list_sizing.hpp) and the blocking queue (gpulb/policies/blocking_queue.hpp).
  std::uint64_t widest_generation = 0;
  // The scenario's bodies spawn (ScenarioInstance::spawns). Policies that always run spawned tasks
  // ignore it; task-queue's CPU driver then routes children back through its host pool.
  bool spawns = false;
  // work-stealing only: more host inserts while the workers run (empty: just `tasks`).
  HostFeed host_feed;
  // Policies that run work requests (traits.runs_requests): the scenario's request stream, which
  // produces the run's work as it goes (G-Charm; gpulb/requests.hpp). `tasks` is then empty.
  const RequestStream* requests = nullptr;
  // A distributed run (gpulb/distribution.hpp): the CPU glue gathers the records of every rank on
  // rank 0 before the instance collects them. Null: this process is the whole run.
  Distribution* distribution = nullptr;
  // The policy's driver where a program added it to the registry (Registry::add_cpu_driver), for
  // the CPU backend (cpu/execute.hpp); null for a policy of the backend's compiled list.
  AddedCpuDriver added_cpu_driver = nullptr;

  // The policy's options as T, its descriptor's struct; std::logic_error naming both types where
  // they are another policy's. A plan that holds none reads T's defaults.
  template <class T>
  const T& policy_options() const {
    return options.get<T>();
  }
  // spawn_capacity, for the code every spawning policy shares.
  const SpawnOptions& spawn_options() const { return options.spawn(); }
};

// Where a plan's spawned ids start (spawn_id_base, or one past the largest initial id) and the
// bound they must stay below (id_capacity, or 2^32). Both backends use these.
inline std::uint32_t first_spawn_id(const ExecPlan& plan) {
  if (plan.spawn_id_base != 0) return plan.spawn_id_base;
  std::uint32_t next = 0;
  for (const Task& t : plan.tasks) next = t.id + 1 > next ? t.id + 1 : next;
  return next;
}
inline std::uint64_t id_limit(const ExecPlan& plan) {
  return plan.id_capacity != 0 ? plan.id_capacity : (std::uint64_t{1} << 32);
}

// What a backend hands back: the event streams and devices (metadata is filled by gpulb::run).
struct ExecOutput {
  trace::Trace trace;
  std::uint64_t makespan_ns = 0;  // first worker start to last worker end
  std::uint64_t tasks_run = 0;    // tasks executed, HALT tasks excluded
  std::uint32_t workers = 0;
  std::vector<std::string> notes;  // things the user should know (a clamped grid, dropped events)
  // the trace memory budget, not trace_capacity, sized the segments
  bool trace_cut_to_budget = false;
  std::uint64_t tasks_spawned = 0;  // tasks created by task bodies (included in tasks_run)
  // The host steady clock (host_now_ns) at the trace's time 0, and the first worker's start after
  // it: a distributed run places each rank's trace on rank 0's time axis from these.
  std::uint64_t origin_ns = 0;
  std::uint64_t first_start_ns = 0;
  // Policy measurements, by name, for results and benchmarks. Policies that run spawned tasks set
  //   peak_task_slots   task slots the run needed: static-list, the largest generation (each of
  //                     the two arrays needs that many); work-stealing, workers x the highest
  //                     deque level + the overflow and sharing queues' peaks (Mohan & Gopalan,
  //                     Fig. 7: deque memory is per worker); blocking-queue, the queue's peak
  //   generations       static-list: launches
  //   steals, steals_failed, spilled   work-stealing
  //   tasks_per_worker_max / _min      CPU backend: the busiest and idlest worker's tasks
  //   tasks_per_sm_max / _min          CUDA spawning policies: tasks run by the blocks of the
  //                                    busiest and the idlest SM (SMs that hosted a block)
  std::map<std::string, std::uint64_t> metrics;
};

}  // namespace gpulb
