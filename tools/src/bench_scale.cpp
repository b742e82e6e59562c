// `gpulb bench scale`: each dynamic policy on 1, 2, 4, ... of this host's GPUs, on the large UTS
// trees and on Chen et al.'s P3, with speedup and efficiency against its own one-GPU time and, for
// the task queue, its time against the hardware scheduler's on as many GPUs. A run a policy
// refuses (a capacity, a GPU count it does not support) is shown in its row; the bench goes on.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_table.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/run.hpp"
#include "gpulb/tools/format.hpp"

namespace gpulb::tools {
namespace {

struct ScaleCase {
  std::string workload;  // "UTS T1L", "patterns P3"
  std::string unit;      // what `rate` counts: nodes or tasks
  std::string scenario;
  std::string policy;
  std::string label;  // the policy as the row names it
  ParamMap params;
};

std::vector<ScaleCase> scale_cases(const BenchArgs& a) {
  std::vector<ScaleCase> cases;
  const std::vector<std::string> trees = a.tree.empty()
                                             ? std::vector<std::string>{"T1L", "T2L", "T3L", "T1XL"}
                                             : std::vector<std::string>{a.tree};
  for (const std::string& tree : trees) {
    const std::string w = "UTS " + tree;
    cases.push_back(
        {w, "nodes", "uts", "work-stealing", "work-stealing (task a block)", {{"tree", tree}}});
    cases.push_back({w,
                     "nodes",
                     "uts",
                     "work-stealing",
                     "work-stealing (task_per=lane)",
                     {{"tree", tree}, {"task_per", "lane"}}});
    cases.push_back({w, "nodes", "uts", "static-list", "static-list", {{"tree", tree}}});
  }
  // Chen et al. section 4.4's host pool across GPUs, beside the hardware scheduler's even split.
  const ParamMap p3 = {{"pattern", "P3"}, {"blocks", "400000"}, {"work", "4000"}};
  cases.push_back(
      {"patterns P3, 400,000 blocks x 4000", "tasks", "patterns", "hardware", "hardware", p3});
  cases.push_back(
      {"patterns P3, 400,000 blocks x 4000", "tasks", "patterns", "task-queue", "task-queue", p3});
  return cases;
}

// 1, 2, 4, ... up to the GPUs present, and the count present where it is no power of two.
std::vector<std::uint32_t> gpu_counts(std::uint32_t present) {
  std::vector<std::uint32_t> n;
  for (std::uint32_t g = 1; g <= present; g *= 2) n.push_back(g);
  if (n.back() != present) n.push_back(present);
  return n;
}

struct ScaleCell {
  std::vector<double> seconds;
  std::uint64_t units = 0;
  std::string error;
  double median_s() const { return median(seconds); }
};

// One verified run; a refusal or failure is kept as the cell's error.
void measure_once(const ScaleCase& sc, std::uint32_t gpus, ScaleCell& cell) {
  if (!cell.error.empty()) return;
  RunConfig c;
  c.scenario = sc.scenario;
  c.policy = sc.policy;
  c.backend = Backend::Cuda;
  c.gpus = gpus;
  c.trace = false;
  c.params = sc.params;
  try {
    const RunResult r = run(builtin::registry(), c);
    if (!r.verified) {
      cell.error = "did not verify: " + r.verification;
      return;
    }
    cell.seconds.push_back(static_cast<double>(r.makespan_ns) / 1e9);
    cell.units = r.tasks;
    if (const auto j = nlohmann::json::parse(r.result_json, nullptr, false);
        j.is_object() && j.contains("nodes"))
      cell.units = j["nodes"].get<std::uint64_t>();
  } catch (const std::exception& e) {
    cell.error = e.what();
  }
}

std::string short_error(const std::string& e) {
  return e.size() > 120 ? e.substr(0, 117) + "..." : e;
}

void add_rows(Table& t, const ScaleCase& sc, const std::vector<std::uint32_t>& counts,
              const std::vector<ScaleCell>& cells, const std::vector<ScaleCell>* hardware) {
  const double one = cells[0].error.empty() ? cells[0].median_s() : 0.0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const ScaleCell& c = cells[k];
    nlohmann::json j = {{"workload", sc.workload}, {"policy", sc.label}, {"gpus", counts[k]}};
    if (!c.error.empty()) {
      t.rows.push_back({sc.workload, sc.label, std::to_string(counts[k]),
                        "refused or failed: " + short_error(c.error), "-", "-", "-", "-"});
      j["error"] = c.error;
      t.json.push_back(j);
      continue;
    }
    const double s = c.median_s(), rate = static_cast<double>(c.units) / s;
    const double speedup = one > 0 ? one / s : 0.0;
    std::string vs_hw = "-";
    if (hardware && (*hardware)[k].error.empty()) {
      vs_hw = fixed(s / (*hardware)[k].median_s(), 2) + "x";
      j["time_over_hardware"] = s / (*hardware)[k].median_s();
    }
    t.rows.push_back({sc.workload, sc.label, std::to_string(counts[k]), format_ns(s * 1e9),
                      format_rate(rate), one > 0 ? fixed(speedup, 2) + "x" : "-",
                      one > 0 ? fixed(100.0 * speedup / counts[k], 0) + "%" : "-", vs_hw});
    j["seconds"] = s;
    j["rate"] = rate;
    j["unit"] = sc.unit + "/s";
    if (one > 0) j["speedup"] = speedup;
    t.json.push_back(j);
  }
}

}  // namespace

Table bench_scale(const BenchArgs& a, std::uint32_t gpus_present) {
  if (gpus_present == 0)
    throw ConfigError(
        "bench scale runs on GPUs: no CUDA GPU present (or the CUDA backend not built)");
  const std::vector<std::uint32_t> counts = gpu_counts(gpus_present);
  const std::vector<ScaleCase> cases = scale_cases(a);
  Table t{
      "scale: each dynamic policy on 1 to " + std::to_string(gpus_present) + " GPUs of one host",
      "Median of " + std::to_string(a.repeats) +
          " verified runs, untraced; each round runs every GPU count in turn. Speedup and "
          "efficiency are against the same policy's one-GPU time; 'vs hardware' is the time over "
          "the hardware scheduler's on as "
          "many GPUs (the same blocks split evenly).",
      {"workload", "policy", "GPUs", "time", "rate (UTS: nodes, patterns: tasks)", "speedup",
       "efficiency", "vs hardware"},
      {}};
  std::vector<ScaleCell> hardware;
  for (const ScaleCase& sc : cases) {
    progress("scale " + sc.workload + " " + sc.label);
    std::vector<ScaleCell> cells(counts.size());
    for (std::uint32_t i = 0; i < a.repeats; ++i) {
      for (std::size_t k = 0; k < counts.size(); ++k) measure_once(sc, counts[k], cells[k]);
    }
    add_rows(t, sc, counts, cells,
             sc.policy == "task-queue" && !hardware.empty() ? &hardware : nullptr);
    if (sc.policy == "hardware") hardware = cells;
  }
  return t;
}

}  // namespace gpulb::tools
