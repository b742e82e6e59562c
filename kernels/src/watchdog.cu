#include <chrono>
#include <thread>

#include "gpulb/cuda/device_health.hpp"
#include "gpulb/kernels/detail/watchdog.hpp"

namespace gpulb::kernels::detail {

void Watchdog::check(std::uint64_t progress, const std::function<std::string()>& state) {
  if (abort_all_.load(std::memory_order_relaxed)) fire("stopped because another GPU's run failed");
  const std::uint64_t now = session_.now_ns();
  if (progress != last_progress_) {
    last_progress_ = progress;
    last_change_ns_ = now;
    return;
  }
  if (now - last_change_ns_ > std::uint64_t{plan_.run_options.watchdog_ms} * 1'000'000) {
    fire("watchdog: policy '" + std::string(plan_.policy->name) + "' on GPU " +
         std::to_string(session_.device()) + " made no progress for " +
         std::to_string(plan_.run_options.watchdog_ms) + " ms (" + state() +
         "); raise --param watchdog_ms if single tasks run this long");
  }
}

void Watchdog::fire(const std::string& why) {
  abort_all_.store(true, std::memory_order_relaxed);
  session_.request_stop();
  // Give the workers time to see the flag and the kernel time to end; a body that never returns
  // and never polls ctx.stop_requested() cannot be stopped from the host: the kernel is then
  // abandoned, and nothing may wait for it (device_health.hpp).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStopGraceSeconds);
  cudaError_t state = cudaErrorNotReady;
  std::vector<cudaStream_t> streams = streams_;
  streams.push_back(session_.kernel_stream());
  for (cudaStream_t stream : streams) {
    while ((state = cudaStreamQuery(stream)) == cudaErrorNotReady &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (state == cudaErrorNotReady) break;
  }
  cudaGetLastError();
  if (state == cudaErrorNotReady) {
    const std::string policy(plan_.policy->name);
    cuda::mark_kernel_abandoned(session_.device(), "a kernel of policy '" + policy +
                                                       "' did not stop when the watchdog asked");
    throw RunError(
        why + ". The kernel did not stop within " + std::to_string(kStopGraceSeconds) +
        " s of the stop request (a task body that never returns and never polls "
        "ctx.stop_requested()): it is "
        "abandoned, GPU " +
        std::to_string(session_.device()) +
        " cannot be used again by this process, and its memory is left to the process's exit");
  }
  throw RunError(why);
}

}  // namespace gpulb::kernels::detail
