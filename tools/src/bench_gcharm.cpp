// `gpulb bench combining`: G-Charm's Figures 2 and 3 on the `nbody` scenario (Rengasamy &
// Vadhiyar, sections 4.3-4.4): adaptive against static (and eager) kernel combining, and the
// kernel and transfer times of redundant copies, reuse, and reuse with sorted indices. Every
// figure is a median of --repeats runs, next to the reference row measured in the same run.
#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench_table.hpp"
#include "gpulb/builtin/registry.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/run.hpp"
#include "gpulb/tools/format.hpp"

namespace gpulb::tools {
namespace {

struct NBodyMeasure {
  double total_ns = 0;
  std::map<std::string, double> metrics;  // medians of the policy's metrics
};

// Medians over --repeats runs of `scenario` under `policy`, tracing off; every run must verify.
NBodyMeasure measure(const BenchArgs& a, Backend backend, const std::string& scenario,
                     const std::string& policy, const ParamMap& params) {
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> metrics;
  for (std::uint32_t i = 0; i < a.repeats; ++i) {
    RunConfig c;
    c.scenario = scenario;
    c.policy = policy;
    c.backend = backend;
    c.trace = false;
    c.params = params;
    const RunResult r = run(builtin::registry(), c);
    if (!r.verified)
      throw RunError("bench: " + scenario + " under " + policy +
                     " did not verify: " + r.verification);
    totals.push_back(static_cast<double>(r.makespan_ns));
    for (const auto& [k, v] : r.metrics) metrics[k].push_back(static_cast<double>(v));
    // the producer's phases, where it reports them
    const auto result = nlohmann::json::parse(r.result_json);
    for (const char* k : {"tree_build_ns", "walk_ns", "tail_ns"}) {
      if (result.contains(k)) metrics[k].push_back(result.at(k).get<double>());
    }
  }
  NBodyMeasure m{median(totals), {}};
  for (auto& [k, v] : metrics) m.metrics[k] = median(v);
  return m;
}

NBodyMeasure measure_nbody(const BenchArgs& a, Backend backend, const std::string& particles,
                           const ParamMap& options) {
  ParamMap p = {{"particles", particles}, {"steps", "3"}, {"sample", "64"}};
  for (const auto& [k, v] : options) p[k] = v;
  return measure(a, backend, "nbody", "combining", p);
}

std::string particles_for(const BenchArgs& a, Backend backend) {
  if (a.particles != 0) return std::to_string(a.particles);
  return backend == Backend::Cuda ? "200000" : "20000";
}

// Figure 2: when to launch.
Table combining_strategies(const BenchArgs& a, Backend backend) {
  const std::string particles = particles_for(a, backend);
  Table t{"combining: G-Charm Figure 2, adaptive vs static kernel combining, nbody, " +
              std::string(to_string(backend)) + " backend",
          "nbody particles=" + particles +
              " steps=3 (Plummer spheres, theta 0.7, buckets of 16), transfer=reuse (the default), "
              "median of " +
              std::to_string(a.repeats) +
              " runs. Total: the whole run (tree builds, walks, launches), as the paper times it. "
              "'vs static' is static's total over this row's (above 1: faster); 'GPU time vs "
              "static': this row's kernel + transfer "
              "time over static's (below 1: the device works less for the same requests). Host "
              "walks: the walkers' wall time (requests are "
              "emitted meanwhile); step tails: from the last emit of a step until all its requests "
              "had run (where the strategy shows). "
              "The paper saw adaptive take 8-38% less time than static.",
          {"strategy", "total", "vs static", "launches", "requests / launch", "kernel", "transfers",
           "GPU time vs static", "host walks", "step tails"},
          {}};
  struct Row {
    const char* label;
    ParamMap options;
  };
  // Adaptive's launches of ~1,500 requests (~1.8 M items) could be assembled by several host
  // threads (assembly_threads, combined_request.hpp; static's of 100 are below the size where
  // they would be used): the row with 8 shows what that is worth in the same run.
  const std::vector<Row> rows = {
      {"static (K = 100)", {{"strategy", "static"}, {"static_k", "100"}}},
      {"adaptive", {{"strategy", "adaptive"}}},
      {"adaptive, assembly_threads=8", {{"strategy", "adaptive"}, {"assembly_threads", "8"}}},
      {"eager", {{"strategy", "eager"}}}};
  double static_total = 0, static_device = 0;
  for (const Row& r : rows) {
    progress(std::string("combining ") + r.label + " on " + std::string(to_string(backend)));
    const NBodyMeasure m = measure_nbody(a, backend, particles, r.options);
    // the device's busy time
    const double device = m.metrics.at("kernel_ns") + m.metrics.at("transfer_ns");
    if (static_total == 0) static_total = m.total_ns, static_device = device;
    const double launches = m.metrics.at("launches");
    t.rows.push_back({r.label, format_ns(m.total_ns), fixed(static_total / m.total_ns, 2),
                      fixed(launches, 0),
                      fixed(m.metrics.at("requests") / std::max(1.0, launches), 1),
                      format_ns(m.metrics.at("kernel_ns")), format_ns(m.metrics.at("transfer_ns")),
                      fixed(device / std::max(1.0, static_device), 3),
                      format_ns(m.metrics.at("walk_ns")), format_ns(m.metrics.at("tail_ns"))});
    t.json.push_back({{"backend", to_string(backend)},
                      {"strategy", r.label},
                      {"total_ns", m.total_ns},
                      {"metrics", m.metrics}});
  }
  return t;
}

// Figure 3: what to move.
Table combining_transfers(const BenchArgs& a, Backend backend) {
  const std::string particles = particles_for(a, backend);
  Table t{"combining: G-Charm Figure 3, data reuse and coalescing, nbody, " +
              std::string(to_string(backend)) + " backend",
          "nbody particles=" + particles + " steps=3, strategy=adaptive, median of " +
              std::to_string(a.repeats) +
              " runs. Kernel and transfer times are the device's own (CUDA events around each "
              "stage; on the CPU backend the "
              "memcpy and the workers' run). 'vs redundant' is redundant's kernel + transfer time "
              "over this row's. The paper saw "
              "reuse cut transfer time 62% but raise kernel time 49% (3.6% less in all), and "
              "reuse-sorted 12% less than redundant.",
          {"transfer", "kernel", "transfers", "kernel + transfers", "vs redundant",
           "bytes to device", "host assembly", "total"},
          {}};
  double redundant = 0;
  for (const char* mode : {"redundant", "reuse", "reuse-sorted"}) {
    progress(std::string("combining transfer=") + mode + " on " + std::string(to_string(backend)));
    const NBodyMeasure m =
        measure_nbody(a, backend, particles, {{"strategy", "adaptive"}, {"transfer", mode}});
    const double kernel = m.metrics.at("kernel_ns"), transfer = m.metrics.at("transfer_ns");
    if (redundant == 0) redundant = kernel + transfer;
    t.rows.push_back({mode, format_ns(kernel), format_ns(transfer), format_ns(kernel + transfer),
                      fixed(redundant / (kernel + transfer), 2),
                      fixed(m.metrics.at("bytes_to_device") / 1e6, 1) + " MB",
                      format_ns(m.metrics.at("assemble_ns")), format_ns(m.total_ns)});
    t.json.push_back({{"backend", to_string(backend)},
                      {"transfer", mode},
                      {"total_ns", m.total_ns},
                      {"metrics", m.metrics}});
  }
  return t;
}

// Figure 5: where to run. `scenario` with its parameters; hybrid static at cpu_share 1 is the
// CPU-only reference of the same run, and the GPU-only reference is the faster of hybrid static
// at cpu_share 0 and, on the cuda backend, the combining policy (adaptive): the GPU's own
// scheduler, so that a hybrid launch order the static split lacks cannot weaken the reference.
Table hybrid_split(const BenchArgs& a, Backend backend, const std::string& scenario,
                   const ParamMap& params, const std::string& what) {
  Table t{"hybrid: G-Charm Figure 5, adaptive vs static CPU+GPU scheduling, " + scenario + ", " +
              std::string(to_string(backend)) + " backend",
          what + ", median of " + std::to_string(a.repeats) +
              " runs. Rate: requests per second of the whole run. 'vs sum' is the row's rate over "
              "the CPU-only rate plus the "
              "GPU-only rate (the faster GPU-only row; the ideal of a perfect split is 1.00). On "
              "the cpu backend both sides are "
              "host threads (half the workers each). The paper saw adaptive take 10-15% less time "
              "than static.",
          {"run", "total", "rate", "vs sum", "CPU share of requests", "vs static"},
          {}};
  enum class Role { CpuOnly, GpuOnly, Split };
  struct Row {
    const char* label;
    const char* policy;
    ParamMap options;
    Role role;
  };
  std::vector<Row> rows = {{"CPU only (static, cpu_share=1)",
                            "hybrid",
                            {{"strategy", "static"}, {"cpu_share", "1"}},
                            Role::CpuOnly},
                           {"GPU only (static, cpu_share=0)",
                            "hybrid",
                            {{"strategy", "static"}, {"cpu_share", "0"}},
                            Role::GpuOnly}};
  if (backend == Backend::Cuda)
    rows.push_back(
        {"GPU only (combining, adaptive)", "combining", {{"strategy", "adaptive"}}, Role::GpuOnly});
  rows.push_back({"static, cpu_share=0.5",
                  "hybrid",
                  {{"strategy", "static"}, {"cpu_share", "0.5"}},
                  Role::Split});
  rows.push_back({"adaptive", "hybrid", {{"strategy", "adaptive"}}, Role::Split});
  double cpu_rate = 0, gpu_rate = 0, static_total = 0;
  for (const Row& r : rows) {
    progress(std::string("hybrid ") + r.label + " on " + scenario + ", " +
             std::string(to_string(backend)));
    ParamMap p = params;
    for (const auto& [k, v] : r.options) p[k] = v;
    const NBodyMeasure m = measure(a, backend, scenario, r.policy, p);
    const double requests = m.metrics.at("requests");
    const double rate = requests / (m.total_ns / 1e9);
    if (r.role == Role::CpuOnly) cpu_rate = rate;
    if (r.role == Role::GpuOnly) gpu_rate = std::max(gpu_rate, rate);
    if (r.role == Role::Split && static_total == 0) static_total = m.total_ns;
    // combining: none
    const double cpu_requests =
        m.metrics.count("cpu_requests") ? m.metrics.at("cpu_requests") : 0.0;
    t.rows.push_back({r.label, format_ns(m.total_ns), fixed(rate, 0) + " /s",
                      r.role == Role::Split ? fixed(rate / (cpu_rate + gpu_rate), 2) : "-",
                      fixed(100.0 * cpu_requests / std::max(1.0, requests), 1) + "%",
                      r.role == Role::Split ? fixed(static_total / m.total_ns, 2) : "-"});
    t.json.push_back({{"backend", to_string(backend)},
                      {"scenario", scenario},
                      {"run", r.label},
                      {"policy", r.policy},
                      {"total_ns", m.total_ns},
                      {"rate", rate},
                      {"metrics", m.metrics}});
  }
  return t;
}

}  // namespace

std::vector<Table> bench_hybrid(const BenchArgs& a, bool cpu, bool gpu) {
  std::vector<Table> tables;
  const bool md2d = builtin::registry().find("md2d") != nullptr;
  for (const Backend b : {Backend::Cpu, Backend::Cuda}) {
    if ((b == Backend::Cpu && !cpu) || (b == Backend::Cuda && !gpu)) continue;
    const std::string particles = particles_for(a, b);
    if (md2d) {
      tables.push_back(
          hybrid_split(a, b, "md2d", {{"particles", particles}}, "md2d particles=" + particles));
      // Devices bound. At the defaults (about 32 particles a patch) every run
      // is bound by the host: on an H100 with 16 host cores the GPU-only run of 200,000
      // particles spent ~300 ms of 5 steps in host work (binning, emission, assembly,
      // integration) and 3-34 ms in kernels, so the CPU-only and GPU-only runs shared one
      // bottleneck and their rates could not add up. A compute object's work grows with the
      // square of its patches' particles, the host's with the particles: fewer, fuller patches
      // give the devices the larger part. patches=7 at 100,000 particles puts ~2,000 particles in
      // a patch (4 x patches=20 at 200,000, whose kernels took 34 ms), 245 requests a step: the
      // GPU's work a step (~1.8e9 pair tests, a few hundred blocks) outweighs the host's (half
      // of 200,000's), and the CPU (~0.7 s a step) is slow enough that the split matters but
      // not by one request. patches=10 at 200,000: the same patches, twice the requests.
      // Whole compute objects (piece_targets=0, G-Charm's one request an object) once more at
      // 100,000: there a step lasts as long as its densest pair on one block, whatever the split.
      struct DeviceBound {
        std::string particles, patches, piece_targets;
      };
      const std::vector<DeviceBound> inputs = b == Backend::Cuda
                                                  ? std::vector<DeviceBound>{{"100000", "7", ""},
                                                                             {"100000", "7", "0"},
                                                                             {"200000", "10", ""}}
                                                  : std::vector<DeviceBound>{{particles, "5", ""}};
      for (const DeviceBound& in : inputs) {
        // Half the host's threads produce: on the cuda backend the other half are the CPU side's
        // workers (its default), which would otherwise share their cores with the producers.
        const std::string producers =
            std::to_string(std::max(1u, std::thread::hardware_concurrency() / 2));
        ParamMap params = {{"particles", in.particles},
                           {"patches", in.patches},
                           {"steps", "5"},
                           {"producers", producers}};
        if (!in.piece_targets.empty()) params["piece_targets"] = in.piece_targets;
        tables.push_back(hybrid_split(
            a, b, "md2d", params,
            "md2d particles=" + in.particles + " patches=" + in.patches +
                " producers=" + producers + " steps=5" +
                (in.piece_targets.empty() ? "" : " piece_targets=" + in.piece_targets) +
                ", chosen so that the devices, not the host, bound the run: a compute object's "
                "work "
                "grows with the square of its patches' particles, the host's (binning, emission, "
                "assembly, "
                "integration) with the particles, and at the defaults (~32 a patch) an H100's "
                "GPU-only run "
                "was ~90% host work, so no split could add the two sides' rates. " +
                (in.piece_targets == "0"
                     ? "Whole compute objects: a request an object, as in G-Charm"
                     : "Objects of over 4,096 targets go in pieces (piece_targets)")));
      }
    }
    tables.push_back(hybrid_split(a, b, "nbody",
                                  {{"particles", particles}, {"steps", "3"}, {"sample", "64"}},
                                  "nbody particles=" + particles + " steps=3"));
  }
  return tables;
}

std::vector<Table> bench_combining(const BenchArgs& a, bool cpu, bool gpu) {
  std::vector<Table> tables;
  for (const Backend b : {Backend::Cpu, Backend::Cuda}) {
    if ((b == Backend::Cpu && !cpu) || (b == Backend::Cuda && !gpu)) continue;
    tables.push_back(combining_strategies(a, b));
    tables.push_back(combining_transfers(a, b));
  }
  return tables;
}

}  // namespace gpulb::tools
