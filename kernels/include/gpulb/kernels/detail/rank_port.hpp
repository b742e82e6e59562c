// What the ports of a distributed run on the GPUs (rank_pool_port.hpp: a host-fed policy's pool;
// rank_ws_port.hpp: work stealing's deques) do alike for the rank balancer (Distribution::balance,
// on the run's calling thread): its host track, the check for a failed GPU, and the progress
// reports the frame's loop would make while the balancer holds that thread.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "gpulb/exec_plan.hpp"
#include "gpulb/kernels/detail/gpu_run.cuh"
#include "gpulb/tracing/trace.hpp"

namespace gpulb::kernels::detail {

class RankPort : public HostInserter {
 public:
  RankPort(GpuRun& run, std::function<GpuProgress()> progress)
      : run_(run), progress_(std::move(progress)) {}

  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override {
    if (run_.plan().trace)
      events_.push_back(trace::make_event(run_.session(0).now_ns(), kind, arg, aux));
  }
  // A GPU of this rank failed: the balancer must not wait for work that will never come.
  void check() override {
    if (run_.first_failure() >= 0) run_.rethrow_first_failure();
  }
  void pump() override {
    const std::uint64_t now = run_.session(0).now_ns();
    if (now - last_report_ns_ < 50'000'000) return;
    last_report_ns_ = now;
    const GpuProgress p = progress_();
    run_.report_progress(p.done, p.expected);
  }

  // The balancer's own track: its steals and loans (and a pool's level).
  trace::Track track(std::uint32_t device) const {
    trace::Track t;
    t.role = trace::TrackRole::Host;
    t.device = device;
    t.worker = 0;
    t.name = "rank balancer";
    t.events = events_;
    return t;
  }

 protected:
  GpuRun& run_;

 private:
  std::function<GpuProgress()> progress_;
  std::vector<trace::Event> events_;
  std::uint64_t last_report_ns_ = 0;
};

}  // namespace gpulb::kernels::detail
