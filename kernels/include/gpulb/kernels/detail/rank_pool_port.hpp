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

#include "gpulb/kernels/detail/open_task_store.hpp"
#include "gpulb/kernels/detail/rank_port.hpp"

namespace gpulb::kernels::detail {

class RankPoolPort final : public RankPort {
 public:
  // `refill`: the tasks this rank's queues take at once (every GPU's queues x capacity);
  // `queued`: the tasks in them now (HostTaskPool::queued). The rank asks other ranks for work
  // while its pool and its queues together hold less than one refill, so that its GPUs do not
  // wait; a rank whose queues took most of its tasks is not hungry (it would take the tasks of a
  // rank that needs them).
  RankPoolPort(OpenTaskStore& store, GpuRun& run, std::function<GpuProgress()> progress,
               std::function<std::uint64_t()> refill, std::function<std::uint64_t()> queued)
      : RankPort(run, std::move(progress)),
        store_(store),
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

 private:
  void record_level() {
    record(trace::EventKind::PoolLevel,
           static_cast<std::uint32_t>(std::min<std::uint64_t>(store_.held(), 0xFFFFFFFFu)), 0);
  }

  OpenTaskStore& store_;
  std::function<std::uint64_t()> refill_;
  std::function<std::uint64_t()> queued_;
};

}  // namespace gpulb::kernels::detail
