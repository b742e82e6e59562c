// `gpulb bench md`: Chen et al. 2010, section 6.3 -- the molecular-dynamics figures.
//   Figure 5   speedup over Solution 1 against the system size, one GPU
//   (item 4)   warp efficiency of the force branch per solution (why Solution 2 is slow)
//   Figure 8   the same speedups on all the GPUs present
//   Figure 9   speedup against the number of GPUs at --md-atoms (512K atoms by default)
//   Figure 10  when each GPU finished its share at --md-atoms on all the GPUs
// Each time is the median makespan of --repeats verified runs: the force computation of one step,
// with positions already on the GPUs (the sort or permutation and the copy are not timed).
// On the CPU backend (one device) only Figure 5 and the warp efficiency are measured, with sizes a
// CPU can do in seconds; Figures 8 to 10 need several GPUs.
#include <map>
#include <sstream>

#include "bench_table.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/run.hpp"

namespace gpulb::tools {
namespace {

// One way of running the force computation: a solution and the policy settings that go with it.
struct MdConfig {
  std::string label;
  std::string solution;
  std::string policy;
  ParamMap options;           // policy options beyond the scenario's defaults
  std::uint32_t workers = 0;  // 0: the backend's default
};

std::vector<MdConfig> configs(Backend backend) {
  std::vector<MdConfig> c = {{"Solution 1", "1", "hardware", {}, 0},
                             {"Solution 2", "2", "hardware", {}, 0},
                             {"Solution 3 (chunk: one wave)", "3", "chunked", {}, 0}};
  if (backend == Backend::Cuda) {
    // The paper's chunk, 120 tasks = 15,360 atoms: one wave of its GPU, a tenth of an H200's.
    c.push_back({"Solution 3, paper (chunk 15,360 atoms)", "3", "chunked", {{"chunk", "120"}}, 0});
    // The paper's task-queue setting (120 blocks, 20 tasks a queue) and gpulb's defaults with the
    // modern variant (blocks from the occupancy API, 256 tasks a queue, claims of 8).
    c.push_back({"task queue, paper (120 blocks, 20/queue)",
                 "tq",
                 "task-queue",
                 {{"variant", "paper"}, {"queue_capacity", "20"}},
                 120});
    c.push_back({"task queue, modern (defaults)", "tq", "task-queue", {{"variant", "modern"}}, 0});
  } else {
    c.push_back({"task queue", "tq", "task-queue", {}, 0});
  }
  return c;
}

struct MdMeasured {
  double ms = 0;
  double warp_efficiency = 0;
  double divergent = 0;               // sampled warp steps where the cutoff branch split the warp
  double task_spread = 0;             // the costliest task's pair tests over the mean task's
  std::vector<double> gpu_finish_ms;  // per GPU: its last task's end after the run's first event
};

// Each GPU's last task end, from the trace (Figure 10).
std::vector<double> finish_per_device(const trace::Trace& t, std::uint64_t begin_ns) {
  std::vector<double> out(t.devices.size(), 0.0);
  for (const trace::Track& track : t.tracks) {
    if (track.role == trace::TrackRole::Host || track.device >= out.size()) continue;
    for (const trace::TaskSpan& s : trace::task_spans(track)) {
      out[track.device] = std::max(
          out[track.device], static_cast<double>(s.end_ns - std::min(s.end_ns, begin_ns)) / 1e6);
    }
  }
  return out;
}

MdMeasured measure_md(const MdConfig& cfg, const std::string& pairs, std::uint32_t atoms,
                      Backend backend, std::uint32_t gpus, std::uint32_t repeats, bool trace) {
  MdMeasured m;
  std::vector<double> ms;
  for (std::uint32_t i = 0; i < repeats; ++i) {
    RunConfig c;
    c.scenario = "md";
    c.policy = cfg.policy;
    c.backend = backend;
    c.workers = cfg.workers;
    c.gpus = gpus;
    c.trace = trace;
    // A smaller check than a `gpulb run`'s: 64 sampled forces against the double reference, no
    // energy steps (at 2M atoms they are seconds of host time a run, and the md tests check them).
    c.params = {{"atoms", std::to_string(atoms)},
                {"solution", cfg.solution},
                {"sample", "64"},
                {"steps", "0"},
                {"pairs", pairs}};
    for (const auto& [k, v] : cfg.options) c.params[k] = v;
    const RunResult r = run(builtin::registry(), c);
    if (!r.verified) {
      throw RunError("bench md: " + cfg.label + " at " + std::to_string(atoms) +
                     " atoms did not verify: " + r.verification);
    }
    ms.push_back(static_cast<double>(r.makespan_ns) / 1e6);
    const auto result = nlohmann::json::parse(r.result_json);
    m.warp_efficiency = result.at("warp_efficiency").get<double>();
    m.divergent = result.at("divergent_samples").get<double>();
    m.task_spread = result.at("task_pair_tests_max_over_mean").get<double>();
    if (trace) m.gpu_finish_ms = finish_per_device(r.trace, r.stats.begin_ns);
  }
  m.ms = median(ms);
  return m;
}

std::vector<std::uint32_t> parse_sizes(const std::string& text, Backend backend) {
  if (text.empty()) {
    if (backend == Backend::Cuda) return {32768, 65536, 131072, 262144, 524288, 1048576};
    return {4096, 8192, 16384};
  }
  std::vector<std::uint32_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 128 || v > (1u << 22)) {
      throw ConfigError("--md-sizes: '" + item + "' is not a number of atoms in 128..4194304");
    }
    out.push_back(static_cast<std::uint32_t>(v));
  }
  return out;
}

// Under pairs=cells a step takes well under a millisecond on a GPU: more digits there.
std::string ms_text(double ms) { return fixed(ms, ms < 10 ? 3 : 1); }
std::string speedup(double base_ms, double ms) {
  return ms > 0 ? fixed(base_ms / ms, 2) + " (" + ms_text(ms) + " ms)" : "-";
}

// Figure 5 (gpus = 1) or Figure 8 (gpus = all): one row a size, speedup over Solution 1; and the
// warp efficiencies of the same runs.
std::vector<Table> speedup_by_size(const BenchArgs& a, Backend backend, std::uint32_t gpus,
                                   const std::string& figure) {
  const std::vector<MdConfig> cs = configs(backend);
  const std::string where = backend == Backend::Cpu
                                ? "CPU backend"
                                : std::to_string(gpus) + " GPU" + (gpus > 1 ? "s" : "");
  Table t{
      "md " + figure + ": speedup over Solution 1 against system size, " + where +
          ", pairs=" + a.md_pairs,
      "Chen et al. 2010, section 6.3. Each cell: Solution 1's time over the column's (the column's "
      "median makespan of " +
          std::to_string(a.repeats) +
          " verified runs): the force computation of one step, positions already on the device. "
          "The last column: the costliest 128-atom task's distance tests over the mean task's "
          "(Solution 1's order): the "
          "imbalance a scheduler can remove.",
      {"atoms"},
      {}};
  Table w{"md warp efficiency of the force branch, " + where,
          "lanes of a warp taking the cutoff branch over the lanes present, sampled every 32nd "
          "atom of the "
          "force loop (" +
              std::string(backend == Backend::Cuda ? "__ballot_sync on the GPU"
                                                   : "32-lane warps emulated on the CPU") +
              "). The paper explains Solution 2's slowness by its extra divergence: its profiler "
              "counted 49% more divergent "
              "branches than Solution 1 at 512K atoms. The last column compares the sampled steps "
              "where the branch split a "
              "warp, Solution 2 over Solution 1.",
          {"atoms"},
          {}};
  for (const MdConfig& c : cs) {
    t.header.push_back(c.label);
    w.header.push_back(c.label);
  }
  t.header.push_back("costliest task / mean task (pair tests)");
  w.header.push_back("efficiency, Solution 1 / Solution 2");
  w.header.push_back("divergent samples, Solution 2 / Solution 1");
  for (std::uint32_t atoms : parse_sizes(a.md_sizes, backend)) {
    std::vector<MdMeasured> m;
    for (const MdConfig& c : cs) {
      progress("md " + figure + ", " + std::to_string(atoms) + " atoms, " + c.label);
      m.push_back(measure_md(c, a.md_pairs, atoms, backend, backend == Backend::Cuda ? gpus : 0,
                             a.repeats, false));
    }
    std::vector<std::string> row{std::to_string(atoms)}, wrow{std::to_string(atoms)};
    nlohmann::json j = {
        {"atoms", atoms}, {"gpus", gpus}, {"backend", std::string(to_string(backend))}};
    for (std::size_t i = 0; i < cs.size(); ++i) {
      row.push_back(speedup(m[0].ms, m[i].ms));
      wrow.push_back(fixed(100 * m[i].warp_efficiency, 2) + "%");
      j["ms"][cs[i].label] = m[i].ms;
      j["warp_efficiency"][cs[i].label] = m[i].warp_efficiency;
      j["divergent_samples"][cs[i].label] = m[i].divergent;
    }
    row.push_back(fixed(m[0].task_spread, 2));
    j["task_pair_tests_max_over_mean"] = m[0].task_spread;
    wrow.push_back(m[1].warp_efficiency > 0 ? fixed(m[0].warp_efficiency / m[1].warp_efficiency, 2)
                                            : "-");
    wrow.push_back(m[0].divergent > 0 ? fixed(m[1].divergent / m[0].divergent, 2) : "-");
    t.rows.push_back(row);
    w.rows.push_back(wrow);
    t.json.push_back(j);
    w.json.push_back(j);
  }
  // The warp samples do not depend on the GPU count (Figure 5's table has them), and pairs=cells
  // takes none (md_body.hpp).
  if (gpus > 1 || a.md_pairs != "all") return {t};
  return {t, w};
}

// Figure 9: speedup against the number of GPUs, over Solution 1 on one GPU.
Table speedup_by_gpus(const BenchArgs& a, std::uint32_t gpus_present) {
  const std::vector<MdConfig> cs = configs(Backend::Cuda);
  Table t{"md Figure 9: speedup against the number of GPUs, " + std::to_string(a.md_atoms) +
              " atoms, pairs=" + a.md_pairs,
          "Each cell: Solution 1's time on one GPU over the column's time on the row's GPUs "
          "(median of " +
              std::to_string(a.repeats) + " verified runs).",
          {"GPUs"},
          {}};
  for (const MdConfig& c : cs) t.header.push_back(c.label);
  double base = 0;
  for (std::uint32_t g = 1; g <= gpus_present; ++g) {
    std::vector<std::string> row{std::to_string(g)};
    nlohmann::json j = {{"gpus", g}, {"atoms", a.md_atoms}};
    for (const MdConfig& c : cs) {
      progress("md Figure 9, " + std::to_string(g) + " GPUs, " + c.label);
      const MdMeasured m =
          measure_md(c, a.md_pairs, a.md_atoms, Backend::Cuda, g, a.repeats, false);
      if (g == 1 && base == 0) base = m.ms;
      row.push_back(speedup(base, m.ms));
      j["ms"][c.label] = m.ms;
    }
    t.rows.push_back(row);
    t.json.push_back(j);
  }
  return t;
}

// Figure 10: when each GPU finished (its last task's end) with every GPU present.
Table finish_by_gpu(const BenchArgs& a, std::uint32_t gpus) {
  const std::vector<MdConfig> cs = configs(Backend::Cuda);
  Table t{"md Figure 10: busy time per GPU, " + std::to_string(a.md_atoms) + " atoms on " +
              std::to_string(gpus) + " GPUs, pairs=" + a.md_pairs,
          "Each cell: the time from the run's first event to that GPU's last task end (ms), from "
          "one traced run a row; the "
          "spread across a row is the imbalance between GPUs.",
          {"solution"},
          {}};
  for (std::uint32_t g = 0; g < gpus; ++g) t.header.push_back("GPU " + std::to_string(g));
  t.header.push_back("max / min");
  for (const MdConfig& c : cs) {
    progress("md Figure 10, " + c.label);
    const MdMeasured m = measure_md(c, a.md_pairs, a.md_atoms, Backend::Cuda, gpus, 1, true);
    std::vector<std::string> row{c.label};
    double lo = 0, hi = 0;
    for (std::size_t g = 0; g < m.gpu_finish_ms.size(); ++g) {
      row.push_back(ms_text(m.gpu_finish_ms[g]));
      lo = g == 0 ? m.gpu_finish_ms[g] : std::min(lo, m.gpu_finish_ms[g]);
      hi = std::max(hi, m.gpu_finish_ms[g]);
    }
    row.push_back(lo > 0 ? fixed(hi / lo, 3) : "-");
    t.rows.push_back(row);
    t.json.push_back({{"solution", c.label}, {"gpu_finish_ms", m.gpu_finish_ms}});
  }
  return t;
}

}  // namespace

std::vector<Table> bench_md(const BenchArgs& a, bool cpu, bool gpu, std::uint32_t gpus_present) {
  std::vector<Table> out;
  auto add = [&](std::vector<Table> ts) {
    for (Table& t : ts) out.push_back(std::move(t));
  };
  if (cpu) add(speedup_by_size(a, Backend::Cpu, 1, "Figure 5"));
  if (gpu) {
    add(speedup_by_size(a, Backend::Cuda, 1, "Figure 5"));
    if (gpus_present > 1) {
      add(speedup_by_size(a, Backend::Cuda, gpus_present, "Figure 8"));
      out.push_back(speedup_by_gpus(a, gpus_present));
      out.push_back(finish_by_gpu(a, gpus_present));
    } else {
      progress("md: one GPU present: Figures 8 to 10 need several (skipped)");
    }
  }
  return out;
}

}  // namespace gpulb::tools
