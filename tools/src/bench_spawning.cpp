// `gpulb bench uts` and `gpulb bench nqueens`: tasks created while the run goes on, under every
// spawning policy (work-stealing, static-list, blocking-queue), the GPU next to the CPU backend on
// all of the host's cores in the same run. Each figure is a median of --repeats verified runs.
//
// Columns: throughput (tasks/s), its ratio to the CPU backend under the same policy, the load
// balance (tasks run by the busiest SM over the idlest; on the CPU, per worker thread), on the CPU
// the same over each worker's own CPU time (even there and not in the load: the machine took CPU
// time from some workers), the peak task slots the policy needed (Mohan & Gopalan's memory
// comparison) and the steals.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

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
const Policy kSpawningPolicies[] = {&policies::work_stealing(), &policies::static_list(),
                                    &policies::blocking_queue()};

struct Measured {
  std::string error;  // the run failed (e.g. a capacity): shown in the row, the bench goes on
  double seconds = 0;
  // the unit counted: the scenario's "nodes" where it reports them (uts), else tasks run
  std::uint64_t tasks = 0;
  std::uint32_t workers = 0;
  std::map<std::string, std::uint64_t> metrics;
};

// `before_each` runs before every repeat (the peer, interleaved with the CPU backend's runs).
Measured measure(const std::string& scenario, const ParamMap& params,
                 const PolicyDescriptor* policy, Backend backend, std::uint32_t repeats,
                 const std::function<void()>& before_each = {}) {
  Measured m;
  std::vector<double> seconds;
  for (std::uint32_t i = 0; i < repeats; ++i) {
    if (before_each) before_each();
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
      throw RunError("bench " + scenario + ": " + c.policy + " on " +
                     std::string(to_string(backend)) + " did not verify: " + r.verification);
    }
    seconds.push_back(static_cast<double>(r.makespan_ns) / 1e9);
    m.tasks = r.tasks;
    // uts with leaves=inline counts leaves inside their parent's task: count nodes, not tasks.
    if (const auto j = nlohmann::json::parse(r.result_json, nullptr, false);
        j.is_object() && j.contains("nodes")) {
      m.tasks = j["nodes"].get<std::uint64_t>();
    }
    m.workers = r.workers;
    m.metrics = r.metrics;
  }
  m.seconds = median(seconds);
  return m;
}

// "1.23 (412 / 335)": the busiest unit's tasks over the idlest's.
std::string format_balance(std::uint64_t most, std::uint64_t least) {
  if (least == 0) return "inf (" + std::to_string(most) + " / 0)";
  return fixed(static_cast<double>(most) / static_cast<double>(least), 2) + " (" +
         std::to_string(most) + " / " + std::to_string(least) + ")";
}

std::string balance(const Measured& m, Backend backend) {
  const char* max_key = backend == Backend::Cuda ? "tasks_per_sm_max" : "tasks_per_worker_max";
  const char* min_key = backend == Backend::Cuda ? "tasks_per_sm_min" : "tasks_per_worker_min";
  if (!m.metrics.count(max_key) || !m.metrics.count(min_key)) return "-";
  return format_balance(m.metrics.at(max_key), m.metrics.at(min_key));
}

std::uint64_t metric(const Measured& m, const char* key) {
  return m.metrics.count(key) ? m.metrics.at(key) : 0;
}

// --- The CPU peer: the official UTS 2.1 (uts_shm, OpenMP), built and run by its script, which
// prints "PEER impl=uts_shm-omp tree=T1L threads=16 nodes=102181082 s=1.93 nodes_per_s=53261701",
// and, from scripts/uts-peer.sh, " thread_nodes=6390412,6401120,...": the nodes each thread
// explored, the peer's load max/min beside the CPU backend's.
struct Peer {
  std::string script;  // empty: not run, `why` says why
  std::string why;
  std::string tree;
  std::uint32_t threads = 0;
  std::vector<double> seconds;
  std::uint64_t nodes = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> busiest_idlest;  // per run with thread_nodes
  std::string error;                                                    // the last run failed

  bool ran() const { return !seconds.empty(); }
  double rate() const { return ran() ? static_cast<double>(nodes) / median(seconds) : 0.0; }
  // The run of median max/min among those that reported their threads' nodes, as the CPU
  // backend's column prints it; "-" where the script reports none (run-uts-peer.sh).
  std::string balance() const {
    if (busiest_idlest.empty()) return "-";
    auto runs = busiest_idlest;
    const auto ratio = [](const std::pair<std::uint64_t, std::uint64_t>& r) {
      return r.second ? static_cast<double>(r.first) / static_cast<double>(r.second) : INFINITY;
    };
    std::sort(runs.begin(), runs.end(),
              [&](const auto& x, const auto& y) { return ratio(x) < ratio(y); });
    return format_balance(runs[runs.size() / 2].first, runs[runs.size() / 2].second);
  }

  void run_once() {
    if (script.empty() || !error.empty()) return;
    std::string quoted = "'";
    for (char c : script) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    const std::string cmd = quoted + "' " + std::to_string(threads) + " " + tree + " 2>&1";
    std::string out;
    if (FILE* f = popen(cmd.c_str(), "r")) {
      char buf[512];
      while (fgets(buf, sizeof buf, f)) out += buf;
      if (pclose(f) != 0) error = "the peer script failed: " + out.substr(0, 300);
    } else {
      error = "could not start " + script;
    }
    if (!error.empty()) return;
    // The fields of the PEER line only (a first run's build may print before it).
    std::string line;  // the last PEER line, after a space
    for (std::size_t from = 0; from < out.size();) {
      const std::size_t end = std::min(out.find('\n', from), out.size());
      if (out.compare(from, 5, "PEER ") == 0) line = " " + out.substr(from, end - from);
      from = end + 1;
    }
    if (line.empty()) {
      error = "no PEER line in the script's output: " + out.substr(0, 300);
      return;
    }
    const auto field = [&](const std::string& key) -> std::string {
      const std::size_t at = line.find(" " + key + "=");
      if (at == std::string::npos) return {};
      const std::size_t from = at + key.size() + 2;
      return line.substr(from, line.find(' ', from) - from);
    };
    // A count: digits only (std::stoull would take "12abc" and wrap "-5").
    const auto parse_count = [](const std::string& text) -> std::uint64_t {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument(text);
      return std::stoull(text);
    };
    try {
      const std::uint64_t n = parse_count(field("nodes"));
      const double secs = std::stod(field("s"));
      if (secs <= 0) throw std::invalid_argument("time");
      nodes = n;
      seconds.push_back(secs);
    } catch (const std::exception&) {
      error = "the PEER line has no count in nodes= or no time in s=: " + line.substr(1, 300);
      return;
    }
    if (const std::string per = field("thread_nodes"); !per.empty()) {
      std::uint64_t most = 0, least = UINT64_MAX, sum = 0;
      std::size_t count = 0;
      try {
        for (std::size_t from = 0; from <= per.size();) {
          const std::size_t comma = std::min(per.find(',', from), per.size());
          const std::uint64_t v = parse_count(per.substr(from, comma - from));
          most = std::max(most, v), least = std::min(least, v), sum += v, ++count;
          from = comma + 1;
        }
      } catch (const std::exception&) {
        error = "thread_nodes= is not a list of counts: " + per.substr(0, 200);
        return;
      }
      if (count != threads || sum != nodes) {
        error = "thread_nodes= names " + std::to_string(count) + " threads and " +
                std::to_string(sum) + " nodes, not " + std::to_string(threads) + " and " +
                std::to_string(nodes);
        return;
      }
      busiest_idlest.emplace_back(most, least);
    }
  }
};

Peer make_peer(const BenchArgs& a, const std::string& tree) {
  Peer p;
  p.tree = tree;
  // the CPU backend's default workers
  p.threads = std::max(1u, std::thread::hardware_concurrency());
  std::string script = a.peer_uts;
  std::string from = "--peer-uts";
  if (script.empty()) {
    if (const char* env = std::getenv("GPULB_PEER_UTS"); env && *env) {
      script = env;
      from = "GPULB_PEER_UTS";
    }
  }
  if (script.empty()) {
    // From the repository's root: its own script (the peer's per-thread counts too), else the peer's.
    if (std::filesystem::exists("scripts/uts-peer.sh") &&
        std::filesystem::exists("../shared/peers/uts-1.1/uts_shm.c")) {
      script = std::filesystem::absolute("scripts/uts-peer.sh").string();
    } else if (std::filesystem::exists("../shared/peers/run-uts-peer.sh")) {
      script = std::filesystem::absolute("../shared/peers/run-uts-peer.sh").string();
    } else {
      p.why =
          "peer not run: no script (give --peer-uts PATH or set GPULB_PEER_UTS to "
          "scripts/uts-peer.sh or run-uts-peer.sh)";
      return p;
    }
  } else if (!std::filesystem::exists(script)) {
    p.why = "peer not run: " + script + " (" + from + ") does not exist";
    return p;
  }
  p.script = script;
  return p;
}

std::vector<std::string> peer_row(const Peer& p, std::size_t columns) {
  std::vector<std::string> row(columns, "-");
  row[0] = "cpu peer (" + std::to_string(p.threads) + " threads)";
  row[1] = "official UTS 2.1 (uts_shm, OpenMP)";
  if (!p.error.empty()) {
    row[columns - 1] = "failed: " + p.error;
  } else if (!p.ran()) {
    row[columns - 1] = p.why.empty() ? "peer not run" : p.why;
  } else {
    row[2] = std::to_string(p.nodes);
    row[3] = format_ns(median(p.seconds) * 1e9);
    row[4] = format_rate(p.rate());
    row[6] = p.balance();
  }
  return row;
}

// One table: every policy in `policies`, on each backend wanted; "x CPU" compares a GPU row with
// the better of the CPU row of the same policy and the peer (when there is one), from this run.
// The peer's runs are interleaved with the CPU backend's work-stealing runs (or run on their own
// where the CPU backend is not measured).
// `cuda_variants`: more work-stealing rows on the GPU, each its label's extra parameters on top of
// work-stealing's (task_per=lane), measured right after the plain work-stealing row.
using Variants = std::vector<std::pair<std::string, ParamMap>>;
Table spawning_table(Table t, const std::string& scenario, const std::string& unit,
                     const std::vector<Policy>& policies, const std::map<Policy, ParamMap>& params,
                     const BenchArgs& a, bool cpu, bool gpu, Peer* peer = nullptr,
                     const Variants& cuda_variants = {}) {
  t.header = {"backend",
              "policy",
              unit,
              "time",
              unit + "/s",
              peer ? "x CPU (better of same policy, peer)" : "x CPU (same policy)",
              "load max/min (per SM; CPU: per thread)",
              "CPU: tasks per CPU-second max/min",
              "peak task slots",
              "steals"};
  const auto add_peer_row = [&] {
    t.rows.push_back(peer_row(*peer, t.header.size()));
    nlohmann::json j = {
        {"backend", "cpu"}, {"policy", "peer: uts_shm (OpenMP)"}, {"threads", peer->threads}};
    if (peer->ran() && peer->error.empty()) {
      j["tasks"] = peer->nodes;
      j["seconds"] = median(peer->seconds);
      j["tasks_per_second"] = peer->rate();
      if (!peer->busiest_idlest.empty()) j["load_max_min"] = peer->balance();
    } else {
      j["error"] = peer->error.empty() ? peer->why : peer->error;
    }
    t.json.push_back(j);
  };
  if (peer && !cpu) {
    progress(scenario + " peer (official UTS)");
    for (std::uint32_t i = 0; i < a.repeats; ++i) peer->run_once();
    add_peer_row();
  }
  std::map<Policy, double> cpu_rate;
  std::vector<Backend> backends;
  if (cpu) backends.push_back(Backend::Cpu);
  if (gpu) backends.push_back(Backend::Cuda);
  for (Backend backend : backends) {
    std::vector<std::tuple<Policy, std::string, ParamMap>> rows;
    for (const PolicyDescriptor* policy : policies) {
      rows.emplace_back(policy, std::string(policy->name), params.at(policy));
      if (backend != Backend::Cuda || policy != &policies::work_stealing()) continue;
      for (const auto& [suffix, extra] : cuda_variants) {
        ParamMap v = params.at(policy);
        for (const auto& [k, value] : extra) v[k] = value;
        rows.emplace_back(policy, std::string(policy->name) + " " + suffix, std::move(v));
      }
    }
    for (const auto& [policy, label, row_params] : rows) {
      progress(scenario + " " + label + " on " + std::string(to_string(backend)));
      const bool with_peer =
          peer && backend == Backend::Cpu && policy == &policies::work_stealing();
      const Measured m = measure(scenario, row_params, policy, backend, a.repeats,
                                 with_peer ? std::function<void()>([peer] { peer->run_once(); })
                                           : std::function<void()>());
      nlohmann::json j = {{"backend", to_string(backend)}, {"policy", label}};
      if (!m.error.empty()) {
        t.rows.push_back({std::string(to_string(backend)), label, "-", "-", "-", "-", "-", "-", "-",
                          "failed: " + m.error});
        j["error"] = m.error;
        t.json.push_back(j);
        if (with_peer) add_peer_row();
        continue;
      }
      const double rate = static_cast<double>(m.tasks) / m.seconds;
      if (backend == Backend::Cpu && !cpu_rate.count(policy)) cpu_rate[policy] = rate;
      double cpu_best = cpu_rate.count(policy) ? cpu_rate[policy] : 0.0;
      if (peer && peer->ran() && peer->error.empty()) cpu_best = std::max(cpu_best, peer->rate());
      const std::string vs_cpu =
          backend == Backend::Cuda && cpu_best > 0 ? fixed(rate / cpu_best, 1) + "x" : "-";
      const std::string backend_label = std::string(to_string(backend)) + " (" +
                                        std::to_string(m.workers) +
                                        (backend == Backend::Cuda ? " blocks)" : " threads)");
      const std::string cpu_rates =
          backend == Backend::Cpu && m.metrics.count("tasks_per_cpu_s_max")
              ? format_balance(metric(m, "tasks_per_cpu_s_max"), metric(m, "tasks_per_cpu_s_min"))
              : "-";
      t.rows.push_back(
          {backend_label, label, std::to_string(m.tasks), format_ns(m.seconds * 1e9),
           format_rate(rate), vs_cpu, balance(m, backend), cpu_rates,
           std::to_string(metric(m, "peak_task_slots")),
           policy == &policies::work_stealing() ? std::to_string(metric(m, "steals")) : "-"});
      j["tasks"] = m.tasks;
      j["seconds"] = m.seconds;
      j["workers"] = m.workers;
      j["tasks_per_second"] = rate;
      j["metrics"] = m.metrics;
      t.json.push_back(j);
      if (with_peer) add_peer_row();
    }
  }
  return t;
}

}  // namespace

std::vector<Table> bench_uts(const BenchArgs& a, bool cpu, bool gpu) {
  // The static list needs a slot per task of the widest generation: about 2^20 for T1, about 2^26
  // for T1L (the paper's point: its memory grows with the tree, the deques' does not).
  auto params_for = [&a](const std::string& tree) {
    const std::string list =
        tree.size() > 2 && tree.back() == 'L' ? std::to_string(1u << 27) : std::to_string(1u << 23);
    std::map<Policy, ParamMap> p;
    for (const PolicyDescriptor* policy : kSpawningPolicies) {
      p[policy] = {{"tree", tree}, {"watchdog_ms", "120000"}, {"leaves", a.uts_leaves}};
    }
    p[&policies::static_list()]["list_capacity"] = list;  // only static-list takes it
    return p;
  };
  auto title = [&](const std::string& tree) {
    return Table{
        "uts: Unbalanced Tree Search, sample tree " + tree + ", nodes per second",
        "Median of " + std::to_string(a.repeats) +
            " runs, each verified against the published node, leaf and depth counts; "
            "time is the makespan (first worker start to last worker end). " +
            std::string(a.uts_leaves == "task" ? "A node is a task. "
                                               : "A leaf child is counted by its parent's task "
                                                 "(leaves=inline); nodes/s counts every node. ") +
            "The peer is the official UTS 2.1 (uts_shm, OpenMP, its own wall-clock figure) on the "
            "same threads, its runs "
            "interleaved with the CPU backend's work-stealing runs; x CPU divides by the better of "
            "the CPU backend under the "
            "same policy and the peer. work-stealing task_per=lane runs a task a thread instead of "
            "a block (a block takes a batch of "
            "nodes from its deque at once); still a task a node. "
            "Targets (one H100): work-stealing on T1L >= 1 G nodes/s and T3L >= 450 M nodes/s; the "
            "CPU backend at "
            "least the peer's rate; load max/min <= 1.2.",
        {},
        {}};
  };
  // A task a thread (kernels/work_stealing_lanes.cuh): only with a task a node, as leaves=task.
  const Variants lanes =
      a.uts_leaves == "task" ? Variants{{"task_per=lane", {{"task_per", "lane"}}}} : Variants{};
  std::vector<Table> out;
  const std::vector<Policy> all(std::begin(kSpawningPolicies), std::end(kSpawningPolicies));
  // A large tree's ~100 M nodes through one lock take minutes a run: the blocking queue sits those out.
  const auto large = [](const std::string& tree) { return tree.size() > 2 && tree.back() == 'L'; };
  const std::string skip_note =
      " blocking-queue is left out: its one lock makes a 100 M-node run take minutes (see the T1 "
      "table).";
  if (!a.tree.empty()) {
    Peer peer = make_peer(a, a.tree);
    Table t = title(a.tree);
    if (large(a.tree)) t.note += skip_note;
    out.push_back(spawning_table(
        std::move(t), "uts", "nodes",
        large(a.tree) ? std::vector<Policy>{&policies::work_stealing(), &policies::static_list()}
                      : all,
        params_for(a.tree), a, cpu, gpu, &peer, lanes));
    return out;
  }
  Peer peer_t1 = make_peer(a, "T1"), peer_t1l = make_peer(a, "T1L");
  out.push_back(spawning_table(title("T1"), "uts", "nodes", all, params_for("T1"), a, cpu, gpu,
                               &peer_t1, lanes));
  Table t1l = title("T1L");
  t1l.note += skip_note;
  out.push_back(spawning_table(t1l, "uts", "nodes",
                               {&policies::work_stealing(), &policies::static_list()},
                               params_for("T1L"), a, cpu, gpu, &peer_t1l, lanes));
  return out;
}

Table bench_nqueens(const BenchArgs& a, bool cpu, bool gpu) {
  const std::string n = std::to_string(a.queens), cutoff = std::to_string(a.cutoff);
  std::map<Policy, ParamMap> params;
  for (const PolicyDescriptor* policy : kSpawningPolicies)
    params[policy] = {{"n", n}, {"cutoff", cutoff}, {"watchdog_ms", "120000"}};
  Table t{"nqueens: BOTS N-Queens, n=" + n + ", cutoff=" + cutoff + ", tasks per second",
          "Median of " + std::to_string(a.repeats) +
              " runs, each verified against a sequential solver and the known count. A task "
              "places one queen (rows below the cutoff) or completes a placement (at the cutoff; "
              "on a GPU its warp's lanes share the "
              "placements deal_depth rows further down), so tasks differ in cost by orders of "
              "magnitude. The first queen goes in the left half and "
              "its solutions count twice (the scenario's symmetry=mirror: half BOTS's tree).",
          {},
          {}};
  const std::vector<Policy> all(std::begin(kSpawningPolicies), std::end(kSpawningPolicies));
  return spawning_table(std::move(t), "nqueens", "tasks", all, params, a, cpu, gpu);
}

}  // namespace gpulb::tools
