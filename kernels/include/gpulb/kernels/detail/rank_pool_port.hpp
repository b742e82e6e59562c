// A distributed run of a host-fed policy on the GPUs (docs/distributed.md): the HostInserter
// through which the rank balancer (Distribution::balance, on the run's calling thread) lends from
// and adds to this rank's open task pool while the GPUs' control threads feed from it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpulb/exec_plan.hpp"
#include "gpulb/kernels/detail/gpu_run.cuh"
#include "gpulb/kernels/detail/open_task_store.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb::kernels::detail {

class RankPoolPort final : public HostInserter {
 public:
  // `refill`: the tasks this rank's queues take at once (every GPU's queues x capacity);
  // `queued`: the tasks in them now (HostTaskPool::queued). The rank asks other ranks for work
  // while its pool and its queues together hold less than one refill, so that its GPUs do not
  // wait; a rank whose queues took most of its tasks is not hungry (it would take the tasks of a
  // rank that needs them).
  RankPoolPort(OpenTaskStore& store, GpuRun& run, std::function<GpuProgress()> progress,
               std::function<std::uint64_t()> refill, std::function<std::uint64_t()> queued)
      : store_(store),
        run_(run),
        progress_(std::move(progress)),
        refill_(std::move(refill)),
        queued_(std::move(queued)) {}

  void insert(std::span<const Task> tasks) override {
    store_.add(tasks);
    record_level();
  }
  std::uint32_t take(std::span<Task> out) override {
    const std::uint32_t n = store_.lend(out);
    if (n > 0) record_level();
    return n;
  }
  // The pool is empty. Tasks may still be in this rank's queues or running, but they spawn
  // nothing (the GPU task queue runs no spawning scenario), so the rank can never lend again:
  // what Safra's termination needs. A hung task is the control thread's watchdog's to find.
  bool idle() const override { return store_.held() == 0; }
  bool hungry() const override { return store_.held() + queued_() < refill_(); }
  void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) override {
    if (run_.plan().trace)
      events_.push_back(trace::make_event(run_.session(0).now_ns(), kind, arg, aux));
  }
  // A GPU of this rank failed: the balancer must not wait for work that will never come.
  void check() override {
    if (run_.first_failure() >= 0) run_.rethrow_first_failure();
  }
  // Progress reports, as the frame's loop would make them while the balancer holds its thread.
  void pump() override {
    const std::uint64_t now = run_.session(0).now_ns();
    if (now - last_report_ns_ < 50'000'000) return;
    last_report_ns_ = now;
    const GpuProgress p = progress_();
    run_.report_progress(p.done, p.expected);
  }

  // The balancer's own track: its steals, loans and the pool's level.
  trace::Track track(std::uint32_t device) const {
    trace::Track t;
    t.role = trace::TrackRole::Host;
    t.device = device;
    t.worker = 0;
    t.name = "rank balancer";
    t.events = events_;
    return t;
  }

 private:
  void record_level() {
    record(trace::EventKind::PoolLevel,
           static_cast<std::uint32_t>(std::min<std::uint64_t>(store_.held(), 0xFFFFFFFFu)), 0);
  }

  OpenTaskStore& store_;
  GpuRun& run_;
  std::function<GpuProgress()> progress_;
  std::function<std::uint64_t()> refill_;
  std::function<std::uint64_t()> queued_;
  std::vector<trace::Event> events_;
  std::uint64_t last_report_ns_ = 0;
};

}  // namespace gpulb::kernels::detail
