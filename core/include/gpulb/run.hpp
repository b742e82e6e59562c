// The host API: gpulb::run(registry, config) -> RunResult. The CLI, the viewer and the tests all
// run scenarios through this one function.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gpulb/registry.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb {

struct RunConfig {
  std::string scenario;
  std::string policy;              // empty: the scenario's (Scenario::default_policy)
  std::optional<Backend> backend;  // empty: CUDA where a GPU is present, else CPU
  std::uint32_t workers = 0;       // 0: the backend's default
  std::uint32_t block_size = 0;    // threads per worker block; 0: the scenario's default
  std::uint32_t gpus = 0;          // CUDA: 0 = all
  bool trace = true;
  std::uint64_t trace_budget =
      0;            // bytes the trace segments may take; 0: a quarter of physical memory
  ParamMap params;  // scenario parameters and policy options alike
  ProgressFn progress;
  // A distributed run (gpulb/distribution.hpp; gpulb run --distributed): every rank calls run()
  // with the same config; rank 0's result is the whole run's. Null: one process.
  Distribution* distribution = nullptr;
};

struct RunResult {
  trace::Trace trace;  // events and metadata, ready to write
  trace::TraceStatistics stats;
  bool verified = false;
  bool checked = true;  // false: nothing compared the result with a reference (verified is false)
  std::string verification;
  std::string result_json;
  std::uint64_t makespan_ns = 0;
  std::uint64_t tasks = 0;
  std::uint32_t workers = 0;
  std::vector<std::string> notes;
  std::map<std::string, std::uint64_t> metrics;  // the policy's measurements (ExecOutput::metrics)
};

// Throws ConfigError for a bad configuration and RunError for a run that failed.
RunResult run(const Registry& registry, const RunConfig& config);

// The backend a config without one gets: CUDA where built and a GPU is present.
Backend default_backend(const Registry& registry);

// Splits `params` into the scenario's parameters and the policy's options; ConfigError for a key
// that neither takes (naming the policy a key belongs to, where another one takes it).
void split_params(const Registry& registry, const ParamMap& params, const Scenario& scenario,
                  const PolicyDescriptor& policy, ParamMap& scenario_params,
                  ParamMap& policy_params);

std::string gpulb_version();

}  // namespace gpulb
