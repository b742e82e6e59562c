// A scenario is a workload: parameters, an input generator, a task body and a verifier.
//
// A scenario is its folder under scenarios/: a class deriving from ScenarioOf<Instance> (the
// metadata and a factory of instances) and an Instance deriving from Workload<Body, Record> (the
// initial tasks, the body both backends run, and what to do with the records the body wrote).
// builtin/ binds each scenario to every backend with one template per backend; nothing in core
// knows a scenario by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/params.hpp"
#include "gpulb/policy.hpp"
#include "gpulb/task.hpp"

namespace gpulb {

struct Verification {
  bool ok = false;
  // False where nothing could be compared with the result (no reference, no published figures):
  // `ok` is then false too -- an unchecked run is never reported as a verified one.
  bool checked = true;
  std::string message;      // what was checked, the first thing that was wrong, or why nothing was
  std::string result_json;  // the scenario's result object
};

// One configured run of a scenario, independent of the backend.
class ScenarioInstance {
 public:
  virtual ~ScenarioInstance() = default;
  virtual std::vector<Task> initial_tasks() const = 0;
  virtual Verification verify() const = 0;  // after a run
  // Tasks a run executes, spawned ones included (0 where unknown): sizes trace segments and the
  // progress total.
  virtual std::uint64_t expected_tasks() const { return initial_tasks().size(); }
  // The most tasks one generation holds (the initial tasks are generation 0, the children of
  // generation k are generation k + 1), where the scenario knows it or an upper bound of it; 0
  // where unknown. Sizes the static list's arrays and the blocking queue.
  virtual std::uint64_t widest_generation() const { return 0; }
  // Whether task bodies spawn children: only policies with traits.runs_spawned_tasks run those.
  virtual bool spawns() const { return false; }
  // Spawned ids start here (0: one past the largest initial id) and stay below id_capacity (0: no
  // bound but 2^32): for scenarios that keep a table indexed by task id. See ExecPlan.
  virtual std::uint32_t spawn_id_base() const { return 0; }
  virtual std::uint64_t id_capacity() const { return 0; }
  // Why this instance cannot run on `backend` (empty: it can). gpulb::run refuses such a run
  // before it starts (ConfigError), e.g. a fault that only a GPU can survive.
  virtual std::string unsupported_on(Backend) const { return {}; }
  // Scenarios whose work arrives as G-Charm work requests (gpulb/requests.hpp) return their
  // stream (valid while the instance lives); only policies with traits.runs_requests run them.
  virtual const RequestStream* request_stream() { return nullptr; }
  // Why this instance cannot run under `policy` (empty: it can). gpulb::run refuses such a run
  // (ConfigError naming the scenario and the policy), e.g. an md solution bound to one policy.
  virtual std::string unsupported_under(const PolicyDescriptor&) const { return {}; }
  // Option values this instance prefers under `policy` where the user gave none (e.g. the paper's
  // chunk size); gpulb::run applies only those the policy takes, and records them in the trace.
  virtual ParamMap policy_defaults(const PolicyDescriptor&) const { return {}; }
};

// What a backend needs to run an instance. The body writes Records into an array the backend
// allocates (host memory on the CPU, device memory on each GPU) and hands back after the run.
template <class BodyT, class RecordT>
class Workload : public ScenarioInstance {
 public:
  using Body = BodyT;      // __host__ __device__: void operator()(Ctx&, const Task&) const
  using Record = RecordT;  // trivially copyable; zero is its initial value on both backends

  // Records a run of `workers` workers needs (per worker, per task id, per block...).
  virtual std::size_t record_count(std::uint32_t workers) const = 0;
  // The body over `records` (record_count(workers) of them, zeroed).
  virtual Body body(Record* records) const = 0;
  // Read-only input the body reads (e.g. atom positions): the CUDA backend copies these bytes to
  // each GPU before the run (not timed) and hands body_on the copy; the CPU backend hands it the
  // host bytes themselves. Empty (the default): no input, body_on is body.
  virtual std::span<const std::byte> input() const { return {}; }
  virtual Body body_on(Record* records, const std::byte* /*input copy*/) const {
    return body(records);
  }
  // After the run: the records of each device that ran (one array on the CPU; one per GPU), the
  // plan as the backend ran it and its output, kept for verify().
  virtual void collect(std::vector<std::vector<Record>> per_device, const ExecPlan& plan,
                       const ExecOutput& out) = 0;
};

// What an instance of given parameters holds before it runs: what gpulb::run estimates a run's
// memory from before anything is allocated (gpulb/memory_estimate.hpp).
struct DataSize {
  std::uint64_t initial_tasks = 0;  // ScenarioInstance::initial_tasks().size()
  std::uint64_t bytes = 0;          // the instance's own data: inputs, records, tables
  std::string parameter;  // the parameter that sets the size, named where a run does not fit
};

// The scenario's metadata, shared by every instance.
class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;  // may hold several lines
  virtual const std::vector<ParamSpec>& params() const = 0;
  // Threads per worker block where the user names none (RunConfig::block_size 0), given the run's
  // scenario parameters (already validated by instantiate; {} for `gpulb list`): what the
  // scenario's tasks can use.
  virtual std::uint32_t default_block_size(const ParamMap& /*params*/) const { return 128; }
  // Whether parameter `name` means anything given the run's others: a trace records the defaults
  // of those that do, and leaves out the rest (uts: t, a, d, ... shape a custom tree only).
  virtual bool param_applies(const std::string& /*name*/, const ParamMap& /*params*/) const {
    return true;
  }
  // Whether its instances make work requests (ScenarioInstance::request_stream).
  virtual bool makes_requests() const { return false; }
  // The size of an instance of `params` (validated as instantiate validates them), computed
  // without making it. Zero (the default): small, or known only as the run goes (spawned tasks).
  virtual DataSize data_size(const ParamMap& /*params*/) const { return {}; }
  // The policy a run gets where it names none (RunConfig::policy empty, `gpulb run` without
  // --policy), given the run's parameters: one that runs this scenario well on both backends.
  // A request stream's is `combining`, G-Charm's launcher; the others' `task-queue`, Chen et
  // al.'s; spawning scenarios say `work-stealing` (task-queue runs their children through the
  // host on the CPU and not at all on CUDA).
  virtual std::string default_policy(const ParamMap& /*params*/) const {
    return makes_requests() ? "combining" : "task-queue";
  }
};

// A scenario that makes instances of one type. instantiate() validates every parameter (defaults
// for the missing ones) and throws ConfigError naming the bad one.
template <class Instance>
class ScenarioOf : public Scenario {
 public:
  virtual std::unique_ptr<Instance> instantiate(const ParamMap& params) const = 0;
};

}  // namespace gpulb
