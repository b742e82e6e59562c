// The one frame of every run of the CUDA backend, on one GPU or several: the device checks, a
// session per GPU, the GPUs' parts (a thread per GPU, or one thread that drives them all), the
// first failure wins and stops the others, progress reports, then the merged trace and outcome.
//
// A run is an object that supplies only what is its own:
//   std::vector<std::string> notes;               the run's notes so far, first in the output
//   TrackLayout layout() const;                   how its blocks become trace tracks
//   void allocate(GpuRun&);                       bodies and memory of every GPU, before any launch
//   void control(GpuRun&, std::uint32_t g);       GPU g's part on a thread of its own: launch, feed,
//   GpuProgress progress() const;                   wait; and its tasks done so far, every GPU's
// or
//   void drive(GpuRun&);                          every GPU's part, on the calling thread
//   GpuShare collect(GpuRun&, std::uint32_t g, ExecOutput&);  on GPU g once every part ended: its
//                                                 counts and metrics
//   void finish(GpuRun&, ExecOutput&);            the run's notes and metrics over every GPU
// and, where the GPUs must reach each other's memory, void connect(GpuRun&) (after the GPUs were
// found usable, before the sessions open); where the run balances across MPI ranks,
// void balance_ranks(GpuRun&): on the calling thread (MPI's FUNNELED thread) while the GPUs' parts
// run on theirs, returning once every rank is out of work.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpulb/cuda/check.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"

namespace gpulb::kernels::detail {

// The CUDA GPUs present: ConfigError where there is none, or fewer than --gpus asks for.
int present_gpus(const ExecPlan& plan);

// What a run tells the frame about one GPU's part once it ended.
struct GpuShare {
  std::uint64_t launch_ns = ~std::uint64_t{0};
  std::uint64_t end_ns = 0;
  std::uint64_t tasks = 0;
  std::uint32_t workers = 0;
};

// Tasks done so far over every GPU, and the total they count towards.
struct GpuProgress {
  std::uint64_t done = 0;
  std::uint64_t expected = 0;
};

// The state the frame and a run share: the plan the GPUs' parts see, the sessions, the abort flag,
// the first failure.
class GpuRun {
 public:
  struct Across {};  // the GPUs --gpus asks for (0: all)
  struct OnOne {};   // GPU 0 alone, its part on the calling thread

  // Across GPUs the parts run on threads of their own: their plan has the GPU count resolved and
  // no progress callback, and the frame alone reports progress (from the calling thread).
  GpuRun(const ExecPlan& plan, Across);
  // On one GPU the part runs on the calling thread and reports progress itself: its plan is the
  // caller's.
  GpuRun(const ExecPlan& plan, OnOne);

  const ExecPlan& plan() const { return plan_; }
  std::uint32_t gpus() const { return gpus_; }
  int present() const { return present_; }  // the GPUs the host has
  GpuSession& session(std::uint32_t g) { return *sessions_[g]; }
  std::atomic<bool>& abort_all() { return abort_all_; }
  // The GPU whose part failed first (-1: none).
  int first_failure() const { return first_failure_.load(); }
  // Where GPU g's block tracks lie in the merged trace, [first, end) (empty when untraced).
  std::pair<std::size_t, std::size_t> worker_tracks(std::uint32_t g) const {
    return worker_tracks_[g];
  }
  const std::vector<GpuShare>& shares() const { return shares_; }
  // The host clock (host_now_ns) at the sessions' time 0.
  std::uint64_t origin_ns() const { return origin_ns_; }

  bool reports_progress() const { return static_cast<bool>(progress_); }
  void report_progress(std::uint64_t done, std::uint64_t expected) const {
    if (progress_) progress_(done, expected);
  }

  // Runs `part` with GPU g current. A CUDA error becomes a RunError naming the policy and the GPU
  // (gpu_failure.hpp); the first GPU to fail is remembered, every part is asked to stop, and the
  // error goes on to the caller.
  template <class Part>
  void on_gpu(std::uint32_t g, Part&& part) {
    try {
      try {
        GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
        part();
      } catch (...) {
        rethrow_gpu_failure(plan_, static_cast<int>(g));
      }
    } catch (...) {
      record_failure(g, std::current_exception());
      throw;
    }
  }

  // The frame's steps (gpu_run.cuh's run_on_gpus calls them in this order).
  void check_usable() const;
  void open_sessions();
  void rethrow_first_failure() const;
  void merge_gpu(std::uint32_t g, const GpuShare& share, TrackLayout layout, ExecOutput& out);

 private:
  void record_failure(std::uint32_t g, std::exception_ptr e);

  ExecPlan plan_;
  ProgressFn progress_;
  int present_ = 0;
  std::uint32_t gpus_ = 1;
  std::vector<std::unique_ptr<GpuSession>> sessions_;
  std::atomic<bool> abort_all_{false};
  std::atomic<int> first_failure_{-1};
  std::vector<std::exception_ptr> errors_;
  std::vector<std::pair<std::size_t, std::size_t>> worker_tracks_;
  std::vector<GpuShare> shares_;
  std::uint64_t origin_ns_ = 0;
};

template <class Run>
concept DrivesEveryGpu = requires(Run& r, GpuRun& run) {
  r.drive(run);
};
template <class Run>
concept ConnectsGpus = requires(Run& r, GpuRun& run) {
  r.connect(run);
};
template <class Run>
concept BalancesRanks = requires(Run& r, GpuRun& run) {
  r.balance_ranks(run);
};

// A thread per GPU runs the run's control(g); this thread balances across ranks where the run
// does, then reports the progress every 50 ms until every part has ended. The first failure is
// rethrown once all have (a GPU's before the balancer's, which may only have seen it).
template <class Run>
void control_on_threads(GpuRun& run, Run& r) {
  std::vector<std::atomic<bool>> ended(run.gpus());
  std::vector<std::thread> threads;
  for (std::uint32_t g = 0; g < run.gpus(); ++g) {
    threads.emplace_back([&run, &r, &ended, g] {
      try {
        run.on_gpu(g, [&] { r.control(run, g); });
      } catch (...) {  // on_gpu recorded it; the first one is rethrown below
      }
      ended[g].store(true);
    });
  }
  std::exception_ptr balancer_failure;
  if constexpr (BalancesRanks<Run>) {
    try {
      r.balance_ranks(run);
    } catch (...) {
      balancer_failure = std::current_exception();
      run.abort_all().store(true);
    }
  }
  for (;;) {
    bool all_ended = true;
    for (const std::atomic<bool>& e : ended) all_ended = all_ended && e.load();
    const GpuProgress p = r.progress();
    run.report_progress(p.done, p.expected);
    if (all_ended) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (std::thread& t : threads) t.join();
  run.rethrow_first_failure();
  if (balancer_failure) std::rethrow_exception(balancer_failure);
}

// The whole run: sessions, the run's memory, its parts, then every GPU's counts and trace, in GPU
// order, and the run's own notes.
template <class Run>
ExecOutput run_on_gpus(GpuRun& run, Run& r) {
  run.check_usable();
  if constexpr (ConnectsGpus<Run>) r.connect(run);
  run.open_sessions();
  r.allocate(run);
  if constexpr (DrivesEveryGpu<Run>)
    r.drive(run);
  else
    control_on_threads(run, r);
  ExecOutput out;
  out.notes = std::move(r.notes);
  for (std::uint32_t g = 0; g < run.gpus(); ++g) {
    run.on_gpu(g, [&] { run.merge_gpu(g, r.collect(run, g, out), r.layout(), out); });
  }
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  for (const GpuShare& share : run.shares()) {
    first = std::min(first, share.launch_ns);
    last = std::max(last, share.end_ns);
  }
  out.makespan_ns = last > first ? last - first : 0;
  out.origin_ns = run.origin_ns();
  out.first_start_ns = first == ~std::uint64_t{0} ? 0 : first;
  out.trace.meta.clock_source = "globaltimer aligned to steady_clock";
  r.finish(run, out);
  run.report_progress(out.tasks_run, run.plan().expected_tasks);
  return out;
}

// " 120 (40%), 180 (60%)": each GPU's tasks and its share of the run's, for a run's note.
std::string tasks_per_gpu(const std::vector<GpuShare>& shares, std::uint64_t total);

}  // namespace gpulb::kernels::detail
