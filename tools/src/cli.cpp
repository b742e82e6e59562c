// gpulb: the command line over a registry (gpulb/tools/cli.hpp; tools/src/main.cpp hands it the
// shipped one). Subcommands: list, run, info, export, bench, lesson.
//
// [SECTION] list
// [SECTION] run
// [SECTION] info
// [SECTION] export
// [SECTION] cli_main
//
// `lesson` is in lesson.cpp; what the commands share (exit codes, progress, --param) in cli_common.hpp.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>
#include <tuple>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "gpulb/run.hpp"
#ifdef GPULB_HAVE_MPI
#include "gpulb/distributed/mpi_distribution.hpp"
#include "gpulb/rank_gpus.hpp"
#endif
#include "gpulb/builtin/lesson_series.hpp"
#include "gpulb/builtin/lesson_verdict.hpp"
#include "gpulb/builtin/lessons.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tools/cli.hpp"
#include "gpulb/tools/format.hpp"
#include "gpulb/tools/markdown_tables.hpp"
#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/export_window.hpp"
#include "gpulb/tracing/safe_write.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/time_text.hpp"
#include "gpulb/tracing/trace_limits.hpp"
#include "bench.hpp"
#include "cli_common.hpp"
#include "lesson.hpp"
#include "summary.hpp"

namespace gpulb::tools {
namespace {

// -------------------------------------------------------------------------------------------------
// [SECTION] list
// -------------------------------------------------------------------------------------------------

nlohmann::json param_json(const ParamSpec& p) {
  return {{"name", p.name},
          {"description", p.description},
          {"default", p.default_value},
          {"range", p.range}};
}

std::string backends_of(const Registry& reg, const PolicyDescriptor& p) {
  std::string where;
  for (Backend b : kBackends) {
    if (reg.policy_runs_on(p, b)) where += (where.empty() ? "" : " ") + std::string(to_string(b));
  }
  return where;
}

nlohmann::json traits_json(const PolicyTraits& t) {
  return {{"persistent", t.persistent},
          {"host_fed", t.host_fed},
          {"runs_spawned_tasks", t.runs_spawned_tasks},
          {"cpu_runs_spawned_tasks", t.cpu_runs_spawned_tasks},
          {"host_inserts", t.host_inserts},
          {"runs_requests", t.runs_requests},
          {"distributed", t.distributed}};
}

void print_param(const ParamSpec& p, const char* indent) {
  std::cout << indent << p.name << "=" << p.default_value << "  [" << p.range << "]  "
            << p.description << "\n";
}

// What `gpulb list --json` prints: every scenario and policy with its parameters, the backends
// built and the GPUs found. The tables of README.md are rendered from it (--markdown).
nlohmann::json list_json(const Registry& reg) {
  nlohmann::json j;
  for (const Scenario* s : reg.scenarios()) {
    nlohmann::json params = nlohmann::json::array();
    for (const ParamSpec& p : s->params()) params.push_back(param_json(p));
    j["scenarios"].push_back({{"name", s->name()},
                              {"description", s->description()},
                              {"default_block_size", s->default_block_size({})},
                              {"default_policy", s->default_policy({})},
                              {"parameters", params}});
  }
  for (const PolicyDescriptor* p : reg.policies()) {
    nlohmann::json backends = nlohmann::json::array(), options = nlohmann::json::array();
    for (Backend b : kBackends) {
      if (reg.policy_runs_on(*p, b)) backends.push_back(to_string(b));
    }
    for (const ParamSpec* o : options_of(*p)) options.push_back(param_json(*o));
    j["policies"].push_back({{"name", p->name},
                             {"paper", p->paper},
                             {"summary", p->summary},
                             {"backends", backends},
                             {"traits", traits_json(p->traits)},
                             {"options", options}});
  }
  j["common_options"] = nlohmann::json::array();
  for (const Option<RunOptions>& o : common_options())
    j["common_options"].push_back(param_json(o.spec));
  j["backends"] = {{"cpu", true}, {"cuda", reg.cuda_built()}};
  j["gpus"] = nlohmann::json::array();
  for (const trace::Device& d : reg.cuda_devices())
    j["gpus"].push_back({{"index", d.index}, {"name", d.name}, {"sm_count", d.sm_count}});
  return j;
}

void print_list_text(const Registry& reg) {
  const std::vector<trace::Device> gpus = reg.cuda_devices();
  std::cout << "Scenarios (set parameters with --param name=value):\n";
  for (const Scenario* s : reg.scenarios()) {
    std::cout << "  " << s->name() << "\n      " << s->description() << "\n      (blocks of "
              << s->default_block_size({}) << " threads unless --block-size says otherwise; policy "
              << s->default_policy({}) << " unless --policy says otherwise)\n";
    for (const ParamSpec& p : s->params()) print_param(p, "      ");
  }
  std::cout << "\nPolicies (--policy) and their options (--param name=value):\n";
  for (const PolicyDescriptor* p : reg.policies()) {
    const std::string where = backends_of(reg, *p);
    std::cout << "  " << p->name << std::string(16 - std::min<std::size_t>(15, p->name.size()), ' ')
              << p->summary << "\n"
              << "                  from " << p->paper << "; "
              << traits_text(traits_json(p->traits))
              << "; backends: " << (where.empty() ? "none yet" : where) << "\n";
    for (const ParamSpec& o : p->options.specs()) print_param(o, "                  ");
  }
  std::cout << "\nOptions of every policy (--param name=value):\n";
  for (const Option<RunOptions>& o : common_options()) print_param(o.spec, "  ");
  std::cout << "\nBackends (--backend):\n  cpu   host threads as workers ("
            << std::thread::hardware_concurrency() << " hardware threads here)\n  cuda  "
            << (reg.cuda_built() ? "built" : "not built (no CUDA toolkit at configure time)");
  if (reg.cuda_built()) std::cout << "; " << gpus.size() << " GPU(s) found";
  std::cout << "\n";
  for (const trace::Device& d : gpus)
    std::cout << "        GPU " << d.index << ": " << d.name << ", " << d.sm_count << " SMs\n";
}

int cmd_list(const Registry& reg, bool json, bool markdown) {
  if (json) {
    std::cout << list_json(reg).dump(2) << "\n";
  } else if (markdown) {
    std::cout << markdown_tables(list_json(reg));
  } else {
    print_list_text(reg);
  }
  return 0;
}

// -------------------------------------------------------------------------------------------------
// [SECTION] run
// -------------------------------------------------------------------------------------------------

struct RunArgs {
  std::string scenario;
  std::string policy;  // empty: the scenario's default (gpulb list names it)
  std::string backend;
  std::uint32_t workers = 0;
  std::uint32_t block_size = 0;  // 0: the scenario's default
  std::uint32_t gpus = 0;
  std::vector<std::string> params;
  std::string output;
  std::string trace_memory;  // empty: the default budget
  bool json = false;
  bool no_trace = false;
  bool distributed = false;      // one rank of `mpirun -np N gpulb run ... --distributed`
  std::uint32_t rank_chunk = 0;  // tasks a thief rank asks for (0: rank_chunk_for's default)
  std::uint32_t rank_timeout_ms = 5000;
};

// -o is checked before the run starts, so a long run is never lost to an unwritable path.
void check_output(const RunArgs& a) {
  if (a.output.empty()) return;
  if (a.no_trace) throw ConfigError("-o needs a trace; drop --no-trace");
  trace::check_writable(a.output);
}

// The trace's statistics mean nothing without a trace: null rather than a zero that reads as a
// measurement, except where the policy counted the same thing itself.
void drop_trace_statistics(nlohmann::json& j, const RunResult& r) {
  for (const char* key : {"lower_bound_ns", "efficiency", "imbalance", "failed_dequeues", "spawned",
                          "spawned_named", "events", "dropped_events"}) {
    j[key] = nullptr;
  }
  auto metric = [&](const char* name) {
    const auto it = r.metrics.find(name);
    return it == r.metrics.end() ? nlohmann::json(nullptr) : nlohmann::json(it->second);
  };
  j["steals"] = metric("steals");
  j["failed_steals"] = metric("steals_failed");
}

void print_run_json(const RunArgs& a, const RunResult& r) {
  nlohmann::json j = summary_json(r.trace, r.stats);
  j["makespan_ns"] = r.makespan_ns;  // as the runtime measured it, tracing on or off
  j["tasks"] = r.tasks;
  j["workers"] = r.workers;
  j["trace"] = a.output.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.output);
  j["notes"] = r.notes;
  j["metrics"] = r.metrics;
  if (a.no_trace) drop_trace_statistics(j, r);
  j.erase("per_worker");
  std::cout << j.dump(2) << "\n";
}

// What the policy measured itself (ExecOutput::metrics), one line: e.g. combining's launches by
// reason and its kernel and transfer times.
void print_metrics(const RunResult& r) {
  if (r.metrics.empty()) return;
  std::cout << "measured   ";
  for (const auto& [name, value] : r.metrics) std::cout << " " << name << "=" << value;
  std::cout << "\n";
}

// No events: the figures the runtime measured itself.
void print_untraced_summary(const RunResult& r) {
  std::cout << "scenario    " << r.trace.meta.scenario << "\npolicy      " << r.trace.meta.policy
            << " on " << r.trace.meta.backend << ", " << r.workers << " workers\nmakespan    "
            << format_ns(static_cast<double>(r.makespan_ns)) << "\ntasks       " << r.tasks << "\n";
  if (const auto it = r.metrics.find("steals"); it != r.metrics.end())
    std::cout << "steals      " << it->second << "\n";
  std::cout << "verified    " << verdict(r.trace.meta) << "\n";
  print_metrics(r);
  for (const std::string& n : r.notes) std::cout << "note        " << n << "\n";
}

// `dist`: this process is one rank of a distributed run; rank 0 alone reports and writes the trace.
int cmd_run(const Registry& reg, const RunArgs& a, Distribution* dist = nullptr) {
  const bool reports = dist == nullptr || dist->rank() == 0;
  RunConfig cfg;
  cfg.distribution = dist;
  cfg.scenario = a.scenario;
  cfg.policy = a.policy;
  if (!a.backend.empty()) cfg.backend = parse_backend(a.backend);
  // The library ignores gpus on the cpu backend (one config may serve both); asked for on the
  // command line, it is a mistake to say so.
  if (a.gpus > 0 && cfg.backend == Backend::Cpu) {
    throw ConfigError("--gpus " + std::to_string(a.gpus) +
                      " applies to the cuda backend; the cpu backend runs on --workers threads");
  }
  cfg.workers = a.workers;
  cfg.block_size = a.block_size;
  cfg.gpus = a.gpus;
  cfg.trace = !a.no_trace;
  cfg.params = parse_params(a.params);
  if (!a.trace_memory.empty()) {
    const auto bytes = trace::parse_byte_size(a.trace_memory);
    if (!bytes)
      throw ConfigError("--trace-memory '" + a.trace_memory +
                        "': expected a size such as 512M or 2G");
    cfg.trace_budget = *bytes;
  }
  check_output(a);
  const std::string policy =
      a.policy.empty() ? reg.entry(a.scenario).scenario().default_policy(cfg.params) : a.policy;
  if (reports) cfg.progress = progress_line(a.scenario + " / " + policy);

  RunResult r = run(reg, cfg);
  if (!reports) return 0;  // rank 0 judges the run; main() hands its exit code to every rank
  if (cfg.progress) std::fprintf(stderr, "\r%80s\r", "");
  if (!a.output.empty()) trace::write_trace(a.output, r.trace);

  if (a.json) {
    print_run_json(a, r);
  } else if (!cfg.trace) {
    print_untraced_summary(r);
  } else {
    print_summary(std::cout, r.trace, r.stats);
    print_metrics(r);
    for (const std::string& n : r.notes) std::cout << "note        " << n << "\n";
    std::cout << "trace       " << (a.output.empty() ? "not written (use -o FILE.gpulb)" : a.output)
              << "\n";
  }
  if (!r.checked) return kExitNotChecked;
  return r.verified ? 0 : kExitNotVerified;
}

#ifdef GPULB_HAVE_MPI
// Tasks a thief rank asks for: --rank-chunk, else 4096 under --backend cuda and 20 otherwise (the
// official UTS's chunk). A GPU runs thousands of short tasks in the time a message takes between
// ranks, so a chunk must feed it for longer than that (docs/distributed.md, GPU ranks).
std::uint32_t rank_chunk_for(const RunArgs& a) {
  if (a.rank_chunk != 0) return a.rank_chunk;
  return a.backend == "cuda" ? 4096 : 20;
}

// What every rank of a distributed run must agree on, as a command line: the work (scenario,
// parameters, policy, backend), what is written, and how ranks balance. Parameters sorted, so that
// their order on the command line does not matter. Workers and the trace budget are each rank's own.
std::string distributed_fingerprint(const RunArgs& a) {
  std::vector<std::string> params = a.params;
  std::sort(params.begin(), params.end());
  std::string out = a.scenario + " --policy " + (a.policy.empty() ? "(default)" : a.policy) +
                    " --backend " + (a.backend.empty() ? "(default)" : a.backend);
  for (const std::string& p : params) out += " --param " + p;
  if (!a.output.empty()) out += " -o " + a.output;
  if (a.no_trace) out += " --no-trace";
  out += " --rank-chunk " + std::to_string(rank_chunk_for(a)) + " --rank-timeout " +
         std::to_string(a.rank_timeout_ms);
  return out;
}

// One write a message: ranks print at once, and mpirun would interleave smaller writes.
void say_at_once(const std::string& text) {
  (void)!::write(STDERR_FILENO, text.data(), text.size());
}

void report_differing_ranks(const distributed::MpiSession& session,
                            const distributed::MpiSession::Agreement& agreement,
                            const std::string& command) {
  const std::string rank = std::to_string(session.rank());
  if (std::find(agreement.differing.begin(), agreement.differing.end(), session.rank()) !=
      agreement.differing.end()) {
    say_at_once("gpulb: error: rank " + rank + " of " + std::to_string(session.ranks()) +
                " was started with other arguments than rank 0:\n  rank 0: " +
                agreement.root_command + "\n  rank " + rank + ": " + command + "\n");
  }
  if (session.rank() == 0) {
    say_at_once("gpulb: error: " + std::to_string(agreement.differing.size()) + " of " +
                std::to_string(session.ranks()) +
                " ranks differ from rank 0; every rank of a distributed run must be started with "
                "the same arguments\n");
  }
}

// What rank 0 has done when it ends the run, for the message naming a rank that does not answer
// then: the results are complete on rank 0 by that time, and the trace file (if any) is whole.
std::string run_outcome(const RunArgs& a, int code) {
  const char* verdict = code == 0                  ? "verified"
                        : code == kExitNotVerified ? "NOT verified"
                        : code == kExitNotChecked  ? "not checked"
                                                   : "failed";
  std::string out = "rank 0 had every rank's results, " + std::string(verdict) + " (exit code " +
                    std::to_string(code) + ")";
  if (!a.output.empty()) out += ", and wrote the trace " + a.output + " whole";
  return out;
}
#endif

// One rank of `mpirun -np N gpulb run ... --distributed` (docs/distributed.md). Every rank parses
// the same arguments and builds the same configuration, so a bad one is refused on every rank alike
// (rank 0 says why, every rank exits 2); an error while running is one rank's, which names itself
// and ends the job (MPI_Abort), since the others would wait for it.
int cmd_run_distributed(const Registry& reg, int& argc, char**& argv, const RunArgs& a) {
#ifdef GPULB_HAVE_MPI
  distributed::MpiSession session(argc, argv, a.rank_timeout_ms);
  // Before any work: a rank started with other arguments would run a different job beside the
  // others. Each such rank names itself, and every rank exits 2.
  const std::string command = distributed_fingerprint(a);
  const distributed::MpiSession::Agreement agreement = session.agree_with_root(command);
  if (!agreement.differing.empty()) {
    report_differing_ranks(session, agreement, command);
    return kExitBadInput;
  }
  try {
    distributed::DistributedOptions options;
    options.rank_chunk = rank_chunk_for(a);
    options.timeout_ms = a.rank_timeout_ms;
    distributed::MpiDistribution dist(session, options);
    // A rank's GPUs, before anything calls CUDA: every backend but an explicit cpu may use them.
    if (a.backend != "cpu") {
      const std::string mine = rank_visible_devices(dist.local_rank(), dist.ranks_on_this_host(),
                                                    a.gpus, std::getenv("CUDA_VISIBLE_DEVICES"));
      setenv("CUDA_VISIBLE_DEVICES", mine.c_str(), 1);
    }
    const int code = cmd_run(reg, a, &dist);
    return session.end_run(code, run_outcome(a, code), dist.end_wait_limit());
  } catch (const ConfigError& e) {
    if (session.rank() == 0) std::cerr << "gpulb: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const trace::OutputPathError& e) {
    if (session.rank() == 0) std::cerr << "gpulb: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gpulb: error: rank " << session.rank() << " of " << session.ranks() << ": "
              << e.what() << "\n";
    session.abort(kExitRunFailed);
  }
#else
  (void)reg, (void)argc, (void)argv, (void)a;
  throw ConfigError(
      "--distributed needs MPI, and this gpulb was built without it (configure with -DGPULB_MPI=ON "
      "where "
      "Open MPI is installed: scripts/install-deps.sh installs it)");
#endif
}

// -------------------------------------------------------------------------------------------------
// [SECTION] info
// -------------------------------------------------------------------------------------------------

// A result too large or too deep to parse safely (the file is untrusted) is shown clipped, as text.
constexpr std::size_t kMaxResultJsonBytes = std::size_t{1} << 20;

void put_result(nlohmann::json& j, const std::string& result_json) {
  if (result_json.empty()) return;
  trace::BoundedJson parsed = trace::parse_json_bounded(result_json, kMaxResultJsonBytes);
  if (parsed.value) {
    j["result"] = std::move(*parsed.value);
    return;
  }
  j["result"] = trace::clip_for_display(result_json, 1000);
  j["result_note"] = "result_json not parsed: " + parsed.refusal + "; shown as clipped text";
}

int cmd_info(const std::string& file, bool json, const std::string& max_memory) {
  trace::Trace t = trace::read_trace(file, read_limits(max_memory));
  const trace::TraceStatistics st = trace::compute_statistics(t);
  if (json) {
    // summary_json would parse the untrusted result_json without limits: take it out first.
    const std::string result_json = std::move(t.meta.result_json);
    t.meta.result_json.clear();
    nlohmann::json j = summary_json(t, st);
    put_result(j, result_json);
    j["file"] = file;
    // Strings from the file may not be UTF-8 (a damaged track name): U+FFFD, not an exception.
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "file        " << file << " (gpulb " << t.meta.gpulb_version << ", "
              << t.meta.created_utc << ", clock " << t.meta.clock_source << ")\n";
    print_summary(std::cout, t, st);
  }
  return 0;
}

// -------------------------------------------------------------------------------------------------
// [SECTION] export
// -------------------------------------------------------------------------------------------------

// --range START:END from the run's start (its first worker event), as the viewer's rulers count:
// "300us:400us", "1ms:1.1ms", "0:5000" (ns); either side may be empty (the run's start, its end).
struct RangeFromStart {
  std::optional<double> begin_ns, end_ns;
};

RangeFromStart parse_range(const std::string& text) {
  RangeFromStart r;
  if (text.empty()) return r;
  const auto colon = text.find(':');
  const auto bad = [&](const std::string& why) {
    return ConfigError("--range '" + text + "': " + why +
                       "; expected START:END from the run's start, e.g. 300us:400us or 1ms:");
  };
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw bad("one colon");
  for (const auto& [part, into] : {std::pair{text.substr(0, colon), &r.begin_ns},
                                   std::pair{text.substr(colon + 1), &r.end_ns}}) {
    if (part.empty()) continue;
    *into = trace::parse_time_ns(part);
    if (!*into) throw bad("'" + part + "' is no time (a number with ns, us, ms or s)");
  }
  if (r.begin_ns && r.end_ns && *r.end_ns <= *r.begin_ns) throw bad("END must be after START");
  return r;
}

// The range on the trace's own clock: offsets from its first worker event.
trace::TimeRange clock_range(const trace::Trace& t, const RangeFromStart& r) {
  trace::TimeRange out;
  if (!r.begin_ns && !r.end_ns) return out;
  const std::uint64_t start = trace::compute_statistics(t).begin_ns;
  const auto at = [&](double offset) {
    const double ns = static_cast<double>(start) + offset;
    return ns >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max()
                        : static_cast<std::uint64_t>(ns);
  };
  if (r.begin_ns) out.begin_ns = at(*r.begin_ns);
  if (r.end_ns) out.end_ns = at(*r.end_ns);
  return out;
}

constexpr const char* kExportFormatsHelp =
    "Formats:\n"
    "  perfetto  Perfetto's own protobuf trace (.pftrace; opens in ui.perfetto.dev, or "
    "trace_processor):\n"
    "            tracks rank > device > SM > worker and host thread; a slice per task named by its "
    "kind,\n"
    "            with its task_id; steals as flows from the victim to the thief, spawns from the "
    "parent's\n"
    "            spawn_batch to each child's slice; failed dequeues,\n"
    "            spawns, launches, transfers and host decisions as instants with their arguments "
    "by name;\n"
    "            counter tracks per device: busy workers, the deques' sum, each queue, the host "
    "pool.\n"
    "            The UTS T1 trace (CPU): 65 bytes a task, 44 of them without its spawn flows; 2.3 "
    "times\n"
    "            less than the JSON (docs/benchmarks.md).\n"
    "  chrome    Chrome trace event JSON (.json; opens in ui.perfetto.dev and chrome://tracing): a "
    "thread\n"
    "            per track, a complete event per task, instants with named arguments, queue levels "
    "as\n"
    "            counters. The UTS T1 trace: 150 bytes a task.\n"
    "  csv       Four tables for analysis (pandas, R, a spreadsheet; docs/viewer.md names every "
    "column):\n"
    "            -o run.csv writes the tasks there and run.workers.csv (a row per worker), "
    "run.events.csv\n"
    "            (steals, failed dequeues, spawns, launches, transfers: a row each, a column per "
    "argument)\n"
    "            and run.levels.csv (queue, deque and host pool levels over time) beside it.\n"
    "Every format covers the export window: the run (first to last worker event) and the host "
    "work\n"
    "around it (the first kernel launch, and host events each within a tenth of the makespan of "
    "the\n"
    "next); a host event further out is left out and counted in a note. Times are in ns (JSON: "
    "us)\n"
    "from the window's start, the same clock in every format; --range cuts the window further.\n";

int cmd_export(const std::string& file, const std::string& format, const std::string& output,
               const std::string& range, const std::string& max_memory) {
  const RangeFromStart from_start = parse_range(range);
  const trace::ReadLimits limits = read_limits(max_memory);
  const trace::ExportFormat fmt = format == "perfetto" ? trace::ExportFormat::Perfetto
                                  : format == "chrome" ? trace::ExportFormat::Chrome
                                                       : trace::ExportFormat::Csv;
  // Refuse unusable outputs before reading (a large trace takes a while): the input itself (also
  // through a link), a directory, a device, a folder that is missing or not writable.
  for (const auto& p : trace::export_paths(fmt, output)) {
    trace::refuse_inputs(p, {file}, "-o");
    trace::check_writable(p);
  }
  const trace::Trace t = trace::read_trace(file, limits);
  const trace::TimeRange requested = clock_range(t, from_start);
  const auto written = trace::export_trace(t, fmt, output, requested);
  for (const auto& p : written) std::cout << "wrote " << p.string() << "\n";
  const trace::ExportWindow window = trace::export_window(t, requested);
  if (window.left_out > 0) {
    std::cout
        << "note: " << window.left_out << (window.left_out == 1 ? " host event" : " host events")
        << " far from the run left out of the export (gpulb export --help: the export window)\n";
  }
  return 0;
}

}  // namespace

// -------------------------------------------------------------------------------------------------
// [SECTION] cli_main
// -------------------------------------------------------------------------------------------------

int cli_main(int argc, char** argv, const Registry& registry) {
  CLI::App app{
      "gpulb: run GPU load-balancing schedulers on scenarios, trace every worker, inspect and "
      "export the traces"};
  app.footer(kExitCodesHelp);
  app.require_subcommand(1);

  bool list_json = false, list_markdown = false;
  auto* list = app.add_subcommand(
      "list", "List scenarios with their parameters, policies, backends and the GPUs found");
  auto* list_json_flag = list->add_flag("--json", list_json, "Print JSON");
  list->add_flag("--markdown", list_markdown,
                 "Print the tables of policies and scenarios that README.md holds (rendered from "
                 "--json's object, without what depends on the build)")
      ->excludes(list_json_flag);

  RunArgs ra;
  auto* run = app.add_subcommand(
      "run", "Run a scenario under a policy, verify it, optionally write its trace");
  run->add_option("scenario", ra.scenario, "Scenario name (see gpulb list)")->required();
  run->add_option("-p,--policy", ra.policy,
                  "Policy (see gpulb list; default: the scenario's, which gpulb list names: "
                  "work-stealing for uts, nqueens and connect4, "
                  "combining for nbody and md2d, the solution's for md, task-queue otherwise)");
  run->add_option("-b,--backend", ra.backend,
                  "cpu or cuda (default: cuda where a GPU is present, else cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  run->add_option(
         "-w,--workers", ra.workers,
         "Workers: CPU threads, or persistent blocks per GPU (default: all the hardware holds)")
      ->check(CLI::Range(1u, 1u << 20));
  run->add_option("--block-size", ra.block_size,
                  "Threads per worker block (default: the scenario's, shown by gpulb list)")
      ->check(CLI::Range(1u, 1024u));
  run->add_option(
         "--gpus", ra.gpus,
         "CUDA: GPUs to use (default: all under task-queue, hardware, chunked; one GPU under the "
         "others; work-stealing and static-list run across N GPUs with --gpus N)")
      ->check(CLI::Range(1u, 64u));
  run->add_option("--param", ra.params, "Scenario or policy parameter name=value (repeatable)");
  run->add_option("-o,--output", ra.output, "Write the trace to this .gpulb file");
  run->add_flag("--json", ra.json, "Print one JSON object instead of the text summary");
  run->add_flag("--no-trace", ra.no_trace, "Do not record events (to measure tracing overhead)");
  run->add_option("--trace-memory", ra.trace_memory,
                  "Most memory the trace may take on each process (512M, 2G; default: a quarter of "
                  "the memory this process may use, shared by the ranks on a host; a --distributed "
                  "rank's segments get 1/ranks of it, so that rank 0 can merge every rank's)");
  run->add_flag("--distributed", ra.distributed,
                "One rank of a run over MPI ranks: mpirun -np N gpulb run ... --distributed (cpu "
                "backend: work-stealing, task-queue; cuda backend: task-queue, each rank on --gpus "
                "GPUs of its host, default 1; docs/distributed.md)");
  run->add_option("--rank-chunk", ra.rank_chunk,
                  "--distributed: tasks an idle rank steals from another at once (default: 4096 "
                  "under --backend cuda, else 20)")
      ->check(CLI::Range(1u, 1u << 16));
  run->add_option("--rank-timeout", ra.rank_timeout_ms,
                  "--distributed: ms after which a rank that answers nothing is named and the job "
                  "ends (MPI's start and end, and the gather of the results: 4 x this)")
      ->check(CLI::Range(100u, 3'600'000u))
      ->capture_default_str();

  std::string info_file, info_max_memory;
  bool info_json = false;
  auto* info = app.add_subcommand(
      "info", "Summarize a trace file: makespan, efficiency, imbalance, tasks per worker");
  info->add_option("file", info_file, "A .gpulb trace")->required();
  info->add_flag("--json", info_json, "Print JSON");
  info->add_option("--max-memory", info_max_memory,
                   "Refuse a trace whose decoding needs more memory than this (512M, 2G; default: "
                   "a quarter of physical memory)");

  std::string ex_file, ex_format, ex_output, ex_range, ex_max_memory;
  auto* ex =
      app.add_subcommand("export", "Export a trace in Perfetto's format, as Chrome JSON or as CSV");
  ex->add_option("file", ex_file, "A .gpulb trace")->required();
  ex->add_option("-f,--format", ex_format, "perfetto, chrome or csv (below)")
      ->required()
      ->check(CLI::IsMember({"perfetto", "chrome", "csv"}));
  ex->add_option("-o,--output", ex_output,
                 "Output file (csv: the tasks table; the other tables go beside it)")
      ->required();
  ex->footer(std::string(kExportFormatsHelp) + "\n" + kExitCodesHelp);
  ex->add_option("--range", ex_range,
                 "Only events in START:END from the run's start (its first worker event): "
                 "300us:400us, 1ms:1.1ms, 0:5000 (ns); either side may be empty");
  ex->add_option("--max-memory", ex_max_memory,
                 "Refuse a trace whose decoding needs more memory than this (512M, 2G; default: a "
                 "quarter of physical memory)");

  BenchArgs ba;
  auto* bench = app.add_subcommand(
      "bench",
      "Measure dispatch cost, the queue operations, Chen Figure 7 (patterns), tracing overhead, "
      "the spawning scenarios (uts, nqueens), G-Charm's kernel combining and hybrid CPU+GPU "
      "scheduling (combining, hybrid) and Chen section 6 (md, on request); print Markdown tables");
  bench
      ->add_option(
          "what", ba.what,
          "dispatch, queue, patterns, trace-overhead, uts, nqueens, combining, hybrid or all; md "
          "(Chen Figures 5, 8-10), scale (each dynamic policy on 1, 2, 4, ... GPUs; not in all)")
      ->check(CLI::IsMember({"dispatch", "queue", "patterns", "trace-overhead", "uts", "nqueens",
                             "combining", "hybrid", "all", "md", "scale"}))
      ->capture_default_str();
  bench->add_option("-b,--backend", ba.backend, "cpu or cuda (default: both where present)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  bench->add_option("--tasks", ba.tasks, "Empty tasks per dispatch measurement")
      ->check(CLI::Range(1000ull, 100'000'000ull))
      ->capture_default_str();
  bench->add_option("--repeats", ba.repeats, "Runs per figure (the median is reported)")
      ->check(CLI::Range(1u, 100u))
      ->capture_default_str();
  bench->add_option("-o,--output", ba.output,
                    "Also write the tables to this .md file, and JSON beside it");
  bench
      ->add_option("--tree", ba.tree,
                   "uts: one sample tree for every policy, blocking-queue left out of the large "
                   "trees T1L, T2L, T3L, T1XL (default: T1 with every policy, then T1L); scale: "
                   "one tree (default: T1L, T2L, T3L, T1XL)")
      ->check(CLI::IsMember({"T1", "T2", "T3", "T4", "T5", "T1L", "T2L", "T3L", "T1XL"}));
  bench
      ->add_option("--uts-leaves", ba.uts_leaves,
                   "uts: the scenario's leaves: task (a task per node) or inline (a leaf child "
                   "counted by its parent's task; "
                   "nodes/s counts every node either way)")
      ->check(CLI::IsMember({"task", "inline"}));
  bench->add_option(
      "--peer-uts", ba.peer_uts,
      "uts: the official UTS's run script, run beside the CPU backend (default: $GPULB_PEER_UTS, "
      "else scripts/uts-peer.sh, which adds the peer's per-thread nodes, where "
      "../shared/peers/uts-1.1 is present, else ../shared/peers/run-uts-peer.sh)");
  bench
      ->add_option("--particles", ba.particles,
                   "combining, hybrid: particles of nbody and md2d (default: 200000 on a GPU, "
                   "20000 on the CPU)")
      ->check(CLI::Range(64u, 4194304u));
  bench->add_option("--queens", ba.queens, "nqueens: board size")
      ->check(CLI::Range(4u, 18u))
      ->capture_default_str();
  bench
      ->add_option("--cutoff", ba.cutoff,
                   "nqueens: rows placed by tasks, the rest sequentially within a task")
      ->check(CLI::Range(0u, 18u))
      ->capture_default_str();

  bench->add_option("--md-sizes", ba.md_sizes,
                    "md: atoms for Figures 5 and 8, comma-separated (default: 4096,8192,16384 on "
                    "the CPU; 32768 to 1048576 on GPUs)");
  bench->add_option("--md-atoms", ba.md_atoms, "md: atoms for Figures 9 and 10")
      ->check(CLI::Range(128u, 1u << 22))
      ->capture_default_str();
  bench
      ->add_option("--md-pairs", ba.md_pairs,
                   "md: pair search, cells (a task costs its atoms' local density) or all (every "
                   "atom tests all N, the paper's Theta(N^2))")
      ->check(CLI::IsMember({"cells", "all"}))
      ->capture_default_str();

  LessonArgs la;
  CLI::App* lesson = add_lesson_command(app, la);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }

  try {
    // An empty name given on purpose (-o '') is an error, not "no output": it wrote nothing with exit 0.
    for (const auto& [sub, value] : {std::pair<CLI::App*, const std::string*>{run, &ra.output},
                                     {ex, &ex_output},
                                     {bench, &ba.output}}) {
      if (*sub && sub->count("--output") > 0 && value->empty())
        throw gpulb::ConfigError("-o '': expected a file name");
    }
    // Likewise an empty size: it was taken as the default budget.
    for (const auto& [sub, option, value] : {std::tuple<CLI::App*, const char*, const std::string*>{
                                                 run, "--trace-memory", &ra.trace_memory},
                                             {info, "--max-memory", &info_max_memory},
                                             {ex, "--max-memory", &ex_max_memory}}) {
      if (*sub && sub->count(option) > 0 && value->empty())
        throw gpulb::ConfigError(std::string(option) + " '': expected a size such as 512M or 2G");
    }
    if (*list) return cmd_list(registry, list_json, list_markdown);
    if (*run && !ra.distributed &&
        (run->count("--rank-chunk") > 0 || run->count("--rank-timeout") > 0)) {
      throw gpulb::ConfigError("--rank-chunk and --rank-timeout apply to --distributed runs only");
    }
    if (*run)
      return ra.distributed ? cmd_run_distributed(registry, argc, argv, ra) : cmd_run(registry, ra);
    if (*info) return cmd_info(info_file, info_json, info_max_memory);
    if (*ex) return cmd_export(ex_file, ex_format, ex_output, ex_range, ex_max_memory);
    if (*lesson) return cmd_lesson(registry, la);
    if (*bench) {
      for (int i = 0; i < argc; ++i)
        ba.command_line += (i ? " " : "") + std::string(i ? argv[i] : "gpulb");
      return cmd_bench(ba);
    }
  } catch (const gpulb::ConfigError& e) {
    std::cerr << "gpulb: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const gpulb::trace::TraceFileError& e) {
    std::cerr << "gpulb: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const gpulb::builtin::SeriesError& e) {
    std::cerr << "gpulb: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const gpulb::trace::OutputPathError&
               e) {  // an output that must not be written: a bad argument
    std::cerr << "gpulb: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gpulb: error: " << e.what() << "\n";
    return kExitRunFailed;
  }
  return 0;
}

}  // namespace gpulb::tools
