// The hybrid policy on the CPU backend. With no GPU the two sides of G-Charm's split are both
// host threads: the first half of the workers is the CPU side (reading the published table in
// place), the rest plays the GPU (copying items into its "device" memory under --param transfer,
// as the combining policy's CPU device does). This runs the split and its measurements on any
// machine; the speeds it balances are those of two thread groups, not of a CPU and a GPU.
#pragma once

#include <string>

#include "gpulb/cpu/policies/combining.hpp"
#include "gpulb/policies/hybrid.hpp"

namespace gpulb::cpu {

struct HybridDriver {
  static const PolicyDescriptor& descriptor() { return policies::hybrid(); }
  template <class Body>
  static ExecOutput run(const ExecPlan& plan, const Body& body) {
    if (plan.requests == nullptr)
      throw ConfigError("policy 'hybrid' runs work requests; this scenario makes none");
    Runtime rt(plan, 8 * plan.requests->expected_requests + 64);
    if (rt.workers() < 2)
      throw ConfigError(
          "policy 'hybrid' on the cpu backend needs at least 2 workers (a CPU side and a GPU "
          "side)");
    const std::uint32_t half = rt.workers() / 2;
    detail::RuntimeHost host(rt);
    detail::CombiningHost<Body> cpu_side(rt, plan, body, plan.requests->item_bytes, 0, half);
    detail::CombiningHost<Body> gpu_side(rt, plan, body, plan.requests->item_bytes, half,
                                         rt.workers() - half);
    // Before the workers start: a strategy hybrid does not take throws with no thread to join.
    const policies::HybridOptions& o = plan.policy_options<policies::HybridOptions>();
    const gcharm::HybridStrategy strategy = gcharm::hybrid_strategy(o.strategy);
    rt.start([&](std::uint32_t rank) { (rank < half ? cpu_side : gpu_side).work(rank); });
    // Both sides are threads that run one request each: each side's averages are per worker.
    gcharm::HybridSplitter splitter(strategy, o.cpu_share, half, rt.workers() - half);
    std::vector<gcharm::DeviceLane> lanes;
    gcharm::RequestTotals totals;
    try {
      totals = gcharm::run_hybrid(plan, host, cpu_side, gcharm::TransferMode::InPlace, gpu_side,
                                  lanes, splitter);
    } catch (...) {
      cpu_side.quit();
      gpu_side.quit();
      rt.join();
      throw;
    }
    cpu_side.quit();
    gpu_side.quit();
    ExecOutput out = rt.finish("host: work group list", totals.requests);
    totals.to_metrics(out.metrics, lanes);
    out.metrics["cpu_ns_per_item_x1000"] =
        static_cast<std::uint64_t>(splitter.cpu_ns_per_item() * 1000);
    out.metrics["gpu_ns_per_item_x1000"] =
        static_cast<std::uint64_t>(splitter.gpu_ns_per_item() * 1000);
    out.notes.push_back("hybrid on the cpu backend: workers 0.." + std::to_string(half - 1) +
                        " are the CPU side, the other " + std::to_string(rt.workers() - half) +
                        " play the GPU");
    return out;
  }
};

}  // namespace gpulb::cpu
