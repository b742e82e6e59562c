// The run of the policies fed from one host task pool (Chen et al. section 6.2), on the GPU run
// frame (gpu_run.cuh): one control thread per GPU draws from the pool and feeds or launches its GPU
// (task-queue, hardware, chunked). In a distributed run (ExecPlan::distribution) the pool is open
// to other ranks: the rank balancer lends from it and adds to it (rank_pool_port.hpp) while the
// GPUs feed, and the control threads stop their GPUs once the ranks agree the run is over.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulb/distribution.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/kernels/detail/gpu_run.cuh"
#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/kernels/detail/host_pool.hpp"
#include "gpulb/kernels/detail/rank_pool_port.hpp"

namespace gpulb::kernels::detail {

// What a control thread reports back.
struct GpuOutcome {
  std::uint64_t launch_ns = ~std::uint64_t{0};
  std::uint64_t end_ns = 0;
  std::uint64_t tasks_run = 0;
  std::uint32_t workers = 0;
  std::atomic<std::uint64_t> progress{0};
  std::vector<std::string> notes;
};

// Every GPU's body is made before any control thread starts (so the GPUs start together, as they
// would with no records to allocate):
//   workers_of(GpuSession&, const ExecPlan&) -> the worker count the body's records need there
//   control(GpuSession&, const ExecPlan& (gpus resolved), const Body&, HostTaskPool&,
//           std::atomic<bool>& abort_all, GpuOutcome&)
// `pin_pool`: page-lock the pool and find its runs before the launches (HostTaskPool::pin and
// index_runs; the task queue's copy feed).
template <class Factory, class Body, class WorkersOf, class Control>
class HostPoolRun {
 public:
  HostPoolRun(TrackLayout layout, Factory& make_body, WorkersOf workers_of, Control control,
              bool pin_pool)
      : layout_(layout),
        make_body_(make_body),
        workers_of_(std::move(workers_of)),
        control_(std::move(control)),
        pin_pool_(pin_pool) {}

  std::vector<std::string> notes;
  TrackLayout layout() const { return layout_; }

  void allocate(GpuRun& run) {
    for (std::uint32_t g = 0; g < run.gpus(); ++g) {
      run.on_gpu(
          g, [&] { bodies_.push_back(make_body_(g, workers_of_(run.session(g), run.plan()))); });
    }
    outcomes_ = std::vector<GpuOutcome>(run.gpus());
    run_tasks_ = run.plan().tasks.size();
    pool_ = std::make_unique<HostTaskPool>(run.plan().tasks);
    if (run.plan().distribution != nullptr) {
      run_tasks_ = std::max<std::uint64_t>(run_tasks_, run.plan().expected_tasks);
      pool_->open_to_ranks(run_tasks_);
    }
    pool_->expect_starters(run.gpus());
    if (pin_pool_) {
      if (std::string n = pool_->pin(); !n.empty()) notes.push_back(std::move(n));
      if (std::string n = pool_->index_runs(); !n.empty()) notes.push_back(std::move(n));
    }
  }

  // A distributed run only: once every GPU is ready to launch, the ranks meet and the GPUs launch;
  // then the balancer, until no rank has work left; then the pool closes.
  void balance_ranks(GpuRun& run) {
    Distribution* const ranks = run.plan().distribution;
    if (ranks == nullptr) return;
    RankPoolPort port(
        pool_->store(), run, [this] { return progress(); }, [this] { return pool_->refill(); },
        [this] { return pool_->queued(); });
    try {
      if (pool_->wait_until_ready(run.gpus(), run.abort_all())) ranks->meet();
      pool_->let_launch();
      ranks->balance(port);
    } catch (...) {
      pool_->let_launch();
      pool_->store().close();
      throw;
    }
    pool_->store().close();
    balancer_track_ = port.track(0);
  }

  void control(GpuRun& run, std::uint32_t g) {
    control_(run.session(g), run.plan(), bodies_[g], *pool_, run.abort_all(), outcomes_[g]);
  }

  GpuProgress progress() const {
    GpuProgress p{0, run_tasks_};
    for (const GpuOutcome& o : outcomes_) p.done += o.progress.load(std::memory_order_relaxed);
    return p;
  }

  GpuShare collect(GpuRun&, std::uint32_t g, ExecOutput& out) {
    GpuOutcome& o = outcomes_[g];
    out.tasks_run += o.tasks_run;
    for (std::string& n : o.notes) out.notes.push_back(std::move(n));
    return {o.launch_ns, o.end_ns, o.tasks_run, o.workers};
  }

  void finish(GpuRun& run, ExecOutput& out) {
    if (run.plan().trace && !balancer_track_.events.empty())
      out.trace.tracks.push_back(std::move(balancer_track_));
  }

 private:
  TrackLayout layout_;
  Factory& make_body_;
  WorkersOf workers_of_;
  Control control_;
  bool pin_pool_;
  std::vector<Body> bodies_;
  std::vector<GpuOutcome> outcomes_;
  std::unique_ptr<HostTaskPool> pool_;
  std::uint64_t run_tasks_ = 0;
  trace::Track balancer_track_;
};

template <class Factory, class WorkersOf, class Control>
ExecOutput run_on_host_pool(const ExecPlan& plan, TrackLayout layout, Factory& make_body,
                            WorkersOf&& workers_of, Control&& control, bool pin_pool = false) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  GpuRun run(plan, GpuRun::Across{});
  HostPoolRun<Factory, Body, std::decay_t<WorkersOf>, std::decay_t<Control>> r(
      layout, make_body, std::forward<WorkersOf>(workers_of), std::forward<Control>(control),
      pin_pool);
  return run_on_gpus(run, r);
}

}  // namespace gpulb::kernels::detail
