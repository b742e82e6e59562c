#include "summary.hpp"

#include <algorithm>

#include "gpulb/tools/format.hpp"

namespace gpulb::tools {

std::string verdict(const trace::RunMetadata& m) {
  if (!m.checked) {
    // The scenario's message may already begin with the verdict.
    const std::string prefix = "not checked: ";
    return m.verification.rfind(prefix, 0) == 0 ? m.verification : prefix + m.verification;
  }
  return (m.verified ? "yes: " : "NO: ") + m.verification;
}

void print_summary(std::ostream& out, const trace::Trace& t, const trace::TraceStatistics& st) {
  const trace::RunMetadata& m = t.meta;
  out << "scenario    " << m.scenario;
  for (const auto& [k, v] : m.parameters) out << " " << k << "=" << v;
  out << "\npolicy      " << m.policy << " on " << m.backend << ", " << st.workers << " workers\n";
  for (const trace::Device& d : t.devices) {
    out << "device      "
        << (d.kind == trace::DeviceKind::Gpu ? "GPU " + std::to_string(d.index) + ": " : "")
        << d.name << " (" << d.sm_count
        << (d.kind == trace::DeviceKind::Gpu ? " SMs" : " hardware threads") << ", " << d.workers
        << " workers)\n";
  }
  out << "makespan    " << format_ns(static_cast<double>(st.makespan_ns)) << "  (lower bound "
      << format_ns(st.lower_bound_ns);
  if (st.lower_bound == trace::LowerBound::CriticalPath) {
    out << ": the critical path, a chain of " << st.critical_path.chain_tasks()
        << " tasks; busy/workers " << format_ns(st.balance_bound_ns) << ")\n";
  } else {
    out << ": busy/workers)\n";
  }
  out << "tasks       " << st.tasks;
  if (st.makespan_ns > 0)
    out << "  (" << format_rate(static_cast<double>(st.tasks) * 1e9 / st.makespan_ns) << ")";
  out << "\nefficiency  " << format_percent(st.efficiency) << "  busy / (workers x makespan)\n";
  out << "imbalance   " << st.load.imbalance << "  max/mean busy (busy per worker: min "
      << format_ns(static_cast<double>(st.load.min_busy_ns)) << ", mean "
      << format_ns(st.load.mean_busy_ns) << ", max "
      << format_ns(static_cast<double>(st.load.max_busy_ns)) << ")\n";
  if (st.steals + st.failed_steals > 0) {
    out << "steals      " << st.steals << " (failed " << st.failed_steals << ")";
    const bool gpus = std::all_of(t.devices.begin(), t.devices.end(), [](const trace::Device& d) {
      return d.kind == trace::DeviceKind::Gpu;
    });
    if (t.devices.size() > 1)
      out << ", " << st.steals_across_devices << (gpus ? " across GPUs" : " across devices");
    out << "\n";
  }
  if (st.spawned > 0) {
    out << "spawned     " << st.spawned << " tasks by tasks";
    if (st.spawned_named < st.spawned)
      out << " (" << st.spawned_named
          << " named by id, so linked to their parent in a Perfetto export)";
    out << "\n";
  }
  if (m.ranks > 1)
    out << "ranks       " << m.ranks << ", " << st.rank_steals << " chunks moved between them ("
        << st.rank_tasks_moved << " tasks)\n";
  out << "idle polls  " << st.failed_dequeues << " failed dequeue attempts\n";
  out << "events      " << st.events << " recorded, " << st.dropped_events << " dropped"
      << (st.dropped_events
              ? "  (raise --param trace_capacity, or --trace-memory where the budget cut the trace)"
              : "")
      << "\n";
  out << "verified    " << verdict(m) << "\n";
  out << "tasks per worker:\n" << trace::tasks_per_worker_histogram(st);
}

nlohmann::json summary_json(const trace::Trace& t, const trace::TraceStatistics& st) {
  const trace::RunMetadata& m = t.meta;
  nlohmann::json j = {
      {"scenario", m.scenario},
      {"policy", m.policy},
      {"backend", m.backend},
      {"parameters", m.parameters},
      {"verified", m.verified},
      {"checked", m.checked},
      {"verification", m.verification},
      {"makespan_ns", st.makespan_ns},
      {"lower_bound_ns", st.lower_bound_ns},
      {"lower_bound",
       st.lower_bound == trace::LowerBound::CriticalPath ? "critical_path" : "balance"},
      {"balance_bound_ns", st.balance_bound_ns},
      {"critical_path_ns", st.critical_path.bound_ns},
      {"tasks", st.tasks},
      {"workers", st.workers},
      {"efficiency", st.efficiency},
      {"imbalance", st.load.imbalance},
      {"steals", st.steals},
      {"steals_across_devices", st.steals_across_devices},
      {"failed_steals", st.failed_steals},
      {"failed_dequeues", st.failed_dequeues},
      {"spawned", st.spawned},
      {"spawned_named", st.spawned_named},
      {"events", st.events},
      {"dropped_events", st.dropped_events},
      {"gpulb_version", m.gpulb_version},
      {"created_utc", m.created_utc}};
  j["result"] = m.result_json.empty() ? nlohmann::json::object()
                                      : nlohmann::json::parse(m.result_json, nullptr, false);
  nlohmann::json devices = nlohmann::json::array();
  for (const trace::Device& d : t.devices) {
    devices.push_back({{"kind", d.kind == trace::DeviceKind::Gpu ? "gpu" : "cpu"},
                       {"index", d.index},
                       {"name", d.name},
                       {"sm_count", d.sm_count},
                       {"workers", d.workers}});
    if (m.ranks > 1)
      devices.back()["rank"] = d.rank;  // a distributed run: the level above the device
  }
  j["devices"] = devices;
  if (m.ranks > 1) {
    j["ranks"] = m.ranks;
    j["rank_steals"] = st.rank_steals;
    j["rank_tasks_moved"] = st.rank_tasks_moved;
  }
  nlohmann::json workers = nlohmann::json::array();
  for (const trace::WorkerStats& w : st.per_worker) {
    workers.push_back({{"name", t.tracks[w.track].name},
                       {"tasks", w.tasks},
                       {"busy_ns", w.busy_ns},
                       {"failed_dequeues", w.failed_dequeues},
                       {"steals", w.steals}});
  }
  j["per_worker"] = workers;
  return j;
}

}  // namespace gpulb::tools
