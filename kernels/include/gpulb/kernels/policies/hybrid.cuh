// The hybrid policy on the CUDA backend (G-Charm section 3.3): host worker threads and one GPU in
// one run. The CPU side is the CPU backend's request device (cpu::detail::CombiningHost) reading
// the published table in place; the GPU side is the combining policy's device (CombiningGpu) under
// --param transfer. Both record into one trace on one time axis: the CPU device and its worker
// tracks first (device 0), then the GPU and its SM lanes (device 1), and one host track with the
// launches, their transfers and every split decision (RequestSplit).
#pragma once

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "gpulb/cpu/policies/combining.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/gcharm/request_loop.hpp"
#include "gpulb/gpu_request.hpp"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/detail/gpu_run.cuh"
#include "gpulb/kernels/policies/combining.cuh"
#include "gpulb/policies/hybrid.hpp"

namespace gpulb::kernels {
namespace detail {

// The host track is the CPU runtime's; the watchdog is the GPU's (it also stops the kernels), fed
// with the requests completed on either side.
class HybridHost : public gcharm::RequestHost {
 public:
  HybridHost(cpu::Runtime& rt, Watchdog& watchdog) : rt_(rt), watchdog_(watchdog) {}
  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override {
    rt_.host_record(kind, arg, aux);
  }
  std::uint64_t now_ns() const override { return rt_.now_ns(); }
  void tick(std::uint64_t progress, const std::function<std::string()>& state) override {
    rt_.rethrow_failure();
    watchdog_.check(progress, state);
  }

 private:
  cpu::Runtime& rt_;
  Watchdog& watchdog_;
};

template <class Factory>
ExecOutput run_hybrid_on_gpu(const ExecPlan& plan, Factory& make_body) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  if (plan.requests == nullptr)
    throw ConfigError("policy 'hybrid' runs work requests; this scenario makes none");
  present_gpus(plan);
  if (plan.gpus > 1)
    throw ConfigError(
        "policy 'hybrid' runs on the CPU and one GPU on the cuda backend; use --gpus 1");
  cuda::check_usable(0);
  // The CPU side: --workers threads, by default half the hardware threads (the scenario's
  // producers need the others).
  ExecPlan cpu_plan = plan;
  cpu_plan.workers = plan.workers ? plan.workers : std::max(1u, cpu::default_workers() / 2);
  try {
    GPULB_CUDA_TRY(cudaSetDevice(0));
    cpu::Runtime rt(cpu_plan, 8 * plan.requests->expected_requests + 64);
    GpuSession s(0, 1, rt.origin_ns());
    const std::uint32_t segments = request_trace_segments(plan);
    s.allocate_trace(segments, plan.trace ? 3 : 0);
    const Body body = make_body(0u, 0u);
    std::atomic<bool> abort_all{false};
    Watchdog watchdog(plan, s, abort_all);
    const policies::HybridOptions& o = plan.policy_options<policies::HybridOptions>();
    CombiningGpu<Body> gpu(s, plan, o, body, watchdog, segments);
    cpu::detail::CombiningHost<Body> cpu_side(rt, cpu_plan, body, plan.requests->item_bytes, 0,
                                              rt.workers());
    HybridHost host(rt, watchdog);
    // Before the workers start: a strategy hybrid does not take throws with no thread to join.
    const gcharm::HybridStrategy strategy = gcharm::hybrid_strategy(o.strategy);
    rt.start([&](std::uint32_t rank) { cpu_side.work(rank); });
    // Both sides' averages are per worker: a CPU part of k requests runs on min(k, workers)
    // threads, a GPU part on min(k, resident) blocks, one request each, its largest bounding it
    // (the paper models both as wide devices: hybrid_split.hpp says why not).
    gcharm::HybridSplitter splitter(strategy, o.cpu_share, rt.workers(), gpu.resident_blocks());
    std::vector<gcharm::DeviceLane> lanes;
    gcharm::RequestTotals totals;
    try {
      totals = gcharm::run_hybrid(plan, host, cpu_side, gcharm::TransferMode::InPlace, gpu, lanes,
                                  splitter);
    } catch (...) {
      cpu_side.quit();
      rt.join();
      gpu.synchronize();
      throw;
    }
    cpu_side.quit();
    gpu.synchronize();
    ExecOutput out = rt.finish("host: work group list", totals.requests);
    s.info().workers = gpu.resident_blocks();
    out.trace.devices.push_back(s.info());
    if (plan.trace) s.drain_sm_lane_tracks(out.trace.tracks);
    out.workers += gpu.resident_blocks();
    out.trace.meta.clock_source =
        "steady_clock (CPU side), globaltimer aligned to steady_clock (GPU side)";
    totals.to_metrics(out.metrics, lanes);
    out.metrics["cpu_ns_per_item_x1000"] =
        static_cast<std::uint64_t>(splitter.cpu_ns_per_item() * 1000);
    out.metrics["gpu_ns_per_item_x1000"] =
        static_cast<std::uint64_t>(splitter.gpu_ns_per_item() * 1000);
    out.metrics.erase("tasks_per_worker_max");  // the CPU side's only: misleading for the run
    out.metrics.erase("tasks_per_worker_min");
    if (gpu.untraced() > 0) {
      out.notes.push_back(std::to_string(gpu.untraced()) + " GPU requests past the trace's " +
                          std::to_string(segments) +
                          " block segments ran untraced; raise --trace-memory");
    }
    return out;
  } catch (...) {
    rethrow_gpu_failure(plan, 0);
  }
}

}  // namespace detail

struct HybridDriver {
  static const PolicyDescriptor& descriptor() { return policies::hybrid(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    return detail::run_hybrid_on_gpu(plan, make_body);
  }
};

}  // namespace gpulb::kernels
