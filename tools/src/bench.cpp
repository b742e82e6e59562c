#include "bench.hpp"
#include "bench_table.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "gpulb/clock.hpp"
#include "gpulb/cpu/execute.hpp"
#include "gpulb/empty_body.hpp"
#include "gpulb/policies/chunked.hpp"
#include "gpulb/policies/hardware.hpp"
#include "gpulb/policies/task_queue.hpp"
#include "gpulb/run.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/tools/format.hpp"
#include "gpulb/tracing/safe_write.hpp"
#ifdef GPULB_HAVE_CUDA_BACKEND
#include "gpulb/kernels/bench.hpp"
#endif

namespace gpulb::tools {
namespace {

std::vector<Task> empty_tasks(std::uint64_t n) {
  std::vector<Task> t(n);
  for (std::uint64_t i = 0; i < n; ++i) t[i].id = static_cast<std::uint32_t>(i);
  return t;
}

// ---- CPU ---------------------------------------------------------------------------------------

double cpu_atomic_ceiling_ns(std::uint32_t threads) {
  alignas(128) std::atomic<std::uint64_t> counter{0};
  const std::uint64_t per_thread = 2'000'000;
  std::vector<std::thread> pool;
  const std::uint64_t t0 = host_now_ns();
  for (std::uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::uint64_t i = 0; i < per_thread; ++i)
        counter.fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto& t : pool) t.join();
  return static_cast<double>(host_now_ns() - t0) / static_cast<double>(per_thread * threads);
}

double cpu_empty_seconds(const PolicyDescriptor* policy, const std::vector<Task>& tasks,
                         std::uint32_t capacity) {
  ExecPlan plan;
  plan.policy = policy;
  plan.trace = false;
  plan.tasks = tasks;
  plan.block_size = 1;
  plan.options = parse_policy_options(*policy, {{"queue_capacity", std::to_string(capacity)}});
  return static_cast<double>(cpu::execute(plan, EmptyBody{}).makespan_ns) / 1e9;
}

Table cpu_dispatch(const BenchArgs& a) {
  const std::uint32_t workers = cpu::default_workers();
  Table t{"dispatch: empty tasks per second, CPU backend (" + std::to_string(workers) +
              " worker threads)",
          "Reference: one std::atomic fetch_add counter hammered by every worker thread, measured "
          "in the same run.",
          {"policy", "tasks", "tasks/s", "ns per task", "x ceiling"},
          {}};
  progress("cpu atomic ceiling");
  const double ceiling = cpu_atomic_ceiling_ns(workers);
  t.rows.push_back({"one shared fetch_add (ceiling)", "-", format_rate(1e9 / ceiling),
                    fixed(ceiling, 2), "1.00"});
  const auto tasks = empty_tasks(a.tasks);
  struct Row {
    const char* name;
    const PolicyDescriptor* policy;
    std::uint32_t capacity;
  };
  for (const Row& r : {Row{"hardware", &policies::hardware(), 0},
                       Row{"task-queue (capacity 128)", &policies::task_queue(), 128},
                       Row{"task-queue (capacity 4096)", &policies::task_queue(), 4096}}) {
    progress(std::string("cpu ") + r.name);
    std::vector<double> s;
    for (std::uint32_t i = 0; i < a.repeats; ++i)
      s.push_back(cpu_empty_seconds(r.policy, tasks, r.capacity));
    const double sec = median(s), ns = sec * 1e9 / static_cast<double>(tasks.size());
    t.rows.push_back({r.name, std::to_string(tasks.size()), format_rate(tasks.size() / sec),
                      fixed(ns, 2), fixed(ns / ceiling, 2)});
    t.json.push_back({{"backend", "cpu"},
                      {"policy", r.name},
                      {"tasks", tasks.size()},
                      {"ns_per_task", ns},
                      {"ceiling_ns", ceiling}});
  }
  return t;
}

// ---- tracing overhead (both backends through gpulb::run) -----------------------------------------

Table trace_overhead(const BenchArgs& a, Backend backend) {
  const Registry& reg = builtin::registry();
  const bool gpu = backend == Backend::Cuda;
  Table t{std::string("trace-overhead: makespan with tracing on vs off, ") +
              std::string(to_string(backend)) + " backend",
          "Median of " + std::to_string(a.repeats) +
              " runs each, on and off interleaved, each round's first run alternating between "
              "them; makespan as "
              "the runtime measures it (first launch to last end). "
              "Every policy on patterns P0 (long tasks), the spawning ones also on UTS T1 (4.1 M "
              "short nodes; on a GPU work-stealing's task_per=lane "
              "also on T1L), and the request ones on nbody "
              "under strategy=static: adaptive combining's launches follow the clock, so its runs "
              "differ in launches from one to the next, traced or "
              "not, and the tracing cost per launch is the same under either strategy. Under "
              "hybrid, strategy=static fixes the CPU's share; its "
              "batches are still formed adaptively (request_loop.hpp, run_hybrid), so that row "
              "keeps the run-to-run spread of a host-bound run." +
              (gpu ? ""
                   : " CPU: 'worker CPU' divides the medians of the worker threads' CPU time "
                     "(metric worker_cpu_us), which other load on a shared machine disturbs far "
                     "less than the makespan.") +
              " 'off: slowest / fastest' is the untraced runs' own spread: where it is above 1.02, "
              "the machine moved a row more than the 2% a trace may cost, and its on / off shows "
              "nothing finer.",
          {"policy", "workload", "off", "on", "on / off", "worker CPU on / off",
           "off: slowest / fastest"},
          {}};
  struct Row {
    std::string policy, variant, scenario, workload;
    ParamMap params;
  };
  const std::string blocks = gpu ? "100000" : "20000";
  const std::string work = gpu ? "2000" : "200";
  const ParamMap p0 = {{"pattern", "P0"}, {"blocks", blocks}, {"work", work}};
  const std::string p0_name = "P0 " + blocks + " x " + work;
  std::vector<Row> rows = {{"task-queue", "paper", "patterns", p0_name, p0},
                           {"hardware", "", "patterns", p0_name, p0}};
  if (gpu)
    rows.insert(rows.begin() + 1,
                Row{"task-queue", "modern", "patterns", p0_name, p0});  // the default: copy feed
  for (const char* policy : {"chunked", "static-list", "blocking-queue", "work-stealing"})
    rows.push_back({policy, "", "patterns", p0_name, p0});
  // On a GPU one lock for 4224 blocks takes UTS T1 half a minute (docs/benchmarks.md): the
  // blocking queue's GPU row is P0's.
  for (const char* policy : {"work-stealing", "static-list", "blocking-queue"}) {
    if (!(gpu && std::string(policy) == "blocking-queue"))
      rows.push_back({policy, "", "uts", "UTS T1", {{"tree", "T1"}}});
  }
  // A task a thread (work_stealing_lanes.cuh): each thread writes its task's two events; T1L's
  // 20 ms runs as well as T1's 1.4 ms ones.
  if (gpu) {
    for (const char* tree : {"T1", "T1L"}) {
      rows.push_back({"work-stealing",
                      "lane",
                      "uts",
                      std::string("UTS ") + tree,
                      {{"tree", tree}, {"task_per", "lane"}}});
    }
  }
  for (const char* policy : {"combining", "hybrid"})
    rows.push_back({policy, "", "nbody", "nbody (strategy=static)", {{"strategy", "static"}}});
  for (const Row& r : rows) {
    const std::string label = r.policy + (r.variant == "modern" ? " (modern)"
                                          : r.variant == "lane" ? " (task_per=lane)"
                                                                : "");
    progress("trace overhead " + label + " " + r.workload + " on " +
             std::string(to_string(backend)));
    std::vector<double> on, off, cpu_on, cpu_off;
    for (std::uint32_t i = 0; i < a.repeats; ++i) {
      // Off first in even rounds, on first in odd ones: neither always runs on the warmer machine.
      for (bool trace : {i % 2 == 1, i % 2 == 0}) {
        RunConfig c;
        c.scenario = r.scenario;
        c.policy = r.policy;
        c.backend = backend;
        c.trace = trace;
        c.params = r.params;
        if (c.policy == "task-queue") {  // the options only task-queue takes
          c.params["variant"] = r.variant;
          if (gpu && r.variant == "paper") c.params["queue_capacity"] = "4096";
        }
        const RunResult res = run(reg, c);
        if (!res.verified)
          throw RunError("bench trace-overhead: run did not verify: " + res.verification);
        (trace ? on : off).push_back(static_cast<double>(res.makespan_ns));
        if (auto it = res.metrics.find("worker_cpu_us"); it != res.metrics.end())
          (trace ? cpu_on : cpu_off).push_back(static_cast<double>(it->second));
      }
    }
    const double m_on = median(on), m_off = median(off);
    const bool cpu_time = !cpu_on.empty() && !cpu_off.empty() && median(cpu_off) > 0;
    const double cpu_ratio = cpu_time ? median(cpu_on) / median(cpu_off) : 0.0;
    const double off_spread =
        *std::max_element(off.begin(), off.end()) / *std::min_element(off.begin(), off.end());
    t.rows.push_back({label, r.workload, format_ns(m_off), format_ns(m_on), fixed(m_on / m_off, 3),
                      cpu_time ? fixed(cpu_ratio, 3) : "-", fixed(off_spread, 3)});
    t.json.push_back({{"backend", to_string(backend)},
                      {"policy", label},
                      {"workload", r.workload},
                      {"off_ns", m_off},
                      {"on_ns", m_on},
                      {"ratio", m_on / m_off},
                      {"off_spread", off_spread}});
    if (cpu_time) t.json.back()["worker_cpu_ratio"] = cpu_ratio;
  }
  return t;
}

// ---- patterns: Chen et al. Figure 7 -------------------------------------------------------------

Table patterns_figure7(const BenchArgs& a, Backend backend) {
  const Registry& reg = builtin::registry();
  const bool gpu = backend == Backend::Cuda;
  const std::string blocks = gpu ? "100000" : "8000", work = gpu ? "4000" : "400";
  Table t{std::string("patterns: Chen et al. Figure 7, runtime per pattern, ") +
              std::string(to_string(backend)) + " backend",
          "blocks=" + blocks + " work=" + work + " (steps per thread), median of " +
              std::to_string(a.repeats) +
              " runs, the rows and patterns interleaved round by round. 'vs P0' is the runtime "
              "saved against P0; the work saved is 0% (P0), 50% (P1-P3), 75% (P4). "
              "The paper (2009 GPU) saw P4 save 74.5% under the task queue and 48.4% under "
              "Solution 1 (hardware).",
          {"policy", "P0", "P1 (vs P0)", "P2 (vs P0)", "P3 (vs P0)", "P4 (vs P0)"},
          {}};
  struct Row {
    const char* label;
    const char* policy;
    const char* variant;
    const char* capacity;
  };
  std::vector<Row> rows = {{"hardware", "hardware", "paper", "128"},
                           {"task-queue paper, 2 x 4096", "task-queue", "paper", "4096"}};
  if (gpu)
    rows.push_back(
        {"task-queue modern mapped feed, 2 x 4096", "task-queue", "modern-mapped", "4096"});
  if (gpu)
    rows.push_back({"task-queue modern copy feed, 2 x 4096", "task-queue", "modern-2", "4096"});
  if (gpu)
    rows.push_back(
        {"task-queue default (modern, copy feed, chosen shape)", "task-queue", "modern", ""});
  if (gpu) rows.push_back({"chunked", "chunked", "paper", "128"});
  // Round by round, each pattern under every row, the order of the rows and of the patterns
  // rotating from round to round: a slow drift of the machine (clocks, temperature, the host) over
  // the minute the bench takes lands on every row and pattern alike, not on those that run last.
  constexpr std::array<const char*, 5> kPatterns = {"P0", "P1", "P2", "P3", "P4"};
  std::vector<std::array<std::vector<double>, kPatterns.size()>> ms(rows.size());
  for (std::uint32_t i = 0; i < a.repeats; ++i) {
    progress("patterns round " + std::to_string(i + 1) + " of " + std::to_string(a.repeats) +
             " on " + std::string(to_string(backend)));
    for (std::size_t q = 0; q < kPatterns.size(); ++q) {
      const std::size_t pi = (q + i) % kPatterns.size();
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const std::size_t ri = (k + i) % rows.size();
        const Row& r = rows[ri];
        RunConfig c;
        c.scenario = "patterns";
        c.policy = r.policy;
        c.backend = backend;
        c.trace = false;
        c.gpus = gpu ? 1 : 0;
        c.params = {{"pattern", kPatterns[pi]}, {"blocks", blocks}, {"work", work}};
        if (c.policy == "task-queue") {
          const std::string variant = r.variant;
          c.params["variant"] = variant == "paper" ? "paper" : "modern";
          if (variant == "modern-mapped") c.params["feed"] = "mapped";
          if (variant == "modern-2") c.params["queues"] = "2";
          if (!std::string(r.capacity).empty()) c.params["queue_capacity"] = r.capacity;
        }
        const RunResult res = run(reg, c);
        if (!res.verified)
          throw RunError(std::string("bench patterns: ") + r.label + " " + kPatterns[pi] +
                         " did not verify");
        ms[ri][pi].push_back(static_cast<double>(res.makespan_ns) / 1e6);
      }
    }
  }
  for (std::size_t ri = 0; ri < rows.size(); ++ri) {
    std::vector<std::string> cells = {rows[ri].label};
    nlohmann::json j = {{"backend", to_string(backend)}, {"policy", rows[ri].label}};
    const double p0 = median(ms[ri][0]);
    for (std::size_t pi = 0; pi < kPatterns.size(); ++pi) {
      const double m = median(ms[ri][pi]);
      cells.push_back(pi == 0 ? fixed(m, 3) + " ms"
                              : fixed(m, 3) + " ms (" + fixed(100.0 * (1.0 - m / p0), 1) + "%)");
      j[kPatterns[pi]] = m;
    }
    t.rows.push_back(cells);
    t.json.push_back(j);
  }
  return t;
}

// ---- GPU -----------------------------------------------------------------------------------------

#ifdef GPULB_HAVE_CUDA_BACKEND
Table gpu_dispatch(const BenchArgs& a) {
  const auto gpus = builtin::registry().cuda_devices();
  Table t{"dispatch: empty tasks per second, " + gpus[0].name + " (GPU 0)",
          "Reference: fetch-and-add on one global address by thread 0 of every resident block, "
          "measured in the same run. "
          "Times are host-observed, first launch to last kernel end.",
          {"policy", "tasks", "tasks/s", "ns per task", "x ceiling"},
          {}};
  progress("gpu atomic ceiling");
  const double ceiling = kernels::atomic_ceiling_ns(0);
  t.rows.push_back({"one-address atomicAdd (ceiling)", "-", format_rate(1e9 / ceiling),
                    fixed(ceiling, 3), "1.00"});
  t.json.push_back({{"backend", "cuda"}, {"policy", "ceiling"}, {"ns_per_task", ceiling}});
  const auto tasks = empty_tasks(a.tasks);
  struct Row {
    std::string name;
    const PolicyDescriptor* policy;
    QueueVariant variant;
    QueueFeed feed;
    std::uint32_t queues, capacity, claim;  // 0: the policy's default
  };
  const std::vector<Row> rows = {
      {"hardware (one launch)", &policies::hardware(), QueueVariant::Paper, QueueFeed::Copy, 0, 0,
       0},
      {"chunked (chunk = resident blocks)", &policies::chunked(), QueueVariant::Paper,
       QueueFeed::Copy, 0, 0, 0},
      {"task-queue paper, 2 queues x 128", &policies::task_queue(), QueueVariant::Paper,
       QueueFeed::Copy, 2, 128, 1},
      {"task-queue paper, 8 queues x 4096", &policies::task_queue(), QueueVariant::Paper,
       QueueFeed::Copy, 8, 4096, 1},
      {"task-queue modern mapped feed, 8 x 4096, claim 8", &policies::task_queue(),
       QueueVariant::Modern, QueueFeed::Mapped, 8, 4096, 8},
      {"task-queue modern copy feed, 8 x 4096, claim 1", &policies::task_queue(),
       QueueVariant::Modern, QueueFeed::Copy, 8, 4096, 1},
      {"task-queue modern copy feed, 8 x 4096, claim 32", &policies::task_queue(),
       QueueVariant::Modern, QueueFeed::Copy, 8, 4096, 32},
      {"task-queue default (modern, copy feed, chosen shape, claim 8)", &policies::task_queue(),
       QueueVariant::Modern, QueueFeed::Copy, 0, 0, 0},
  };
  for (const Row& r : rows) {
    progress("gpu " + r.name);
    ExecPlan plan;
    plan.policy = r.policy;
    plan.backend = Backend::Cuda;
    plan.gpus = 1;
    plan.trace = false;
    plan.tasks = tasks;
    // The row's task-queue options, as --param gives them (a policy without them ignores them).
    ParamMap options{{"variant", choice_text(r.variant)}, {"feed", choice_text(r.feed)}};
    if (r.queues) options["queues"] = std::to_string(r.queues);
    if (r.capacity) options["queue_capacity"] = std::to_string(r.capacity);
    if (r.claim) options["claim"] = std::to_string(r.claim);
    plan.options = parse_policy_options(*r.policy, options);
    std::vector<double> s;
    for (std::uint32_t i = 0; i < a.repeats; ++i) s.push_back(kernels::empty_task_seconds(plan));
    const double sec = median(s), ns = sec * 1e9 / static_cast<double>(tasks.size());
    t.rows.push_back({r.name, std::to_string(tasks.size()), format_rate(tasks.size() / sec),
                      fixed(ns, 3), fixed(ns / ceiling, 2)});
    t.json.push_back({{"backend", "cuda"},
                      {"policy", r.name},
                      {"tasks", tasks.size()},
                      {"ns_per_task", ns},
                      {"ceiling_ns", ceiling}});
  }
  return t;
}

Table gpu_queue(const BenchArgs& a) {
  Table t{
      "queue: Chen et al. section 5.2 on " + builtin::registry().cuda_devices()[0].name,
      "Enqueue: a batch of 120 tasks written many times with no kernel running (paper: 114.3 us). "
      "Dequeue: empty tasks from one pre-loaded queue (paper: 0.4 us with 120 blocks of 128 "
      "threads).",
      {"measure", "blocks", "paper (2010)", "paper scheme here", "modern variant here",
       "modern / paper scheme"},
      {}};
  for (std::uint32_t blocks : {120u, 2112u}) {
    progress("gpu queue, " + std::to_string(blocks) + " blocks");
    const kernels::QueueFigures f = kernels::queue_figures(0, 120, blocks, 128, a.tasks, 8);
    if (blocks == 120) {
      t.rows.push_back({"host enqueue, us per batch of 120", "-", "114.3",
                        fixed(f.enqueue_us_paper, 2), fixed(f.enqueue_us_modern, 2),
                        fixed(f.enqueue_us_modern / f.enqueue_us_paper, 3)});
    }
    t.rows.push_back({"device dequeue, ns per task", std::to_string(blocks),
                      blocks == 120 ? "400" : "-", fixed(f.dequeue_ns_paper, 3),
                      fixed(f.dequeue_ns_modern, 3),
                      fixed(f.dequeue_ns_modern / f.dequeue_ns_paper, 3)});
    t.json.push_back({{"blocks", blocks},
                      {"enqueue_us_paper", f.enqueue_us_paper},
                      {"enqueue_us_modern", f.enqueue_us_modern},
                      {"dequeue_ns_paper", f.dequeue_ns_paper},
                      {"dequeue_ns_modern", f.dequeue_ns_modern}});
  }
  return t;
}
#endif

}  // namespace

namespace {

// -o's two files: the Markdown as named and the JSON beside it. Checked before the first
// measurement, so that minutes of benchmarks are never lost to an unwritable path.
std::pair<std::filesystem::path, std::filesystem::path> bench_outputs(const std::string& output) {
  const std::filesystem::path md = output;
  std::filesystem::path js = md;
  js.replace_extension(".json");
  if (js == md)
    throw ConfigError("-o " + output +
                      ": the tables' JSON goes beside the Markdown as <name>.json; name the "
                      "Markdown file otherwise (e.g. bench.md)");
  trace::check_writable(md);
  trace::check_writable(js);
  return {md, js};
}

}  // namespace

int cmd_bench(const BenchArgs& a) {
  std::optional<std::pair<std::filesystem::path, std::filesystem::path>> outputs;
  if (!a.output.empty()) outputs = bench_outputs(a.output);
  const Registry& reg = builtin::registry();
  const bool have_gpu = !reg.cuda_devices().empty();
  const bool want_cpu = a.backend.empty() || a.backend == "cpu";
  const bool want_gpu = (a.backend.empty() && have_gpu) || a.backend == "cuda";
  if (a.backend == "cuda" && !have_gpu)
    throw ConfigError("bench --backend cuda: no CUDA GPU present (or CUDA backend not built)");
  const bool all = a.what == "all";
  std::vector<Table> tables;
  if (all || a.what == "dispatch") {
    if (want_cpu) tables.push_back(cpu_dispatch(a));
#ifdef GPULB_HAVE_CUDA_BACKEND
    if (want_gpu) tables.push_back(gpu_dispatch(a));
#endif
  }
#ifdef GPULB_HAVE_CUDA_BACKEND
  if ((all || a.what == "queue") && want_gpu) tables.push_back(gpu_queue(a));
#endif
  if (a.what == "queue" && !want_gpu)
    throw ConfigError("bench queue measures the GPU queue: it needs a CUDA GPU");
  if (all || a.what == "patterns") {
    if (want_cpu) tables.push_back(patterns_figure7(a, Backend::Cpu));
    if (want_gpu) tables.push_back(patterns_figure7(a, Backend::Cuda));
  }
  if (all || a.what == "trace-overhead") {
    if (want_cpu) tables.push_back(trace_overhead(a, Backend::Cpu));
    if (want_gpu) tables.push_back(trace_overhead(a, Backend::Cuda));
  }
  if (all || a.what == "uts") {
    for (Table& t : bench_uts(a, want_cpu, want_gpu)) tables.push_back(std::move(t));
  }
  if (all || a.what == "nqueens") tables.push_back(bench_nqueens(a, want_cpu, want_gpu));
  if (all || a.what == "combining") {
    for (Table& t : bench_combining(a, want_cpu, want_gpu)) tables.push_back(std::move(t));
  }
  if (all || a.what == "hybrid") {
    for (Table& t : bench_hybrid(a, want_cpu, want_gpu)) tables.push_back(std::move(t));
  }
  if (a.what == "scale")
    tables.push_back(bench_scale(a, want_gpu ? static_cast<std::uint32_t>(reg.cuda_devices().size())
                                             : 0));  // not in `all`: GPUs only
  if (a.what == "md") {  // not in `all`: minutes of GPU time at the paper's sizes
    for (Table& t :
         bench_md(a, want_cpu, want_gpu, static_cast<std::uint32_t>(reg.cuda_devices().size())))
      tables.push_back(std::move(t));
  }

  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::ostringstream md;
  md << "## gpulb bench, " << date << "\n\nCommand: `" << a.command_line << "`\n\n";
  nlohmann::json j = {
      {"date", date}, {"command", a.command_line}, {"tables", nlohmann::json::array()}};
  for (const Table& t : tables) {
    md << markdown(t);
    j["tables"].push_back({{"title", t.title}, {"rows", t.json}});
  }
  std::cout << md.str();
  if (outputs) {
    // Both written in full before either is renamed into place: never one without the other.
    trace::AtomicWrite md_file(outputs->first), json_file(outputs->second);
    md_file.out() << md.str();
    json_file.out() << j.dump(2) << "\n";
    md_file.finish();
    json_file.finish();
    md_file.commit();
    json_file.commit();
    std::cerr << "bench: wrote " << outputs->first.string() << " and " << outputs->second.string()
              << "\n";
  }
  return 0;
}

}  // namespace gpulb::tools
