// A scenario is a workload: parameters, an input generator, task bodies and a verifier.
// Scenarios register in a Registry (registry.hpp); nothing in core knows one by name.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpulb/policy.hpp"
#include "gpulb/task.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb {

using ParamMap = std::map<std::string, std::string>;

// A bad parameter, scenario, policy or combination of them; what() is meant for the user.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run that failed while running (watchdog, capacity, device error); what() names the cause.
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Progress of a run, for progress lines and bars: tasks finished so far and the tasks expected
// (0 where unknown, e.g. while tasks are still being spawned).
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t expected)>;

// The host's side of Grossman's insert_task while a run is going on (work-stealing): a feed
// function receives one and may insert tasks, from the host thread, until it returns; the run ends
// only after it has returned and every task is done. Inserted tasks keep the ids the caller gave
// them (keep them apart from spawned ids: see ExecPlan::spawn_id_base).
class HostInserter {
 public:
  virtual ~HostInserter() = default;
  // Blocks while the sharing queue is full (the workers drain it).
  virtual void insert(std::span<const Task> tasks) = 0;
};
using HostFeed = std::function<void(HostInserter&)>;

// What a backend is asked to do.
struct ExecPlan {
  Policy policy = Policy::TaskQueue;
  Backend backend = Backend::Cpu;
  std::uint32_t workers = 0;      // 0: hardware threads (CPU) / occupancy bound (CUDA)
  std::uint32_t block_size = 128; // threads a worker has (CPU: iterations of for_each_thread)
  std::uint32_t gpus = 0;         // CUDA: 0 = all
  bool trace = true;
  PolicyOptions options;
  std::span<const Task> tasks;    // the initial tasks
  ProgressFn progress;            // may be empty

  // Spawned tasks (ctx.spawn; see gpulb/spawn.hpp). Spawned ids count up from spawn_id_base
  // (0: one past the largest initial task id) and must stay below id_capacity (0: no limit but
  // 2^32) -- the size of any per-task-id table the scenario keeps; passing it fails the run.
  std::uint32_t spawn_id_base = 0;
  std::uint64_t id_capacity = 0;
  // Tasks the run is expected to execute, spawned ones included (0: unknown). Sizes trace
  // segments and the progress total; scenarios with spawning set it from their own estimate.
  std::uint64_t expected_tasks = 0;
  // work-stealing only: more host inserts while the workers run (empty: just `tasks`).
  HostFeed host_feed;
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
  std::uint64_t tasks_spawned = 0;   // tasks created by task bodies (included in tasks_run)
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

struct Verification {
  bool ok = false;
  std::string message;      // what was checked, or the first thing that was wrong
  std::string result_json;  // the scenario's result object
};

class ScenarioInstance {
 public:
  virtual ~ScenarioInstance() = default;
  virtual std::vector<Task> initial_tasks() const = 0;
  virtual ExecOutput execute_cpu(const ExecPlan& plan) = 0;
  virtual Verification verify() const = 0;  // after an execute
  // Work estimate for progress reporting: tasks a run will execute (0 where unknown).
  virtual std::uint64_t expected_tasks() const { return initial_tasks().size(); }
};

class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;  // may hold several lines
  virtual const std::vector<ParamSpec>& params() const = 0;
  // Validates every parameter (defaults for the missing ones); throws ConfigError naming the bad one.
  virtual std::unique_ptr<ScenarioInstance> instantiate(const ParamMap& params) const = 0;
  // Threads per worker block where the user names none (RunConfig::block_size 0, the CLI's
  // default): what the scenario's tasks can use.
  virtual std::uint32_t default_block_size() const { return 128; }
};

// Parameter helpers for scenarios: look up `name` (or its default) and check it against the spec.
std::int64_t int_param(const ParamMap& params, const ParamSpec& spec);
std::string choice_param(const ParamMap& params, const ParamSpec& spec);
const ParamSpec& find_spec(const std::vector<ParamSpec>& specs, const std::string& name);

// Reads the options of the dynamic-task policies (spawn_capacity, deque_capacity, victim, ...)
// from `params` into `o` (defaults for the missing ones; ConfigError for a bad one).
void parse_dynamic_task_options(const ParamMap& params, PolicyOptions& o);

}  // namespace gpulb
