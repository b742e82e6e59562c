// The static list across the GPUs of one host (--policy static-list --gpus N, N > 1): generation by
// generation as on one GPU (static_list_kernels.cuh), each GPU running its share of a generation.
//
// DEPARTURE: Cederman & Tsigas, and Mohan & Gopalan after them, ran the static list on one GPU.
// Here each GPU has its own pair of arrays (list_capacity slots each) and runs static_list_kernel
// on its share; its blocks append their children to its own output array. When every GPU's launch
// has ended, the host reads each GPU's NEWTASKCNT and splits the next generation (the GPUs' output
// arrays one after the other) into N even contiguous shares (gpulb/static_list_split.hpp); the
// tasks that fall into another GPU's share move there with cudaMemcpyPeerAsync (direct over
// NVLink where peer access is enabled, staged through host memory by CUDA where it is not), and
// the next generation starts on every GPU. docs/papers.md lists this with the other runs across GPUs.
//
// One host thread drives every GPU: it launches the generation on each GPU's kernel stream back to
// back (the GPUs run concurrently; a launch is asynchronous), polls them all, and does the exchange.
// Ordering, per generation:
//   1. every GPU's launch has ended (its kernel stream queried/synchronized by the host) before the
//      host reads its NEWTASKCNT (a synchronous copy) and before any copy reads its output array;
//   2. the copies run on the receiving GPU's copy stream, and the host synchronizes every GPU's copy
//      stream before it launches the next generation anywhere: a GPU whose share was assembled in
//      its other array writes its next children into the array that other GPUs were reading;
//   3. the cursor and NEWTASKCNT resets are on the kernel stream, ahead of the launch.
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
// needed), tasks_moved (tasks copied between GPUs), exchange_ns (host time from the last kernel's
// end to the next launch, summed), gpus, and per GPU gpuG_tasks and gpuG_moved_in.
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
#include <vector>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/gpu_request.hpp"
#include "gpulb/kernels/detail/gpu_failure.hpp"
#include "gpulb/kernels/static_list_kernels.cuh"
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
  explicit SlGpuState(std::uint32_t capacity)
      : arrays{cuda::DeviceBuffer<Task>(capacity), cuda::DeviceBuffer<Task>(capacity)}, ctl(1), cursor(1) {}

  Task* input() const { return arrays[in].get() + first; }
  Task* output() const { return arrays[1 - in].get(); }

  cuda::DeviceBuffer<Task> arrays[2];
  cuda::DeviceBuffer<StaticTaskListControl> ctl;
  cuda::DeviceBuffer<GenerationCursor> cursor;
  int in = 0;               // the array that holds this generation's share
  std::uint32_t first = 0;  // the share's first slot there
  std::uint32_t count = 0;  // the share's tasks
  bool running = false;     // its launch of this generation has not been seen to end
  std::uint64_t ran = 0;    // tasks of the generations that ended (exact, from the host's counts)
  std::uint64_t moved_in = 0;
  std::uint64_t peak_slots = 0;
};

template <class Factory>
ExecOutput run_static_list_on_gpus(const ExecPlan& plan, Factory& make_body) {
  using Body = std::decay_t<decltype(make_body(0u, 0u))>;
  using trace::EventKind;
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  check_gpu_request(plan.gpus, static_cast<std::uint64_t>(count));
  const std::uint32_t gpus = plan.gpus;
  // The hosts' plan: progress is reported here, from every GPU's count.
  ExecPlan p = plan;
  p.progress = nullptr;
  const PolicyOptions& o = p.options;
  const std::uint32_t capacity = o.list_capacity;
  const std::uint64_t first_share = (p.tasks.size() + gpus - 1) / gpus;
  if (first_share > capacity) {
    throw RunError("static-list: the " + std::to_string(p.tasks.size()) + " initial tasks do not fit list_capacity=" + std::to_string(capacity) +
                   " on " + std::to_string(gpus) + " GPUs (" + std::to_string(first_share) + " a GPU); raise --param list_capacity");
  }

  for (std::uint32_t g = 0; g < gpus; ++g) cuda::check_usable(static_cast<int>(g));
  const std::uint32_t staged_pairs = enable_peer_copies(gpus);

  const std::uint64_t origin = host_now_ns();
  std::atomic<bool> abort_all{false};
  std::vector<std::unique_ptr<GpuSession>> sessions;
  std::vector<GridSize> grids;
  std::vector<Body> bodies;
  std::vector<std::unique_ptr<SlGpuState>> states;
  std::vector<std::unique_ptr<DynamicHost>> hosts;
  std::vector<std::string> notes;
  // The GPU whose part failed first (-1: none, or not a GPU's part); its error is the one reported.
  int failed = -1;
  auto on_gpu = [&](std::uint32_t g, auto&& part) {
    try {
      try {
        GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
        part();
      } catch (...) {
        rethrow_gpu_failure(p, static_cast<int>(g));
      }
    } catch (...) {
      if (failed < 0) failed = static_cast<int>(g);
      throw;
    }
  };

  // Every GPU's session, grid and body first (as the other frames across GPUs), then its memory.
  std::uint32_t total_blocks = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    on_gpu(g, [&] {
      sessions.push_back(std::make_unique<GpuSession>(static_cast<int>(g), g, origin));
      grids.push_back(persistent_grid(reinterpret_cast<const void*>(&static_list_kernel<Body, true>), static_cast<int>(g), p.block_size, p.workers));
      if (!grids.back().note.empty()) notes.push_back("GPU " + std::to_string(g) + ": " + grids.back().note);
      total_blocks += grids.back().blocks;
      bodies.push_back(make_body(g, grids.back().blocks));
    });
  }
  // Per task: begin, end, a spawn; per generation a start and an end (counted in the 4096 spare).
  const std::uint32_t trace_capacity = dynamic_trace_capacity(p, total_blocks, 3, notes);
  std::uint64_t start = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    on_gpu(g, [&] {
      GpuSession& s = *sessions[g];
      check_device_bytes(2 * std::uint64_t{capacity} * sizeof(Task), "the two task arrays on GPU " + std::to_string(g) + " (list_capacity=" +
                                                                          std::to_string(capacity) + " each; lower --param list_capacity)");
      states.push_back(std::make_unique<SlGpuState>(capacity));
      // The first generation: the initial tasks in N even contiguous shares, as every later one.
      const std::uint64_t n = p.tasks.size() / gpus + (g < p.tasks.size() % gpus ? 1 : 0);
      if (n > 0) states[g]->arrays[0].upload(p.tasks.data() + start, n);
      states[g]->count = static_cast<std::uint32_t>(n);
      states[g]->peak_slots = n;
      start += n;
      hosts.push_back(std::make_unique<DynamicHost>(s, p, grids[g].blocks, abort_all));
      hosts.back()->interleave_ids(g, gpus);
      s.allocate_trace(grids[g].blocks, trace_capacity);
    });
  }

  // After a failure: a GPU whose launch may still run is waited for; its watchdog sees abort_all
  // and stops it (Watchdog::check), and its own error is dropped (the first one is reported).
  auto stop_the_others = [&] {
    abort_all.store(true);
    for (std::uint32_t g = 0; g < states.size() && g < hosts.size(); ++g) {
      if (static_cast<int>(g) == failed || !states[g]->running) continue;
      try {
        GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
        hosts[g]->wait_kernel([] { return std::string("stopping after another GPU's failure"); });
      } catch (...) {
      }
      states[g]->running = false;
    }
  };

  std::uint32_t generations = 0;
  std::uint64_t peak = p.tasks.size(), moved = 0, exchange_ns = 0, launch_ns = 0, end_ns = 0;
  std::uint64_t last_report_ns = 0;
  std::vector<std::uint32_t> produced(gpus, 0);
  try {
    launch_ns = sessions[0]->now_ns();
    for (;;) {
      std::uint64_t total = 0, done_before = 0;
      for (const auto& st : states) {
        total += st->count;
        done_before += st->ran;
      }
      if (total == 0) break;
      ++generations;
      // Launch every GPU's share back to back: the GPUs start together.
      for (std::uint32_t g = 0; g < gpus; ++g) {
        SlGpuState& st = *states[g];
        if (st.count == 0) continue;
        on_gpu(g, [&] {
          GpuSession& s = *sessions[g];
          // Stream-ordered resets: this GPU's previous launch has ended when these run.
          GPULB_CUDA_TRY(cudaMemsetAsync(st.cursor.get(), 0, sizeof(GenerationCursor), s.kernel_stream()));
          GPULB_CUDA_TRY(cudaMemsetAsync(st.ctl.get(), 0, sizeof(StaticTaskListControl), s.kernel_stream()));
          const StaticTaskListRef list{st.input(), st.output(), st.ctl.get(), st.count, capacity};
          s.host_record(EventKind::KernelLaunch, st.count);
          static_list_kernel<Body, true><<<std::min(st.count, grids[g].blocks), p.block_size, 0, s.kernel_stream()>>>(list, st.cursor.get(),
                                                                                                                      hosts[g]->args(), bodies[g]);
          GPULB_CUDA_CHECK_LAUNCH();
          st.running = true;
        });
      }
      // Wait for every GPU, polling each (progress, watchdog, errors); a GPU's failure ends the run.
      std::fill(produced.begin(), produced.end(), 0u);
      for (bool busy = true; busy;) {
        busy = false;
        for (std::uint32_t g = 0; g < gpus; ++g) {
          SlGpuState& st = *states[g];
          if (!st.running) continue;
          on_gpu(g, [&] {
            GpuSession& s = *sessions[g];
            DynamicHost& host = *hosts[g];
            const cudaError_t q = cudaStreamQuery(s.kernel_stream());
            if (q == cudaErrorNotReady) {
              busy = true;
              const std::uint32_t gen = generations, n = st.count;
              // The tasks of the generations that ended count as progress: the clock starts again
              // with each generation, as on one GPU.
              host.wait_step([&] { return "generation " + std::to_string(gen) + ": GPU " + std::to_string(g) + "'s share of " + std::to_string(n) +
                                          " tasks has not finished"; },
                             done_before);
              return;
            }
            GPULB_CUDA_TRY(q);
            GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
            st.running = false;
            s.host_record(EventKind::KernelEnd, st.count);
            const DeviceFailure f = host.failure();
            if (f.code != 0) {
              std::string msg = host.common_failure_message(f);
              if (static_cast<DynamicFailure>(f.code) == DynamicFailure::ListCapacity) {
                msg = "static-list: generation " + std::to_string(generations) + " created more than list_capacity=" + std::to_string(capacity) +
                      " tasks on GPU " + std::to_string(g) + "; raise --param list_capacity";
              } else {
                msg += " (GPU " + std::to_string(g) + ")";
              }
              throw RunError(msg);
            }
            StaticTaskListControl c;
            st.ctl.download(&c, 1);  // NEWTASKCNT
            if (c.tail > capacity) throw RunError("static-list: GPU " + std::to_string(g) + "'s output array passed list_capacity unnoticed");
            produced[g] = c.tail;
          });
        }
        if (plan.progress) {
          const std::uint64_t now = sessions[0]->now_ns();
          if (now - last_report_ns > 20'000'000) {
            last_report_ns = now;
            std::uint64_t progress = 0;
            for (std::uint32_t g = 0; g < gpus; ++g) progress += std::max(states[g]->ran, hosts[g]->polled());
            plan.progress(progress, plan.expected_tasks);
          }
        }
        if (busy) std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
      const std::uint64_t ended_ns = sessions[0]->now_ns();
      std::uint64_t next = 0;
      for (std::uint32_t g = 0; g < gpus; ++g) {
        states[g]->ran += states[g]->count;
        states[g]->peak_slots = std::max<std::uint64_t>(states[g]->peak_slots, produced[g]);
        next += produced[g];
      }
      peak = std::max(peak, next);
      if (next == 0) {
        for (auto& st : states) st->count = 0;
        break;
      }
      // The exchange: every copy into GPU g on g's copy stream; the sources are the output arrays,
      // which every GPU's ended launch wrote (1. above).
      const std::vector<GenerationShare> shares = split_generation(produced, capacity);
      for (std::uint32_t g = 0; g < gpus; ++g) {
        on_gpu(g, [&] {
          GpuSession& s = *sessions[g];
          const SlGpuState& st = *states[g];
          const GenerationShare& share = shares[g];
          Task* target = share.in_place ? st.output() : st.arrays[st.in].get();
          for (const GenerationCopy& c : share.copies) {
            const Task* from = states[c.from]->output() + c.from_slot;
            const std::size_t bytes = std::size_t{c.count} * sizeof(Task);
            if (c.from == g) {
              GPULB_CUDA_TRY(cudaMemcpyAsync(target + c.to_slot, from, bytes, cudaMemcpyDeviceToDevice, s.copy_stream()));
            } else {
              GPULB_CUDA_TRY(cudaMemcpyPeerAsync(target + c.to_slot, static_cast<int>(g), from, static_cast<int>(c.from), bytes, s.copy_stream()));
            }
          }
          if (share.received > 0) {
            const std::uint64_t bytes = share.received * sizeof(Task);
            s.host_record(EventKind::Transfer, static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, 0xFFFFFFFFu)), 0);
          }
        });
      }
      for (std::uint32_t g = 0; g < gpus; ++g) on_gpu(g, [&] { GPULB_CUDA_TRY(cudaStreamSynchronize(sessions[g]->copy_stream())); });
      // Only now (every copy has read its source) does each GPU's generation move to its share.
      for (std::uint32_t g = 0; g < gpus; ++g) {
        SlGpuState& st = *states[g];
        const GenerationShare& share = shares[g];
        if (share.in_place) st.in = 1 - st.in;  // the output array holds the share: the arrays swap (NEWTASKCNT)
        st.first = share.first;                 // else the share is in the old input array, from slot 0
        st.count = share.count;
        st.moved_in += share.received;
        st.peak_slots = std::max<std::uint64_t>(st.peak_slots, std::uint64_t{share.first} + share.count);
        moved += share.received;
      }
      exchange_ns += sessions[0]->now_ns() - ended_ns;
    }
    end_ns = sessions[0]->now_ns();
  } catch (...) {
    stop_the_others();
    throw;
  }

  ExecOutput out;
  out.notes = std::move(notes);
  std::vector<std::uint64_t> gpu_tasks(gpus, 0);
  std::uint64_t peak_per_gpu = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    on_gpu(g, [&] {
      GpuSession& s = *sessions[g];
      DynamicOutcome counts;
      hosts[g]->collect(counts, /*per_sm=*/false);  // a rank's blocks move between SMs across generations
      out.tasks_run += counts.tasks_run;
      out.tasks_spawned += counts.tasks_spawned;
      gpu_tasks[g] = counts.tasks_run;
      out.metrics["gpu" + std::to_string(g) + "_tasks"] = counts.tasks_run;
      out.metrics["gpu" + std::to_string(g) + "_moved_in"] = states[g]->moved_in;
      peak_per_gpu = std::max(peak_per_gpu, states[g]->peak_slots);
      out.workers += grids[g].blocks;
      s.info().workers = grids[g].blocks;
      out.trace.devices.push_back(s.info());
      if (p.trace) {
        s.drain_worker_tracks(out.trace.tracks);
        out.trace.tracks.push_back(s.host_track("GPU " + std::to_string(s.device()) + " control thread"));
      }
    });
  }
  out.makespan_ns = end_ns > launch_ns ? end_ns - launch_ns : 0;
  out.metrics["generations"] = generations;
  out.metrics["peak_task_slots"] = peak;
  out.metrics["peak_task_slots_per_gpu"] = peak_per_gpu;
  out.metrics["tasks_moved"] = moved;
  out.metrics["exchange_ns"] = exchange_ns;
  out.metrics["gpus"] = gpus;
  std::string line = "static-list across " + std::to_string(gpus) + " GPUs: " + std::to_string(generations) + " generations; the largest needed " +
                     std::to_string(peak) + " task slots in all, at most " + std::to_string(peak_per_gpu) +
                     " in one array of one GPU (two arrays a GPU); " + std::to_string(moved) + " tasks moved between GPUs; tasks per GPU";
  for (std::uint32_t g = 0; g < gpus; ++g) {
    const double share = out.tasks_run ? 100.0 * static_cast<double>(gpu_tasks[g]) / static_cast<double>(out.tasks_run) : 0.0;
    line += (g ? ", " : " ") + std::to_string(gpu_tasks[g]) + " (" + std::to_string(static_cast<int>(share + 0.5)) + "%)";
  }
  out.notes.push_back(line);
  if (staged_pairs > 0) {
    out.notes.push_back(std::to_string(staged_pairs) + " ordered pairs of GPUs have no peer access: the tasks between them were copied through host memory");
  }
  out.trace.meta.clock_source = "globaltimer aligned to steady_clock";
  if (plan.progress) plan.progress(out.tasks_run, plan.expected_tasks);
  return out;
}

}  // namespace gpulb::kernels::detail
