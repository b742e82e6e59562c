// `gpulb bench uts` and `gpulb bench nqueens`: tasks created while the run goes on, under every
// spawning policy (work-stealing, static-list, blocking-queue), the GPU next to the CPU backend on
// all of the host's cores in the same run. Each figure is a median of --repeats verified runs.
//
// Columns: throughput (tasks/s), its ratio to the CPU backend under the same policy, the load
// balance (tasks run by the busiest SM over the idlest; on the CPU, per worker thread), the peak
// task slots the policy needed (Mohan & Gopalan's memory comparison) and the steals.
#include <map>
#include <string>

#include "bench_table.hpp"
#include "gpulb/policies/blocking_queue.hpp"
#include "gpulb/policies/static_list.hpp"
#include "gpulb/policies/work_stealing.hpp"
#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tools/format.hpp"

namespace gpulb::tools {
namespace {

using Policy = const PolicyDescriptor*;
const Policy kSpawningPolicies[] = {&policies::work_stealing(), &policies::static_list(), &policies::blocking_queue()};

struct Measured {
  std::string error;  // the run failed (e.g. a capacity): shown in the row, the bench goes on
  double seconds = 0;
  std::uint64_t tasks = 0;
  std::uint32_t workers = 0;
  std::map<std::string, std::uint64_t> metrics;
};

Measured measure(const std::string& scenario, const ParamMap& params, const PolicyDescriptor* policy, Backend backend, std::uint32_t repeats) {
  Measured m;
  std::vector<double> seconds;
  for (std::uint32_t i = 0; i < repeats; ++i) {
    RunConfig c;
    c.scenario = scenario;
    c.policy = std::string(policy->name);
    c.backend = backend;
    c.trace = false;
    c.gpus = backend == Backend::Cuda ? 1 : 0;
    c.params = params;
    RunResult r;
    try {
      r = run(builtin::registry(), c);
    } catch (const RunError& e) {
      m.error = e.what();
      return m;
    }
    if (!r.verified) {
      throw RunError("bench " + scenario + ": " + c.policy + " on " + std::string(to_string(backend)) + " did not verify: " + r.verification);
    }
    seconds.push_back(static_cast<double>(r.makespan_ns) / 1e9);
    m.tasks = r.tasks;
    m.workers = r.workers;
    m.metrics = r.metrics;
  }
  m.seconds = median(seconds);
  return m;
}

// "1.23 (412 / 335)": the busiest unit's tasks over the idlest's.
std::string balance(const Measured& m, Backend backend) {
  const char* max_key = backend == Backend::Cuda ? "tasks_per_sm_max" : "tasks_per_worker_max";
  const char* min_key = backend == Backend::Cuda ? "tasks_per_sm_min" : "tasks_per_worker_min";
  if (!m.metrics.count(max_key) || !m.metrics.count(min_key)) return "-";
  const std::uint64_t most = m.metrics.at(max_key), least = m.metrics.at(min_key);
  if (least == 0) return "inf (" + std::to_string(most) + " / 0)";
  return fixed(static_cast<double>(most) / static_cast<double>(least), 2) + " (" + std::to_string(most) + " / " + std::to_string(least) + ")";
}

std::uint64_t metric(const Measured& m, const char* key) { return m.metrics.count(key) ? m.metrics.at(key) : 0; }

// One table: every policy in `policies`, on each backend wanted; "x CPU" compares a GPU row with
// the CPU row of the same policy from this run.
Table spawning_table(Table t, const std::string& scenario, const std::string& unit, const std::vector<Policy>& policies,
                     const std::map<Policy, ParamMap>& params, const BenchArgs& a, bool cpu, bool gpu) {
  t.header = {"backend", "policy", unit, "time", unit + "/s", "x CPU (same policy)", "load max/min (per SM; CPU: per thread)",
              "peak task slots", "steals"};
  std::map<Policy, double> cpu_rate;
  std::vector<Backend> backends;
  if (cpu) backends.push_back(Backend::Cpu);
  if (gpu) backends.push_back(Backend::Cuda);
  for (Backend backend : backends) {
    for (const PolicyDescriptor* policy : policies) {
      const std::string label = std::string(policy->name);
      progress(scenario + " " + label + " on " + std::string(to_string(backend)));
      const Measured m = measure(scenario, params.at(policy), policy, backend, a.repeats);
      nlohmann::json j = {{"backend", to_string(backend)}, {"policy", label}};
      if (!m.error.empty()) {
        t.rows.push_back({std::string(to_string(backend)), label, "-", "-", "-", "-", "-", "-", "failed: " + m.error});
        j["error"] = m.error;
        t.json.push_back(j);
        continue;
      }
      const double rate = static_cast<double>(m.tasks) / m.seconds;
      if (backend == Backend::Cpu) cpu_rate[policy] = rate;
      const std::string vs_cpu = backend == Backend::Cuda && cpu_rate.count(policy) ? fixed(rate / cpu_rate[policy], 1) + "x" : "-";
      const std::string backend_label = std::string(to_string(backend)) + " (" + std::to_string(m.workers) + (backend == Backend::Cuda ? " blocks)" : " threads)");
      t.rows.push_back({backend_label, label, std::to_string(m.tasks), format_ns(m.seconds * 1e9), format_rate(rate), vs_cpu, balance(m, backend),
                        std::to_string(metric(m, "peak_task_slots")),
                        policy == &policies::work_stealing() ? std::to_string(metric(m, "steals")) : "-"});
      j["tasks"] = m.tasks;
      j["seconds"] = m.seconds;
      j["workers"] = m.workers;
      j["tasks_per_second"] = rate;
      j["metrics"] = m.metrics;
      t.json.push_back(j);
    }
  }
  return t;
}

}  // namespace

std::vector<Table> bench_uts(const BenchArgs& a, bool cpu, bool gpu) {
  // The static list needs a slot per task of the widest generation: about 2^20 for T1, about 2^26
  // for T1L (the paper's point: its memory grows with the tree, the deques' does not).
  auto params_for = [](const std::string& tree) {
    const std::string list = tree.size() > 2 && tree.back() == 'L' ? std::to_string(1u << 27) : std::to_string(1u << 23);
    std::map<Policy, ParamMap> p;
    for (const PolicyDescriptor* policy : kSpawningPolicies) p[policy] = {{"tree", tree}, {"watchdog_ms", "120000"}};
    p[&policies::static_list()]["list_capacity"] = list;  // only static-list takes it
    return p;
  };
  auto title = [&](const std::string& tree) {
    return Table{"uts: Unbalanced Tree Search, sample tree " + tree + ", nodes per second",
                 "Median of " + std::to_string(a.repeats) + " runs, each verified against the published node, leaf and depth counts; "
                 "time is the makespan (first worker start to last worker end). A node is a task. "
                 "Targets (issue 4, one H100): work-stealing on T1L >= 500 M nodes/s, >= 10x the CPU backend, load max/min <= 1.2.",
                 {}, {}};
  };
  std::vector<Table> out;
  const std::vector<Policy> all(std::begin(kSpawningPolicies), std::end(kSpawningPolicies));
  if (!a.tree.empty()) {
    out.push_back(spawning_table(title(a.tree), "uts", "nodes", all, params_for(a.tree), a, cpu, gpu));
    return out;
  }
  out.push_back(spawning_table(title("T1"), "uts", "nodes", all, params_for("T1"), a, cpu, gpu));
  // T1L's 102 M nodes through one lock take minutes a run: the blocking queue sits this one out.
  Table large = title("T1L");
  large.note += " blocking-queue is left out: its one lock makes a 102 M-node run take minutes (see the T1 table).";
  out.push_back(spawning_table(large, "uts", "nodes", {&policies::work_stealing(), &policies::static_list()}, params_for("T1L"), a, cpu, gpu));
  return out;
}

Table bench_nqueens(const BenchArgs& a, bool cpu, bool gpu) {
  const std::string n = std::to_string(a.queens), cutoff = std::to_string(a.cutoff);
  std::map<Policy, ParamMap> params;
  for (const PolicyDescriptor* policy : kSpawningPolicies) params[policy] = {{"n", n}, {"cutoff", cutoff}, {"watchdog_ms", "120000"}};
  Table t{"nqueens: BOTS N-Queens, n=" + n + ", cutoff=" + cutoff + ", tasks per second",
          "Median of " + std::to_string(a.repeats) + " runs, each verified against a sequential solver. A task places one queen (rows "
          "below the cutoff) or completes a placement sequentially (at the cutoff), so tasks differ in cost by orders of magnitude.",
          {}, {}};
  const std::vector<Policy> all(std::begin(kSpawningPolicies), std::end(kSpawningPolicies));
  return spawning_table(std::move(t), "nqueens", "tasks", all, params, a, cpu, gpu);
}

}  // namespace gpulb::tools
