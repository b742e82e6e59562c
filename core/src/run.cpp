#include "gpulb/run.hpp"

#include <algorithm>
#include <ctime>

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

bool is_policy_param(const std::string& key) {
  const auto& specs = policy_param_specs();
  return std::any_of(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key; });
}

Policy resolve_policy(const std::string& name) {
  if (auto p = parse_policy(name)) return *p;
  std::string known;
  for (const PolicyInfo& info : all_policies()) known += (known.empty() ? "" : ", ") + std::string(info.name);
  throw ConfigError("unknown policy '" + name + "' (policies: " + known + ")");
}

void check_backend(const Registry& registry, Backend backend, Policy policy) {
  if (backend == Backend::Cuda) {
    if (!registry.cuda_built()) throw ConfigError("this gpulb was built without the CUDA backend; use --backend cpu");
    if (registry.cuda_devices().empty()) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  }
  if (!backend_supports(backend, policy)) {
    std::string available;
    for (const PolicyInfo& info : all_policies()) {
      if (backend_supports(backend, info.policy)) available += (available.empty() ? "" : ", ") + std::string(info.name);
    }
    throw ConfigError("policy '" + std::string(to_string(policy)) + "' is not available on the " +
                      std::string(to_string(backend)) + " backend in this version (available: " + available + ")");
  }
}

}  // namespace

std::string gpulb_version() { return "0.1.0"; }

Backend default_backend(const Registry& registry) {
  return registry.cuda_built() && !registry.cuda_devices().empty() ? Backend::Cuda : Backend::Cpu;
}

PolicyOptions parse_policy_options(const ParamMap& params, const Scenario& scenario, ParamMap& scenario_params) {
  PolicyOptions o;
  ParamMap policy_params;
  for (const auto& [key, value] : params) {
    const auto& specs = scenario.params();
    const bool is_scenario = std::any_of(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == key; });
    if (is_scenario) {
      scenario_params[key] = value;
    } else if (is_policy_param(key)) {
      policy_params[key] = value;
    } else {
      std::string known;
      for (const ParamSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      for (const ParamSpec& s : policy_param_specs()) known += ", " + s.name;
      throw ConfigError("unknown parameter '" + key + "' for scenario '" + scenario.name() + "' (parameters: " + known + ")");
    }
  }
  const auto& ps = policy_param_specs();
  o.queues = static_cast<std::uint32_t>(int_param(policy_params, find_spec(ps, "queues")));
  o.queue_capacity = static_cast<std::uint32_t>(int_param(policy_params, find_spec(ps, "queue_capacity")));
  o.watchdog_ms = static_cast<std::uint32_t>(int_param(policy_params, find_spec(ps, "watchdog_ms")));
  o.trace_capacity = static_cast<std::uint32_t>(int_param(policy_params, find_spec(ps, "trace_capacity")));
  o.variant = choice_param(policy_params, find_spec(ps, "variant"));
  o.chunk = static_cast<std::uint32_t>(int_param(policy_params, find_spec(ps, "chunk")));
  o.claim = static_cast<std::uint32_t>(int_param(policy_params, find_spec(ps, "claim")));
  parse_dynamic_task_options(policy_params, o);
  return o;
}

RunResult run(const Registry& registry, const RunConfig& config) {
  const Scenario& scenario = registry.get(config.scenario);
  const Policy policy = resolve_policy(config.policy);
  const Backend backend = config.backend.value_or(default_backend(registry));
  check_backend(registry, backend, policy);
  const std::uint32_t block_size = config.block_size != 0 ? config.block_size : scenario.default_block_size();
  if (block_size > 1024) throw ConfigError("block size " + std::to_string(block_size) + " is out of range 1..1024");

  ParamMap scenario_params;
  const PolicyOptions options = parse_policy_options(config.params, scenario, scenario_params);
  std::unique_ptr<ScenarioInstance> instance = scenario.instantiate(scenario_params);
  const std::vector<Task> tasks = instance->initial_tasks();

  ExecPlan plan;
  plan.policy = policy;
  plan.backend = backend;
  plan.workers = config.workers;
  plan.block_size = block_size;
  plan.gpus = config.gpus;
  plan.trace = config.trace;
  plan.options = options;
  plan.tasks = tasks;
  plan.progress = config.progress;

  ExecOutput out;
  if (backend == Backend::Cpu) {
    out = instance->execute_cpu(plan);
  } else {
    CudaExecutor exec = registry.cuda_executor(scenario.name());
    if (!exec) throw ConfigError("scenario '" + scenario.name() + "' has no CUDA implementation in this build");
    out = exec(*instance, plan);
  }
  const Verification v = instance->verify();

  RunResult r;
  r.trace = std::move(out.trace);
  trace::RunMetadata& m = r.trace.meta;
  m.scenario = scenario.name();
  m.policy = std::string(to_string(policy));
  m.backend = std::string(to_string(backend));
  for (const ParamSpec& s : scenario.params()) {
    auto it = scenario_params.find(s.name);
    m.parameters[s.name] = it == scenario_params.end() ? s.default_value : it->second;
  }
  for (const auto& [k, val] : config.params) {
    if (is_policy_param(k)) m.parameters[k] = val;
  }
  m.parameters["block_size"] = std::to_string(block_size);
  m.workers = out.workers;
  if (m.clock_source.empty()) m.clock_source = "steady_clock";
  m.gpulb_version = gpulb_version();
  m.created_utc = utc_now_iso8601();
  m.verified = v.ok;
  m.verification = v.message;
  m.result_json = v.result_json;
  m.makespan_ns = out.makespan_ns;

  r.stats = trace::compute_statistics(r.trace);
  r.verified = v.ok;
  r.verification = v.message;
  r.result_json = v.result_json;
  r.makespan_ns = out.makespan_ns;
  r.tasks = out.tasks_run;
  r.workers = out.workers;
  r.notes = std::move(out.notes);
  r.metrics = std::move(out.metrics);
  if (r.stats.dropped_events > 0) {
    r.notes.push_back(std::to_string(r.stats.dropped_events) +
                      " trace events did not fit and were dropped; raise --param trace_capacity");
  }
  return r;
}

}  // namespace gpulb
