// The CUDA backend's watchdog: a control thread calls check() while it waits on its GPU. When
// the progress value has not moved for watchdog_ms, or another GPU's control thread failed, it
// sets the device stop flag (workers poll it when idle; long bodies via ctx.stop_requested()),
// waits for the kernel to drain, and throws a RunError that names the policy, the state and the
// timeout. Never a hang on a scheduler that stopped making progress.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/exec_plan.hpp"

namespace gpulb::kernels::detail {

class Watchdog {
 public:
  // How long a fired watchdog waits for the kernel to end before abandoning it.
  static constexpr int kStopGraceSeconds = 10;

  Watchdog(const ExecPlan& plan, GpuSession& session, std::atomic<bool>& abort_all)
      : plan_(plan), session_(session), abort_all_(abort_all), last_change_ns_(session.now_ns()) {}

  // `progress` must grow while the GPU works; `state` describes the scheduler for the message.
  void check(std::uint64_t progress, const std::function<std::string()>& state);
  // Nothing is outstanding on this GPU (its queues are empty and it waits for other ranks' work):
  // no task can hang meanwhile, so the wait does not count towards watchdog_ms.
  void rest() { last_change_ns_ = session_.now_ns(); }
  // Kernels also run on `stream` (besides the session's kernel stream): a fired watchdog waits
  // for it too before it calls them stopped.
  void watch(cudaStream_t stream) { streams_.push_back(stream); }

 private:
  [[noreturn]] void fire(const std::string& why);

  const ExecPlan& plan_;
  GpuSession& session_;
  std::atomic<bool>& abort_all_;
  std::uint64_t last_progress_ = ~std::uint64_t{0};
  std::uint64_t last_change_ns_;
  std::vector<cudaStream_t> streams_;
};

}  // namespace gpulb::kernels::detail
