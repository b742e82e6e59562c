// The scenario panel: choose a scenario, its parameters (from the registry, with their ranges), a
// policy, a backend (CUDA only where a GPU is present) and the worker count; Run runs it on a
// background thread with a progress bar. Lists whatever the registry holds, so new scenarios and
// policies appear here without a change to the viewer.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/registry.hpp"
#include "gpulb/run.hpp"

namespace gpulb::viewer {

class ScenarioPanel {
 public:
  explicit ScenarioPanel(const Registry& registry);
  ~ScenarioPanel();  // waits for a run in flight (the registry outlives it)

  struct Finished {
    trace::Trace trace;
    std::string title;
  };
  // Draws the panel; returns a run's trace once, on the frame after it finished.
  std::optional<Finished> draw();
  bool running() const { return running_.load(); }

 private:
  void start_run();
  void param_input(const ParamSpec& spec);

  const Registry& registry_;
  std::vector<trace::Device> gpus_;  // asked once: listing devices can take a while
  int scenario_ = 0;
  int policy_ = 0;
  int backend_ = 0;  // 0 cpu, 1 cuda
  int workers_ = 0;  // 0: the backend's default
  ParamMap values_;  // parameter values as text, by name; missing ones take their defaults
  int runs_ = 0;

  std::jthread thread_;
  std::atomic<bool> running_{false};
  std::atomic<std::uint64_t> done_{0}, expected_{0};
  std::mutex mutex_;  // guards result_ and error_
  std::optional<RunResult> result_;
  std::string error_;
  std::string title_;
};

}  // namespace gpulb::viewer
