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
};

// What a backend hands back: the event streams and devices (metadata is filled by gpulb::run).
struct ExecOutput {
  trace::Trace trace;
  std::uint64_t makespan_ns = 0;  // first worker start to last worker end
  std::uint64_t tasks_run = 0;    // tasks executed, HALT tasks excluded
  std::uint32_t workers = 0;
  std::vector<std::string> notes;  // things the user should know (a clamped grid, dropped events)
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
};

// Parameter helpers for scenarios: look up `name` (or its default) and check it against the spec.
std::int64_t int_param(const ParamMap& params, const ParamSpec& spec);
std::string choice_param(const ParamMap& params, const ParamSpec& spec);
const ParamSpec& find_spec(const std::vector<ParamSpec>& specs, const std::string& name);

}  // namespace gpulb
