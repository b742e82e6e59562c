// The static list across the GPUs of one host (--policy static-list --gpus N, N > 1): generation by
// generation as on one GPU (static_list_kernels.cuh), each GPU running its share of a generation.
//
// DEPARTURE: Cederman & Tsigas, and Mohan & Gopalan after them, ran the static list on one GPU.
// Here each GPU has its own pair of arrays (sized and grown on their own, as on one GPU:
// gpulb/static_list_sizing.hpp, static_list_kernels.cuh) and runs static_list_kernel
// on its share; its blocks append their children to its own output array. When every GPU's launch
// has ended, the host reads each GPU's NEWTASKCNT and splits the next generation (the GPUs' output
// arrays one after the other) into N even contiguous shares (gpulb/static_list_split.hpp); the
// tasks that fall into another GPU's share move there with cudaMemcpyPeerAsync (direct over
// NVLink where peer access is enabled, staged through host memory by CUDA where it is not), and
// the next generation starts on every GPU. docs/papers.md lists this with the other runs across GPUs.
//
// One host thread drives every GPU (a run on the GPU run frame, gpu_run.cuh, that drives its GPUs
// itself rather than from a thread per GPU): it launches the generation on each GPU's kernel stream back to
// back (the GPUs run concurrently; a launch is asynchronous), polls them all, and does the exchange.
// Ordering, per generation:
//   1. every GPU's launch has ended (its kernel stream queried/synchronized by the host) before the
//      host reads its NEWTASKCNT (a synchronous copy) and before any copy reads its output array;
//   2. the copies run on the receiving GPU's copy stream, and the host synchronizes every GPU's copy
//      stream before it launches the next generation anywhere: a GPU whose share was assembled in
//      its other array writes its next children into the array that other GPUs were reading;
//   3. the cursor and NEWTASKCNT resets are on the kernel stream, ahead of the launch;
//   4. a GPU whose launch stopped on a full output array grows it and launches the rest of its
//      share at once, while the others run on: its NEWTASKCNT counts only once that has ended.
// The copies themselves never write a slot that another copy of the same exchange reads
// (split_generation's layouts; tests/core/static_list_split_test.cpp plays every small case out).
//
// Ids: each GPU gives its children ids on its own counter, interleaved with the other GPUs' (GPU g
// from first + g, stepping by N; gpulb/spawn.hpp), as the run of work-stealing across GPUs does; a
// scenario with a table per task id is refused across GPUs by gpulb::run.
//
// Trace: per GPU its block tracks and its host track (KernelLaunch/KernelEnd per generation it ran,
// arg: its tasks; a Transfer, aux 0 "to the device", arg: the bytes that came from other GPUs, when
// the exchange into it is issued). Metrics: generations, peak_task_slots (the largest generation,
// all GPUs together, as on one GPU), peak_task_slots_per_gpu (the most slots one array of one GPU
// needed), list_slots (the largest array allocated), list_resumes, tasks_moved (tasks copied
// between GPUs), exchange_ns (host time from the last kernel's end to the next launch, summed),
// gpus, and per GPU gpuG_tasks and gpuG_moved_in.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gpu_request.hpp"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/detail/gpu_run.cuh"
#include "gpulb/kernels/static_list_kernels.cuh"
#include "gpulb/policies/static_list.hpp"
#include "gpulb/static_list_split.hpp"

namespace gpulb::kernels::detail {

// Enables peer access between the run's GPUs wherever cudaDeviceCanAccessPeer allows it (the copies
// then go directly, over NVLink or PCIe). Unlike work stealing across GPUs nothing needs it: a
// cudaMemcpyPeerAsync between GPUs without it is staged through host memory. Returns the ordered
// pairs (a, b) that stay without.
inline std::uint32_t enable_peer_copies(std::uint32_t gpus) {
  std::uint32_t staged = 0;
  for (std::uint32_t a = 0; a < gpus; ++a) {
    GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(a)));
    for (std::uint32_t b = 0; b < gpus; ++b) {
      if (a == b) continue;
      int can = 0;
      GPULB_CUDA_TRY(cudaDeviceCanAccessPeer(&can, static_cast<int>(a), static_cast<int>(b)));
      if (!can) {
        ++staged;
        continue;
      }
      const cudaError_t e = cudaDeviceEnablePeerAccess(static_cast<int>(b), 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorTooManyPeers) {
        cudaGetLastError();  // not sticky: enabled by an earlier run, or past the peer limit (staged then)
        if (e == cudaErrorTooManyPeers) ++staged;
      } else {
        GPULB_CUDA_TRY(e);
      }
    }
  }
  return staged;
}

// One GPU's arrays and where its current generation is (its memory; current device at construction).
struct SlGpuState {
  SlGpuState(std::uint32_t blocks, std::span<const Task> share, std::uint32_t in_slots,
             const ListSizer& sizer)
      : list(blocks, share, in_slots),
        sizer(sizer),
        count(static_cast<std::uint32_t>(share.size())),
        peak_slots(share.size()) {}

  Task* input() const { return list.array(in) + first; }
  Task* output() const { return list.array(1 - in); }

  DeviceStaticList list;
  ListSizer sizer;
  int in = 0;               // the array that holds this generation's share
  std::uint32_t first = 0;  // the share's first slot there
  std::uint32_t count = 0;  // the share's tasks
  bool running = false;     // its launch of this generation has not been seen to end
  std::uint64_t ran = 0;    // tasks of the generations that ended (exact, from the host's counts)
  std::uint64_t moved_in = 0;
  std::uint64_t peak_slots = 0;
};

// The run of the static list across GPUs on the GPU run frame (gpu_run.cuh): one thread drives
// every GPU, generation by generation (the ordering above). Body is the factory's body type as the
// caller spells it (body_factory.hpp says why it is not named here).
template <class Factory, class Body>
class SlAcrossGpus {
 public:
  SlAcrossGpus(const GpuRun& run, Factory& make_body)
      : make_body_(make_body), gpus_(run.gpus()), produced_(gpus_, 0) {
    const std::size_t tasks = run.plan().tasks.size();
    if ((tasks + gpus_ - 1) / gpus_ > kMaxListSlots) {
      throw RunError("static-list: " + std::to_string(tasks) + " initial tasks on " +
                     std::to_string(gpus_) + " GPUs are more than one array a GPU holds (" +
                     std::to_string(kMaxListSlots) + ")");
    }
  }

  std::vector<std::string> notes;
  TrackLayout layout() const { return TrackLayout::PerBlock; }
  void connect(GpuRun&) { staged_pairs_ = enable_peer_copies(gpus_); }
  void allocate(GpuRun& run);
  void drive(GpuRun& run);
  GpuShare collect(GpuRun& run, std::uint32_t g, ExecOutput& out);
  void finish(GpuRun& run, ExecOutput& out);

 private:
  std::uint32_t open_gpu(GpuRun& run, std::uint32_t g);
  void allocate_gpu(GpuRun& run, std::uint32_t g, std::uint64_t first,
                    std::uint32_t trace_capacity);
  void run_generations(GpuRun& run);
  void launch_generation(GpuRun& run);
  void wait_generation(GpuRun& run, std::uint64_t done_before);
  bool poll_gpu(GpuRun& run, std::uint32_t g, std::uint64_t done_before);
  void end_gpu_launch(GpuRun& run, std::uint32_t g);
  void launch_gpu(GpuRun& run, std::uint32_t g, std::uint32_t left);
  void assemble_share(GpuRun& run, std::uint32_t g, const GenerationShare& share);
  void report_progress(GpuRun& run);
  void exchange(GpuRun& run);
  void stop_the_others(GpuRun& run);

  Factory& make_body_;
  std::uint32_t gpus_;
  std::uint32_t staged_pairs_ = 0;
  std::vector<GridSize> grids_;
  std::vector<Body> bodies_;
  std::vector<std::unique_ptr<SlGpuState>> states_;
  std::vector<std::unique_ptr<DynamicHost>> hosts_;
  std::vector<std::uint32_t> produced_;  // NEWTASKCNT of each GPU in this generation
  std::uint32_t generations_ = 0;
  std::uint64_t peak_ = 0, moved_ = 0, exchange_ns_ = 0, launch_ns_ = 0, end_ns_ = 0,
                last_report_ns_ = 0;
  std::uint64_t peak_per_gpu_ = 0, largest_ = 0, resumes_ = 0;
};

// Every GPU's grid and body first (as the other runs across GPUs), then its memory.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::allocate(GpuRun& run) {
  std::uint32_t total_blocks = 0;
  for (std::uint32_t g = 0; g < gpus_; ++g)
    run.on_gpu(g, [&] { total_blocks += open_gpu(run, g); });
  // Per task: begin, end, a spawn; per generation a start and an end (counted in the 4096 spare).
  const std::uint32_t trace_capacity = dynamic_trace_capacity(run.plan(), total_blocks, 3, notes);
  std::uint64_t first = 0;
  for (std::uint32_t g = 0; g < gpus_; ++g) {
    run.on_gpu(g, [&] { allocate_gpu(run, g, first, trace_capacity); });
    first += states_[g]->count;
  }
  peak_ = run.plan().tasks.size();
}

template <class Factory, class Body>
std::uint32_t SlAcrossGpus<Factory, Body>::open_gpu(GpuRun& run, std::uint32_t g) {
  const ExecPlan& p = run.plan();
  grids_.push_back(persistent_grid(reinterpret_cast<const void*>(&static_list_kernel<Body, true>),
                                   static_cast<int>(g), p.block_size, p.workers));
  if (!grids_.back().note.empty())
    notes.push_back("GPU " + std::to_string(g) + ": " + grids_.back().note);
  bodies_.push_back(make_body_(g, grids_.back().blocks));
  return grids_.back().blocks;
}

// GPU g's two arrays, its share of the first generation from the initial tasks' slot `first`, its
// host side and its trace segments.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::allocate_gpu(GpuRun& run, std::uint32_t g, std::uint64_t first,
                                               std::uint32_t trace_capacity) {
  const ExecPlan& p = run.plan();
  GpuSession& s = run.session(g);
  check_static_list_widest(p, gpus_, "GPU " + std::to_string(g));
  // The first generation: the initial tasks in N even contiguous shares, as every later one.
  const std::uint64_t n = p.tasks.size() / gpus_ + (g < p.tasks.size() % gpus_ ? 1 : 0);
  // A GPU's children of its even share are about an even share of the next generation; an eighth
  // more than the widest generation's even share leaves room for the shares' spread.
  const std::uint64_t widest_share = (p.widest_generation + gpus_ - 1) / gpus_;
  const std::uint32_t list_capacity = p.policy_options<policies::StaticListOptions>().list_capacity;
  states_.push_back(std::make_unique<SlGpuState>(
      grids_[g].blocks, p.tasks.subspan(first, n), list_capacity,
      ListSizer(list_capacity, widest_share + widest_share / 8, p.expected_tasks)));
  largest_ = std::max<std::uint64_t>(largest_, states_[g]->list.capacity(0));
  hosts_.push_back(std::make_unique<DynamicHost>(s, p, grids_[g].blocks, run.abort_all()));
  hosts_.back()->interleave_ids(g, gpus_);
  s.allocate_trace(grids_[g].blocks, trace_capacity);
}

// Every generation; after a failure the GPUs whose launch may still run are stopped first.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::drive(GpuRun& run) {
  try {
    launch_ns_ = run.session(0).now_ns();
    run_generations(run);
    end_ns_ = run.session(0).now_ns();
  } catch (...) {
    stop_the_others(run);
    throw;
  }
}

template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::run_generations(GpuRun& run) {
  for (;;) {
    std::uint64_t total = 0, done_before = 0;
    for (const auto& st : states_) {
      total += st->count;
      done_before += st->ran;
    }
    if (total == 0) return;
    ++generations_;
    launch_generation(run);
    wait_generation(run, done_before);
    const std::uint64_t ended_ns = run.session(0).now_ns();
    std::uint64_t next = 0;
    for (std::uint32_t g = 0; g < gpus_; ++g) {
      states_[g]->sizer.generation_ended(states_[g]->count, produced_[g]);
      states_[g]->ran += states_[g]->count;
      states_[g]->peak_slots = std::max<std::uint64_t>(states_[g]->peak_slots, produced_[g]);
      next += produced_[g];
    }
    peak_ = std::max(peak_, next);
    if (next == 0) {
      for (auto& st : states_) st->count = 0;
      return;
    }
    exchange(run);
    exchange_ns_ += run.session(0).now_ns() - ended_ns;
  }
}

// Every GPU's share, launched back to back: the GPUs start together.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::launch_generation(GpuRun& run) {
  for (std::uint32_t g = 0; g < gpus_; ++g) {
    SlGpuState& st = *states_[g];
    if (st.count == 0) continue;
    run.on_gpu(g, [&] {
      const std::uint32_t slots =
          reserve_static_list_output(st.list, 1 - st.in, st.sizer, st.count);
      largest_ = std::max<std::uint64_t>(largest_, slots);
      st.list.reset(run.session(g).kernel_stream());
      launch_gpu(run, g, st.count);
    });
  }
}

// A launch on GPU g (current) over its share, `left` tasks of which are not yet taken.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::launch_gpu(GpuRun& run, std::uint32_t g, std::uint32_t left) {
  SlGpuState& st = *states_[g];
  GpuSession& s = run.session(g);
  const StaticTaskListRef list{st.input(), st.output(), st.list.ctl(), st.count,
                               st.list.capacity(1 - st.in)};
  s.host_record(trace::EventKind::KernelLaunch, left);
  static_list_kernel<Body, true>
      <<<std::min(left, grids_[g].blocks), run.plan().block_size, 0, s.kernel_stream()>>>(
          list, st.list.cursor(), st.list.held(), hosts_[g]->args(), bodies_[g]);
  GPULB_CUDA_CHECK_LAUNCH();
  st.running = true;
}

// Waits for every GPU, polling each (progress, watchdog, errors); a GPU's failure ends the run.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::wait_generation(GpuRun& run, std::uint64_t done_before) {
  std::fill(produced_.begin(), produced_.end(), 0u);
  for (bool busy = true; busy;) {
    busy = false;
    for (std::uint32_t g = 0; g < gpus_; ++g) {
      if (!states_[g]->running) continue;
      run.on_gpu(g, [&] { busy = poll_gpu(run, g, done_before) || busy; });
    }
    if (run.reports_progress()) report_progress(run);
    if (busy) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// One poll of GPU g's launch: true while it runs. The tasks of the generations that ended count as
// progress: the watchdog's clock starts again with each generation, as on one GPU.
template <class Factory, class Body>
bool SlAcrossGpus<Factory, Body>::poll_gpu(GpuRun& run, std::uint32_t g,
                                           std::uint64_t done_before) {
  const cudaError_t q = cudaStreamQuery(run.session(g).kernel_stream());
  if (q == cudaErrorNotReady) {
    const std::uint32_t gen = generations_, n = states_[g]->count;
    hosts_[g]->wait_step(
        [&] {
          return "generation " + std::to_string(gen) + ": GPU " + std::to_string(g) +
                 "'s share of " + std::to_string(n) + " tasks has not finished";
        },
        done_before);
    return true;
  }
  GPULB_CUDA_TRY(q);
  end_gpu_launch(run, g);
  return states_[g]->running;  // launched again after its output array grew
}

// GPU g's launch has ended: its blocks' first failure, and its NEWTASKCNT; where the launch
// stopped on a full output array, the array grows and the rest of the share is launched.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::end_gpu_launch(GpuRun& run, std::uint32_t g) {
  GpuSession& s = run.session(g);
  SlGpuState& st = *states_[g];
  GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
  st.running = false;
  s.host_record(trace::EventKind::KernelEnd, st.count);
  const DeviceFailure f = hosts_[g]->failure();
  if (f.code != 0) {
    const std::string why = hosts_[g]->common_failure_message(f);
    throw RunError((why.empty() ? "static-list: block " + std::to_string(f.block) +
                                      " failed (code " + std::to_string(f.code) + ")"
                                : why) +
                   " (GPU " + std::to_string(g) + ")");
  }
  const std::uint32_t tail = st.list.tail();  // NEWTASKCNT
  if (tail > st.list.capacity(1 - st.in)) {
    grow_static_list_output(st.list, 1 - st.in, st.sizer, generations_, st.count, hosts_[g]->args(),
                            s.kernel_stream(), "GPU " + std::to_string(g));
    largest_ = std::max<std::uint64_t>(largest_, st.list.capacity(1 - st.in));
    ++resumes_;
    const std::uint32_t taken = std::min(st.list.taken(), st.count);
    if (taken < st.count) return launch_gpu(run, g, st.count - taken);
  }
  produced_[g] = tail;
}

// Every 20 ms while the GPUs run: every GPU's tasks, from the generations that ended and the polls.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::report_progress(GpuRun& run) {
  const std::uint64_t now = run.session(0).now_ns();
  if (now - last_report_ns_ <= 20'000'000) return;
  last_report_ns_ = now;
  std::uint64_t progress = 0;
  for (std::uint32_t g = 0; g < gpus_; ++g)
    progress += std::max(states_[g]->ran, hosts_[g]->polled());
  run.report_progress(progress, run.plan().expected_tasks);
}

// The exchange: every copy into GPU g on g's copy stream; the sources are the output arrays, which
// every GPU's ended launch wrote (1. above). Only once every copy has read its source does each
// GPU's generation move to its share.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::exchange(GpuRun& run) {
  std::vector<std::uint32_t> out_slots(gpus_);
  for (std::uint32_t g = 0; g < gpus_; ++g)
    out_slots[g] = states_[g]->list.capacity(1 - states_[g]->in);
  const std::vector<GenerationShare> shares = split_generation(produced_, out_slots);
  for (std::uint32_t g = 0; g < gpus_; ++g)
    run.on_gpu(g, [&] { assemble_share(run, g, shares[g]); });
  for (std::uint32_t g = 0; g < gpus_; ++g)
    run.on_gpu(g, [&] { GPULB_CUDA_TRY(cudaStreamSynchronize(run.session(g).copy_stream())); });
  for (std::uint32_t g = 0; g < gpus_; ++g) {
    SlGpuState& st = *states_[g];
    const GenerationShare& share = shares[g];
    if (share.in_place)
      st.in = 1 - st.in;     // the output array holds the share: the arrays swap (NEWTASKCNT)
    st.first = share.first;  // else the share is in the old input array, from slot 0
    st.count = share.count;
    st.moved_in += share.received;
    st.peak_slots =
        std::max<std::uint64_t>(st.peak_slots, std::uint64_t{share.first} + share.count);
    moved_ += share.received;
  }
}

// GPU g's (current) copies of the exchange, on its copy stream. A share assembled in the old
// input array (read by nobody now) gets that array grown first where it is smaller than the share.
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::assemble_share(GpuRun& run, std::uint32_t g,
                                                 const GenerationShare& share) {
  GpuSession& s = run.session(g);
  SlGpuState& st = *states_[g];
  if (!share.in_place && share.count > st.list.capacity(st.in)) {
    st.list.replace(st.in, 0);
    const std::uint64_t free = device_free_bytes();
    if (fit_list_slots(share.count, share.count, free) == 0) {
      throw RunError(list_memory_refusal(generations_ + 1, share.count, "GPU " + std::to_string(g),
                                         st.list.bytes(), free, "cudaMemGetInfo"));
    }
    st.list.replace(st.in, share.count);
    largest_ = std::max<std::uint64_t>(largest_, share.count);
  }
  Task* target = share.in_place ? st.output() : st.list.array(st.in);
  for (const GenerationCopy& c : share.copies) {
    const Task* from = states_[c.from]->output() + c.from_slot;
    const std::size_t bytes = std::size_t{c.count} * sizeof(Task);
    if (c.from == g) {
      GPULB_CUDA_TRY(cudaMemcpyAsync(target + c.to_slot, from, bytes, cudaMemcpyDeviceToDevice,
                                     s.copy_stream()));
    } else {
      GPULB_CUDA_TRY(cudaMemcpyPeerAsync(target + c.to_slot, static_cast<int>(g), from,
                                         static_cast<int>(c.from), bytes, s.copy_stream()));
    }
  }
  if (share.received > 0) {
    const std::uint64_t bytes = share.received * sizeof(Task);
    s.host_record(trace::EventKind::Transfer,
                  static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, 0xFFFFFFFFu)), 0);
  }
}

// After a failure: a GPU whose launch may still run is waited for; its watchdog sees abort_all and
// stops it (Watchdog::check), and its own error is dropped (the first one is reported).
template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::stop_the_others(GpuRun& run) {
  run.abort_all().store(true);
  for (std::uint32_t g = 0; g < states_.size() && g < hosts_.size(); ++g) {
    if (static_cast<int>(g) == run.first_failure() || !states_[g]->running) continue;
    try {
      GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
      hosts_[g]->wait_kernel([] { return std::string("stopping after another GPU's failure"); });
    } catch (...) {}
    states_[g]->running = false;
  }
}

template <class Factory, class Body>
GpuShare SlAcrossGpus<Factory, Body>::collect(GpuRun&, std::uint32_t g, ExecOutput& out) {
  DynamicOutcome counts;
  hosts_[g]->collect(counts,
                     /*per_sm=*/false);  // a rank's blocks move between SMs across generations
  out.tasks_run += counts.tasks_run;
  out.tasks_spawned += counts.tasks_spawned;
  out.metrics["gpu" + std::to_string(g) + "_tasks"] = counts.tasks_run;
  out.metrics["gpu" + std::to_string(g) + "_moved_in"] = states_[g]->moved_in;
  peak_per_gpu_ = std::max(peak_per_gpu_, states_[g]->peak_slots);
  return {launch_ns_, end_ns_, counts.tasks_run, grids_[g].blocks};
}

template <class Factory, class Body>
void SlAcrossGpus<Factory, Body>::finish(GpuRun& run, ExecOutput& out) {
  out.metrics["generations"] = generations_;
  out.metrics["peak_task_slots"] = peak_;
  out.metrics["peak_task_slots_per_gpu"] = peak_per_gpu_;
  out.metrics["list_slots"] = largest_;
  out.metrics["list_resumes"] = resumes_;
  out.metrics["tasks_moved"] = moved_;
  out.metrics["exchange_ns"] = exchange_ns_;
  out.metrics["gpus"] = gpus_;
  out.notes.push_back(
      "static-list across " + std::to_string(gpus_) + " GPUs: " + std::to_string(generations_) +
      " generations; the largest needed " + std::to_string(peak_) + " task slots in all, at most " +
      std::to_string(peak_per_gpu_) + " in one array of one GPU (two arrays a GPU); " +
      std::to_string(moved_) + " tasks moved between GPUs; tasks per GPU" +
      tasks_per_gpu(run.shares(), out.tasks_run));
  if (resumes_ > 0) {
    out.notes.push_back("static-list: " + std::to_string(resumes_) +
                        " launches filled their output array and went on after it grew "
                        "(list_capacity sizes the first arrays)");
  }
  if (staged_pairs_ > 0) {
    out.notes.push_back(std::to_string(staged_pairs_) +
                        " ordered pairs of GPUs have no peer access: the tasks between them were "
                        "copied through host memory");
  }
}

template <class Factory>
ExecOutput run_static_list_on_gpus(const ExecPlan& plan, Factory& make_body) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  GpuRun run(plan, GpuRun::Across{});
  SlAcrossGpus<Factory, Body> r(run, make_body);
  return run_on_gpus(run, r);
}

}  // namespace gpulb::kernels::detail
