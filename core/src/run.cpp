#include "gpulb/run.hpp"

#include <algorithm>
#include <ctime>

#include "gpulb/gpu_request.hpp"
#include "gpulb/memory_estimate.hpp"
#include "gpulb/trace_budget.hpp"
#include "gpulb/tracing/trace_limits.hpp"

namespace gpulb {
namespace {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool takes(const std::vector<const ParamSpec*>& options, const std::string& key) {
  return std::any_of(options.begin(), options.end(),
                     [&](const ParamSpec* o) { return o->name == key; });
}

void check_backend(const Registry& registry, const ScenarioEntry& entry, const RunConfig& config,
                   Backend backend, const PolicyDescriptor& policy) {
  if (backend == Backend::Cuda) {
    if (!registry.cuda_built())
      throw ConfigError("this gpulb was built without the CUDA backend; use --backend cpu");
    const std::size_t gpus = registry.cuda_devices().size();
    if (gpus == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
    check_gpu_request(config.gpus, gpus);
  }
  if (!registry.policy_runs_on(policy, backend)) {
    std::string available;
    for (const PolicyDescriptor* p : registry.policies()) {
      if (registry.policy_runs_on(*p, backend))
        available += (available.empty() ? "" : ", ") + std::string(p->name);
    }
    throw ConfigError("policy '" + std::string(policy.name) + "' is not available on the " +
                      std::string(to_string(backend)) +
                      " backend in this version (available: " + available + ")");
  }
  if (!entry.runs_on(backend)) {
    throw ConfigError("scenario '" + entry.scenario().name() + "' has no " +
                      std::string(to_string(backend)) + " implementation in this build");
  }
}

// `distributed`: the run is one rank of several, so only policies that also balance across ranks
// are worth naming. A policy that spawns on another backend only (task-queue: the CPU) says so.
void check_spawning(const ScenarioInstance& instance, const std::string& scenario,
                    const Registry& registry, const PolicyDescriptor& policy, Backend backend,
                    bool distributed) {
  if (!instance.spawns() || runs_spawned_tasks(policy.traits, backend)) return;
  std::string able;
  for (const PolicyDescriptor* p : registry.policies()) {
    if (!runs_spawned_tasks(p->traits, backend) || (distributed && !p->traits.distributed))
      continue;
    able += (able.empty() ? "" : ", ") + std::string(p->name);
  }
  const std::string on =
      policy.traits.cpu_runs_spawned_tasks
          ? " on the " + std::string(to_string(backend)) + " backend (only on cpu)"
          : "";
  throw ConfigError(
      "scenario '" + scenario + "' spawns child tasks, which policy '" + std::string(policy.name) +
      "' cannot run" + on +
      (distributed ? ", on one host or across ranks; a --distributed run of it needs " : "; use ") +
      able);
}

// Work requests (G-Charm) need a policy that runs them, and such a policy needs them.
void check_requests(ScenarioInstance& instance, const Scenario& scenario, const Registry& registry,
                    const PolicyDescriptor& policy) {
  const bool makes = instance.request_stream() != nullptr;
  if (makes == policy.traits.runs_requests) return;
  std::string names;
  if (makes) {
    for (const PolicyDescriptor* p : registry.policies()) {
      if (p->traits.runs_requests) names += (names.empty() ? "" : ", ") + std::string(p->name);
    }
    throw ConfigError("scenario '" + scenario.name() +
                      "' makes work requests as it runs, which policy '" +
                      std::string(policy.name) + "' cannot take; use " + names);
  }
  for (const Scenario* s : registry.scenarios()) {
    if (s->makes_requests()) names += (names.empty() ? "" : ", ") + s->name();
  }
  throw ConfigError("policy '" + std::string(policy.name) +
                    "' runs work requests, which scenario '" + scenario.name() +
                    "' does not make; use " +
                    (names.empty() ? std::string("a scenario that makes them") : names));
}

// What a distributed run (gpulb/distribution.hpp) can run in this version: a policy whose driver
// on the run's backend balances across ranks (traits.distributed on the CPU: work-stealing,
// task-queue; traits.gpu_distributed on the GPUs: task-queue, work-stealing), and a scenario that
// keeps no table indexed by task id (ranks give out spawned ids from disjoint ranges instead).
// Every rank sees the same config, so every rank refuses alike.
void check_distributed(const ScenarioInstance& instance, const Scenario& scenario,
                       const Registry& registry, Backend backend, const PolicyDescriptor& policy) {
  const bool on_gpus = backend == Backend::Cuda;
  const auto distributed_here = [on_gpus](const PolicyDescriptor& p) {
    return on_gpus ? p.traits.gpu_distributed : p.traits.distributed;
  };
  if (!distributed_here(policy)) {
    std::string able;
    for (const PolicyDescriptor* p : registry.policies()) {
      if (distributed_here(*p)) able += (able.empty() ? "" : ", ") + std::string(p->name);
    }
    throw ConfigError("policy '" + std::string(policy.name) +
                      "' has no distributed version yet on the " + std::string(to_string(backend)) +
                      " backend; use " + able);
  }
  if (instance.id_capacity() != 0 || instance.spawn_id_base() != 0) {
    throw ConfigError("scenario '" + scenario.name() +
                      "' keeps a table indexed by task id, which ranks cannot share yet");
  }
}

// The initial tasks a rank starts with. On the CPU, rank 0 starts with all and the other ranks get
// theirs by stealing, as the official UTS's MPI version starts. On the GPUs each rank's pool starts
// with its own contiguous slice of them, and stealing moves only what the slices leave unbalanced:
// a GPU runs tasks far faster than chunks of them cross between ranks (docs/distributed.md, GPU
// ranks), so a run whose every task came from rank 0 was bound by those messages.
std::vector<Task> rank_initial_tasks(const std::vector<Task>& all, const Distribution& d,
                                     Backend backend) {
  if (backend != Backend::Cuda) return d.rank() == 0 ? all : std::vector<Task>{};
  const std::size_t first = all.size() * d.rank() / d.ranks(),
                    end = all.size() * (d.rank() + 1) / d.ranks();
  return std::vector<Task>(all.begin() + static_cast<std::ptrdiff_t>(first),
                           all.begin() + static_cast<std::ptrdiff_t>(end));
}

// Rank r's spawned ids: its own slice of the ids above the initial tasks', so that no two ranks
// give one id out (a rank that spawns past its slice would reach its neighbour's: 2^32 / ranks
// ids, a billion at 4 ranks, against UTS's largest tree's 111 million nodes).
std::uint32_t rank_spawn_base(const ExecPlan& plan, const Distribution& d) {
  const std::uint64_t first = first_spawn_id(plan);
  const std::uint64_t slice = ((std::uint64_t{1} << 32) - first) / d.ranks();
  return static_cast<std::uint32_t>(first + slice * d.rank());
}

// The trace memory one process of the run may take: --trace-memory, else a quarter of what this
// process may use (memory_limit()), shared by the ranks on its host. 0 without a trace.
std::uint64_t process_trace_budget(const RunConfig& config, const MemoryLimit& limit,
                                   const Distribution* dist) {
  if (!config.trace) return 0;
  if (config.trace_budget != 0) return config.trace_budget;
  const std::uint64_t memory = limit.bytes != 0 ? limit.bytes : trace::default_memory_budget() * 4;
  return std::max<std::uint64_t>(1,
                                 memory / 4 / (dist != nullptr ? dist->ranks_on_this_host() : 1));
}

// What the trace segments of this process get of its budget. Rank 0 of a distributed run holds
// every rank's events once they are merged, so each rank's segments get 1/ranks of it: rank 0's
// merged trace is then no larger than one process's trace of that budget.
std::uint64_t segment_budget(std::uint64_t process_budget, const Distribution* dist) {
  if (process_budget == 0 || dist == nullptr) return process_budget;
  return std::max<std::uint64_t>(1, process_budget / dist->ranks());
}

std::string dropped_events_remedy(bool cut_to_budget, std::uint64_t process_budget,
                                  const ExecPlan& plan, const Distribution* dist) {
  if (!cut_to_budget) return "raise --param trace_capacity";
  if (dist == nullptr)
    return "the trace memory budget of " + trace::format_bytes(trace_budget(plan)) +
           " held the segments; raise --trace-memory";
  return "the trace memory budget of " + trace::format_bytes(process_budget) +
         " held the segments (" + trace::format_bytes(trace_budget(plan)) +
         " a rank, so that rank 0 can hold every rank's events); raise --trace-memory";
}

}  // namespace

std::string gpulb_version() { return "0.1.0"; }

Backend default_backend(const Registry& registry) {
  return registry.cuda_built() && !registry.cuda_devices().empty() ? Backend::Cuda : Backend::Cpu;
}

void split_params(const Registry& registry, const ParamMap& params, const Scenario& scenario,
                  const PolicyDescriptor& policy, ParamMap& scenario_params,
                  ParamMap& policy_params) {
  const auto& specs = scenario.params();
  const std::vector<const ParamSpec*> options = options_of(policy);
  for (const auto& [name, value] : params) {
    const std::string& key = name;  // clang before 16 cannot capture a structured binding
    if (std::any_of(specs.begin(), specs.end(),
                    [&](const ParamSpec& s) { return s.name == key; })) {
      scenario_params[key] = value;
      continue;
    }
    if (takes(options, key)) {
      policy_params[key] = value;
      continue;
    }
    for (const PolicyDescriptor* other : registry.policies()) {
      if (takes(options_of(*other), key)) {
        throw ConfigError("parameter '" + key + "' is an option of policy '" +
                          std::string(other->name) + "', not of '" + std::string(policy.name) +
                          "'");
      }
    }
    std::string known;
    for (const ParamSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
    for (const ParamSpec* o : options) known += ", " + o->name;
    throw ConfigError("unknown parameter '" + key + "' for scenario '" + scenario.name() +
                      "' under policy '" + std::string(policy.name) + "' (parameters: " + known +
                      ")");
  }
}

namespace {

// What gpulb::run has decided before the backend runs: the scenario, the policy, the backend and
// the parameters split between them.
struct RunSetup {
  const ScenarioEntry& entry;
  const Scenario& scenario;
  const PolicyDescriptor& policy;
  Backend backend;
  ParamMap scenario_params, policy_params;
};

// What an instance says it cannot do here, refused before anything runs.
void check_instance(const Registry& registry, const RunSetup& s, const RunConfig& config,
                    ScenarioInstance& instance) {
  check_spawning(instance, s.scenario.name(), registry, s.policy, s.backend,
                 config.distribution != nullptr);
  check_requests(instance, s.scenario, registry, s.policy);
  if (const std::string why = instance.unsupported_on(s.backend); !why.empty()) {
    throw ConfigError("scenario '" + s.scenario.name() + "' cannot run on the " +
                      std::string(to_string(s.backend)) + " backend: " + why);
  }
  if (const std::string why = instance.unsupported_under(s.policy); !why.empty()) {
    throw ConfigError("scenario '" + s.scenario.name() + "' cannot run under policy '" +
                      std::string(s.policy.name) + "': " + why);
  }
  // A table per task id (id_capacity) is one array the bodies update by id, but each GPU of a run
  // gets its own record array, and a run across GPUs interleaves spawned ids (gpulb/spawn.hpp).
  if (s.backend == Backend::Cuda && config.gpus > 1 && instance.spawns() &&
      instance.id_capacity() != 0) {
    throw ConfigError("scenario '" + s.scenario.name() +
                      "' keeps a table per task id in one GPU's memory, which a run across GPUs "
                      "would split; use --gpus 1");
  }
  if (config.distribution != nullptr)
    check_distributed(instance, s.scenario, registry, s.backend, s.policy);
}

// The options every policy takes, and the policy's own.
struct ResolvedOptions {
  RunOptions run;
  PolicyOptionsValue policy;
};

// The options: the user's, then the instance's preferences, then the defaults.
ResolvedOptions resolve_options(RunSetup& s, const ScenarioInstance& instance) {
  const std::vector<const ParamSpec*> accepted = options_of(s.policy);
  for (const auto& [key, value] : instance.policy_defaults(s.policy)) {
    if (takes(accepted, key)) s.policy_params.emplace(key, value);  // the user's value wins
  }
  return {parse_run_options(s.policy_params), parse_policy_options(s.policy, s.policy_params)};
}

ExecPlan make_plan(const RunSetup& s, const RunConfig& config, const ScenarioInstance& instance,
                   std::uint32_t block_size) {
  ExecPlan plan;
  plan.policy = &s.policy;
  plan.backend = s.backend;
  plan.workers = config.workers;
  plan.block_size = block_size;
  plan.gpus = config.gpus;
  plan.trace = config.trace;
  plan.progress = config.progress;
  plan.expected_tasks = instance.expected_tasks();
  plan.widest_generation = instance.widest_generation();
  plan.spawns = instance.spawns();
  plan.spawn_id_base = instance.spawn_id_base();
  plan.id_capacity = instance.id_capacity();
  return plan;
}

// The trace's metadata and the result, from the backend's output and the verification.
RunResult make_result(const RunSetup& s, ExecOutput out, const Verification& v,
                      std::uint32_t block_size, const Distribution* dist) {
  RunResult r;
  r.trace = std::move(out.trace);
  trace::RunMetadata& m = r.trace.meta;
  m.scenario = s.scenario.name();
  m.policy = std::string(s.policy.name);
  m.backend = std::string(to_string(s.backend));
  for (const ParamSpec& spec : s.scenario.params()) {
    auto it = s.scenario_params.find(spec.name);
    if (it != s.scenario_params.end()) {
      m.parameters[spec.name] = it->second;
    } else if (s.scenario.param_applies(spec.name, s.scenario_params)) {
      m.parameters[spec.name] = spec.default_value;
    }
  }
  for (const auto& [k, val] : s.policy_params) m.parameters[k] = val;
  m.parameters["block_size"] = std::to_string(block_size);
  m.workers = out.workers;
  if (m.clock_source.empty()) m.clock_source = "steady_clock";
  if (dist != nullptr) {
    m.clock_source += "; ranks aligned to rank 0's clock by ping-pong, error at most " +
                      std::to_string(out.metrics.count("clock_error_ns_max")
                                         ? out.metrics.at("clock_error_ns_max")
                                         : 0) +
                      " ns";
  }
  m.gpulb_version = gpulb_version();
  m.created_utc = utc_now_iso8601();
  m.verified = v.ok && v.checked;
  m.checked = v.checked;
  m.verification = v.message;
  m.result_json = v.result_json;
  m.makespan_ns = out.makespan_ns;
  m.metrics = out.metrics;
  r.stats = trace::compute_statistics(r.trace);
  r.verified = v.ok && v.checked;
  r.checked = v.checked;
  r.verification = v.message;
  r.result_json = v.result_json;
  r.makespan_ns = out.makespan_ns;
  r.tasks = out.tasks_run;
  r.workers = out.workers;
  r.notes = std::move(out.notes);
  r.metrics = std::move(out.metrics);
  return r;
}

// In a distributed run only rank 0 holds every rank's records (cpu/run_workload.hpp).
Verification verify_here(const ScenarioInstance& instance, const Distribution* dist) {
  if (dist == nullptr || dist->rank() == 0) return instance.verify();
  Verification v;
  v.checked = false;
  v.message = "rank " + std::to_string(dist->rank()) + " of " + std::to_string(dist->ranks()) +
              ": rank 0 verifies the whole run";
  return v;
}

}  // namespace

RunResult run(const Registry& registry, const RunConfig& config) {
  const ScenarioEntry& entry = registry.entry(config.scenario);
  const Scenario& scenario = entry.scenario();
  RunSetup s{entry,
             scenario,
             registry.policy(config.policy.empty() ? scenario.default_policy(config.params)
                                                   : config.policy),
             config.backend.value_or(default_backend(registry)),
             {},
             {}};
  check_backend(registry, entry, config, s.backend, s.policy);
  if (config.block_size > 1024)
    throw ConfigError("block size " + std::to_string(config.block_size) +
                      " is out of range 1..1024");
  split_params(registry, config.params, scenario, s.policy, s.scenario_params, s.policy_params);
  Distribution* const dist = config.distribution;
  // Before the instance allocates its data: a run that cannot fit is refused here, naming the numbers.
  const MemoryLimit limit = memory_limit();
  const std::uint64_t process_budget = process_trace_budget(config, limit, dist);
  const std::string memory_note =
      check_memory(estimate_memory(scenario.data_size(s.scenario_params), process_budget,
                                   dist != nullptr ? dist->ranks_on_this_host() : 1),
                   limit);
  std::unique_ptr<BoundRun> bound = entry.bind(s.scenario_params);
  const std::uint32_t block_size =
      config.block_size != 0 ? config.block_size : scenario.default_block_size(s.scenario_params);
  ScenarioInstance& instance = bound->instance();
  check_instance(registry, s, config, instance);
  const ResolvedOptions options = resolve_options(s, instance);
  const std::vector<Task> all_tasks = instance.initial_tasks();
  const std::vector<Task> tasks =
      dist == nullptr ? all_tasks : rank_initial_tasks(all_tasks, *dist, s.backend);

  ExecPlan plan = make_plan(s, config, instance, block_size);
  plan.trace_budget = segment_budget(process_budget, dist);
  plan.run_options = options.run;
  plan.options = options.policy;
  plan.tasks = tasks;
  plan.requests = instance.request_stream();
  plan.added_cpu_driver = registry.added_cpu_driver(s.policy);
  if (plan.requests != nullptr) plan.expected_tasks = plan.requests->expected_requests;
  if (dist != nullptr) {
    ExecPlan whole = plan;
    whole.tasks = all_tasks;
    plan.spawn_id_base = rank_spawn_base(whole, *dist);
    plan.distribution = dist;
  }
  ExecOutput out = bound->execute(s.backend, plan);
  const bool cut_to_budget = out.trace_cut_to_budget;
  const Verification v = verify_here(instance, dist);
  RunResult r = make_result(s, std::move(out), v, block_size, dist);
  if (!memory_note.empty()) r.notes.push_back(memory_note);
  if (r.stats.dropped_events > 0) {
    // Name what held the segments: raising trace_capacity does nothing once the budget cut it.
    const std::string remedy = dropped_events_remedy(cut_to_budget, process_budget, plan, dist);
    r.notes.push_back(std::to_string(r.stats.dropped_events) +
                      " trace events did not fit and were dropped; " + remedy);
  }
  return r;
}

}  // namespace gpulb
