// The CUDA backend: runs a scenario's task body under a policy on 1..N GPUs of this host.
// A scenario's CUDA executor (kernels/scenarios/*.cu) calls
//   gpulb::kernels::execute(plan, [&](std::uint32_t gpu_slot) { return Body{...device pointers...}; })
// with the GPU of that slot current, so each GPU gets a body over its own memory.
//
// Every policy runs one host control thread per GPU (Chen et al. section 6.2) drawing from one
// host task pool:
//   task-queue  a persistent kernel fed through the GPU's queues (Algorithms 2 and 3)
//   hardware    one launch of one block per task (Solution 1); GPUs split the tasks evenly
//   chunked     one launch per chunk taken from the pool whenever the GPU is free (Solution 3)
// work-stealing, static-list and blocking-queue run on one GPU: spawning_execute.cuh.
//
// [SECTION] Publisher: Algorithm 2's writes over PCIe with the paper's host write fence
// [SECTION] task-queue control thread
// [SECTION] hardware / chunked control thread
// [SECTION] execute()
#pragma once

#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/kernels/detail/host_pool.hpp"
#include "gpulb/kernels/detail/watchdog.hpp"
#include "gpulb/kernels/spawning_execute.cuh"
#include "gpulb/kernels/task_queue_modern.cuh"
#include "gpulb/kernels/worker_kernels.cuh"
#include "gpulb/scenario.hpp"
#include "gpulb/task_queue.hpp"

namespace gpulb::kernels {
namespace detail {

using trace::EventKind;

// What a control thread reports back.
struct GpuOutcome {
  std::uint64_t launch_ns = ~std::uint64_t{0};
  std::uint64_t end_ns = 0;
  std::uint64_t tasks_run = 0;
  std::uint32_t workers = 0;
  std::atomic<std::uint64_t> progress{0};
  std::vector<std::string> notes;
};

// -------------------------------------------------------------------------------------------------
// [SECTION] Publisher
// -------------------------------------------------------------------------------------------------

// Algorithm 2, lines 9-13, over PCIe: the batch goes through pinned staging memory with
// cudaMemcpyAsync; d_written_gm, then d_n_gm (see task_queue.hpp's DEPARTURE note) follow in the
// same stream, so they land after the tasks; an event synchronization is the paper's
// host_write_fence(). h_consumed is mapped pinned memory the device writes (system scope).
struct PciePublisher {
  Task* d_slots;
  TaskQueueCounters* d_counters;
  QueueWord* h_consumed;     // host pointer of the mapped array
  Task* h_staging;           // pinned, num_queues * capacity
  std::uint32_t* h_words;    // pinned, 2 per queue: written, n
  std::uint32_t capacity;
  cudaStream_t stream;
  cudaEvent_t fence;

  bool ready(std::uint32_t q, std::uint32_t h_written) const {
    return system_atomic_ref<std::uint32_t>(h_consumed[q].value).load(mo::acquire) == h_written;
  }
  void publish(std::uint32_t q, const Task* tasks, std::uint32_t n, std::uint32_t new_written) const {
    Task* staging = h_staging + static_cast<std::size_t>(q) * capacity;
    std::memcpy(static_cast<void*>(staging), tasks, n * sizeof(Task));
    h_words[2 * q] = new_written;
    h_words[2 * q + 1] = n;
    GPULB_CUDA_TRY(cudaMemcpyAsync(d_slots + static_cast<std::size_t>(q) * capacity, staging, n * sizeof(Task),
                                   cudaMemcpyHostToDevice, stream));
    GPULB_CUDA_TRY(cudaMemcpyAsync(&d_counters[q].written.value, &h_words[2 * q], sizeof(std::uint32_t),
                                   cudaMemcpyHostToDevice, stream));
    GPULB_CUDA_TRY(cudaMemcpyAsync(&d_counters[q].n.value, &h_words[2 * q + 1], sizeof(std::uint32_t),
                                   cudaMemcpyHostToDevice, stream));
    GPULB_CUDA_TRY(cudaEventRecord(fence, stream));
    GPULB_CUDA_TRY(cudaEventSynchronize(fence));  // host_write_fence()
  }
};

// The modern variant's host side: the batch and the doorbell are plain stores into mapped pinned
// memory (release at system scope); no CUDA call, no event wait (task_queue_modern.cuh).
struct MappedPublisher {
  Doorbell* h_doorbells;
  Task* h_staging;
  QueueWord* h_consumed;
  std::uint32_t capacity;

  bool ready(std::uint32_t q, std::uint32_t h_written) const {
    return system_atomic_ref<std::uint32_t>(h_consumed[q].value).load(mo::acquire) == h_written;
  }
  void publish(std::uint32_t q, const Task* tasks, std::uint32_t n, std::uint32_t new_written) const {
    std::memcpy(static_cast<void*>(h_staging + static_cast<std::size_t>(q) * capacity), tasks, n * sizeof(Task));
    system_atomic_ref<std::uint32_t>(h_doorbells[q].n).store(n, mo::relaxed);
    system_atomic_ref<std::uint32_t>(h_doorbells[q].written).store(new_written, mo::release);
  }
};

// Trace segment size for a persistent block: its share of the run's events, with room for an
// unlucky schedule, bounded so a large run stays within a few GiB of device memory.
inline std::uint32_t persistent_trace_capacity(const ExecPlan& plan, std::uint64_t tasks, std::uint32_t blocks) {
  if (!plan.trace) return 0;
  if (plan.options.trace_capacity > 0) return plan.options.trace_capacity;
  const std::uint64_t events = 4 * tasks + 16;  // level, begin, end, an idle spell per task
  const std::uint64_t share = events / std::max(1u, blocks);
  const std::uint64_t cap = std::min<std::uint64_t>(events + 64, std::max<std::uint64_t>(8 * share + 1024, 4096));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(cap, std::uint64_t{1} << 20));
}

// -------------------------------------------------------------------------------------------------
// [SECTION] task-queue control thread
// -------------------------------------------------------------------------------------------------

// The feeding loop both variants share: batches from the pool whenever a queue is empty
// (Algorithm 2), then, once every queue is drained, `halt()`.
template <class Publisher, class WaitStep, class Halt>
void feed_queues(GpuSession& s, TaskQueueHost<Publisher>& host, HostTaskPool& pool, WaitStep&& wait_step, Halt&& halt) {
  using Batch = typename TaskQueueHost<Publisher>::Batch;
  while (!pool.empty()) {
    bool pool_drained = false;
    std::uint32_t q = 0;
    const std::uint32_t wrote = host.try_enqueue_from(
        [&](std::uint32_t most) {
          const HostTaskPool::Take t = pool.take(most);
          pool_drained = t.n == 0;
          return Batch{t.tasks, t.n};
        },
        q);
    if (wrote > 0) {
      s.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(q));
      s.host_record(EventKind::QueueLevel, wrote, static_cast<std::uint16_t>(q));
      s.host_record(EventKind::PoolLevel, static_cast<std::uint32_t>(std::min<std::uint64_t>(pool.level(), 0xFFFFFFFFu)));
    } else if (!pool_drained) {
      wait_step("feeding the queues");
    }
  }
  // "The host process has to check whether all queues are empty" before it stops the blocks.
  while (!host.all_empty()) wait_step("waiting for the queues to drain");
  halt();
}

template <class Body>
void control_task_queue(GpuSession& s, const ExecPlan& plan, const Body& body, HostTaskPool& pool,
                        std::atomic<bool>& abort_all, GpuOutcome& out) {
  GPULB_CUDA_TRY(cudaSetDevice(s.device()));
  const bool modern = plan.options.variant == "modern";
  const void* kernel = modern ? reinterpret_cast<const void*>(&task_queue_modern_kernel<Body>)
                              : reinterpret_cast<const void*>(&task_queue_kernel<Body>);
  const GridSize grid = persistent_grid(kernel, s.device(), plan.block_size, plan.workers);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t num_queues = plan.options.queues, capacity = plan.options.queue_capacity;

  cuda::DeviceBuffer<Task> slots(static_cast<std::size_t>(num_queues) * capacity);
  cuda::DeviceBuffer<TaskQueueCounters> counters(num_queues);
  cuda::MappedBuffer<QueueWord> host_consumed(num_queues);
  cuda::MappedBuffer<Task> staging(static_cast<std::size_t>(num_queues) * capacity);
  cuda::DeviceBuffer<std::uint32_t> done(grid.blocks);
  const std::uint64_t share = pool.size() / std::max<std::size_t>(1, plan.gpus) + grid.blocks;
  s.allocate_trace(grid.blocks, persistent_trace_capacity(plan, share, grid.blocks));
  const TaskQueueRef queues{slots.get(), counters.get(), host_consumed.device(), num_queues, capacity};

  Watchdog watchdog(plan, s, abort_all);
  std::vector<TaskQueueCounters> snapshot(num_queues);
  std::uint64_t last_poll_ns = 0;
  // Progress: d_consumed_gm of every queue, read back now and then (it moves with every dequeue).
  auto wait_step = [&](const char* phase) {
    const std::uint64_t now = s.now_ns();
    if (now - last_poll_ns > 20'000'000) {
      last_poll_ns = now;
      GPULB_CUDA_TRY(cudaMemcpyAsync(snapshot.data(), counters.get(), num_queues * sizeof(TaskQueueCounters), cudaMemcpyDeviceToHost, s.copy_stream()));
      GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
      std::uint64_t consumed = 0;
      for (const auto& c : snapshot) consumed += c.consumed.value;
      out.progress.store(consumed, std::memory_order_relaxed);
      const cudaError_t k = cudaStreamQuery(s.kernel_stream());
      if (k != cudaSuccess && k != cudaErrorNotReady) GPULB_CUDA_TRY(k);
      watchdog.check(consumed, [&] {
        std::string st = std::string("while ") + phase + "; pool holds " + std::to_string(pool.level()) + " tasks; queues d_consumed/d_written/d_n:";
        for (const auto& c : snapshot) {
          st += " " + std::to_string(c.consumed.value) + "/" + std::to_string(c.written.value) + "/" + std::to_string(c.n.value);
        }
        return st;
      });
    }
    std::this_thread::yield();
  };

  s.host_record(EventKind::KernelLaunch, grid.blocks);
  out.launch_ns = s.now_ns();
  if (modern) {
    cuda::MappedBuffer<Doorbell> doorbells(num_queues);
    cuda::MappedBuffer<std::uint32_t> halt(1);
    cuda::DeviceBuffer<std::uint32_t> published(num_queues), halt_seen(1);
    cuda::DeviceBuffer<std::uint64_t> last_poll(num_queues);
    const ModernFeedRef feed{doorbells.device(), staging.device(), published.get(), halt.device(), last_poll.get(),
                             halt_seen.get(), std::min(kMaxClaim, std::max(1u, plan.options.claim))};
    task_queue_modern_kernel<Body><<<grid.blocks, plan.block_size, 0, s.kernel_stream()>>>(queues, feed, body, s.trace_ref(), s.stop_flag(), done.get());
    GPULB_CUDA_CHECK_LAUNCH();
    TaskQueueHost<MappedPublisher> host(MappedPublisher{doorbells.host(), staging.host(), host_consumed.host(), capacity}, num_queues, capacity);
    feed_queues(s, host, pool, wait_step, [&] {
      s.host_record(EventKind::Halt);
      system_atomic_ref<std::uint32_t>(*halt.host()).store(1, mo::release);
    });
    while (cudaStreamQuery(s.kernel_stream()) == cudaErrorNotReady) wait_step("waiting for the blocks to stop");
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
  } else {
    cuda::MappedBuffer<std::uint32_t> words(2 * num_queues);
    cuda::Event fence;
    task_queue_kernel<Body><<<grid.blocks, plan.block_size, 0, s.kernel_stream()>>>(queues, body, s.trace_ref(), s.stop_flag(), done.get());
    GPULB_CUDA_CHECK_LAUNCH();
    TaskQueueHost<PciePublisher> host(
        PciePublisher{slots.get(), counters.get(), host_consumed.host(), staging.host(), words.host(), capacity, s.copy_stream(), fence.get()},
        num_queues, capacity);
    feed_queues(s, host, pool, wait_step, [&] {
      // One HALT per block (Chen et al.), through the queues like any task.
      const std::vector<Task> halts(grid.blocks, Task::halt());
      for (std::size_t sent = 0; sent < halts.size();) {
        std::uint32_t q = 0;
        const std::uint32_t wrote = host.try_enqueue(halts.data() + sent, static_cast<std::uint32_t>(halts.size() - sent), q);
        if (wrote > 0) s.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(q));
        else wait_step("sending HALT tasks");
        sent += wrote;
      }
    });
    while (cudaStreamQuery(s.kernel_stream()) == cudaErrorNotReady) wait_step("waiting for the blocks to halt");
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
  }
  out.end_ns = s.now_ns();
  s.host_record(EventKind::KernelEnd, grid.blocks);

  std::vector<std::uint32_t> per_block(grid.blocks);
  done.download(per_block.data(), per_block.size());
  for (std::uint32_t d : per_block) out.tasks_run += d;
  out.workers = grid.blocks;
}

// -------------------------------------------------------------------------------------------------
// [SECTION] hardware / chunked control thread
// -------------------------------------------------------------------------------------------------

// `hardware`: this GPU's even share of the tasks in one launch. `chunked`: launches of
// plan.options.chunk tasks (default: as many blocks as are resident) from the pool, one after
// the other, while the pool lasts.
template <class Body>
void control_launches(GpuSession& s, const ExecPlan& plan, const Body& body, HostTaskPool& pool, std::uint32_t gpu_count,
                      std::atomic<bool>& abort_all, GpuOutcome& out) {
  GPULB_CUDA_TRY(cudaSetDevice(s.device()));
  const std::uint64_t total = plan.tasks.size();
  cuda::DeviceBuffer<Task> tasks(total);
  tasks.upload(plan.tasks.data(), total);
  s.allocate_trace(static_cast<std::uint32_t>(total), plan.trace ? 3 : 0);  // start, begin, end per block
  const GridSize resident = persistent_grid(reinterpret_cast<const void*>(&launch_kernel<Body>), s.device(), plan.block_size, 0);
  const std::uint32_t chunk = plan.policy == Policy::Chunked
                                  ? (plan.options.chunk ? plan.options.chunk : resident.blocks)
                                  : static_cast<std::uint32_t>((total + gpu_count - 1) / gpu_count);
  Watchdog watchdog(plan, s, abort_all);
  std::uint64_t launched = 0;
  for (;;) {
    if (plan.policy == Policy::Hardware && launched > 0) break;  // one launch
    const HostTaskPool::Take t = pool.take(chunk);
    if (t.n == 0) break;
    s.host_record(EventKind::KernelLaunch, t.n);
    s.host_record(EventKind::PoolLevel, static_cast<std::uint32_t>(std::min<std::uint64_t>(pool.level(), 0xFFFFFFFFu)));
    out.launch_ns = std::min(out.launch_ns, s.now_ns());
    launch_kernel<Body><<<t.n, plan.block_size, 0, s.kernel_stream()>>>(tasks.get(), t.first, body, s.trace_ref(), s.stop_flag());
    GPULB_CUDA_CHECK_LAUNCH();
    ++launched;
    while (cudaStreamQuery(s.kernel_stream()) == cudaErrorNotReady) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      watchdog.check(out.tasks_run, [&] {
        return "a launch of " + std::to_string(t.n) + " blocks has not finished; " + std::to_string(pool.level()) + " tasks not launched";
      });
    }
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
    out.end_ns = s.now_ns();
    s.host_record(EventKind::KernelEnd, t.n);
    out.tasks_run += t.n;
    out.progress.store(out.tasks_run, std::memory_order_relaxed);
  }
  out.workers = resident.blocks;
}

}  // namespace detail

// -------------------------------------------------------------------------------------------------
// [SECTION] execute()
// -------------------------------------------------------------------------------------------------

template <class MakeBody>
ExecOutput execute(const ExecPlan& plan, MakeBody&& make_body) {
  using Body = decltype(make_body(std::uint32_t{0}));
  if (is_spawning_policy(plan.policy)) {  // work-stealing, static-list, blocking-queue: one GPU
    return execute_spawning(plan, [&](std::uint32_t gpu_slot, std::uint32_t) { return make_body(gpu_slot); });
  }
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count == 0) throw ConfigError("no CUDA GPU is present; use --backend cpu");
  if (plan.gpus > static_cast<std::uint32_t>(count)) {
    throw ConfigError("asked for " + std::to_string(plan.gpus) + " GPUs; this host has " + std::to_string(count));
  }
  if (plan.options.queues > TaskQueueHost<detail::PciePublisher>::kMaxQueues) throw ConfigError("at most 64 queues per GPU");
  const std::uint32_t gpus = plan.gpus ? plan.gpus : static_cast<std::uint32_t>(count);
  ExecPlan p = plan;
  p.gpus = gpus;

  const std::uint64_t origin = host_now_ns();
  std::vector<std::unique_ptr<detail::GpuSession>> sessions;
  std::vector<Body> bodies;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    GPULB_CUDA_TRY(cudaSetDevice(static_cast<int>(g)));
    sessions.push_back(std::make_unique<detail::GpuSession>(static_cast<int>(g), g, origin));
    bodies.push_back(make_body(g));
  }

  detail::HostTaskPool pool(p.tasks);
  std::atomic<bool> abort_all{false};
  std::vector<detail::GpuOutcome> outcomes(gpus);
  std::vector<std::exception_ptr> errors(gpus);
  std::vector<std::thread> control;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    control.emplace_back([&, g] {
      try {
        if (p.policy == Policy::TaskQueue) {
          detail::control_task_queue(*sessions[g], p, bodies[g], pool, abort_all, outcomes[g]);
        } else {
          detail::control_launches(*sessions[g], p, bodies[g], pool, gpus, abort_all, outcomes[g]);
        }
      } catch (...) {
        errors[g] = std::current_exception();
        abort_all.store(true);
      }
    });
  }
  // This thread reports progress while the control threads work.
  for (;;) {
    bool all_done = true;
    std::uint64_t progress = 0;
    for (auto& o : outcomes) progress += o.progress.load(std::memory_order_relaxed);
    for (std::uint32_t g = 0; g < gpus; ++g) all_done = all_done && (outcomes[g].end_ns != 0 || errors[g]);
    if (p.progress) p.progress(progress, p.tasks.size());
    if (all_done || abort_all.load()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (std::thread& t : control) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }

  ExecOutput out;
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    detail::GpuOutcome& o = outcomes[g];
    detail::GpuSession& s = *sessions[g];
    GPULB_CUDA_TRY(cudaSetDevice(s.device()));
    first = std::min(first, o.launch_ns);
    last = std::max(last, o.end_ns);
    out.tasks_run += o.tasks_run;
    out.workers += o.workers;
    s.info().workers = o.workers;
    out.trace.devices.push_back(s.info());
    for (auto& n : o.notes) out.notes.push_back(std::move(n));
    if (p.trace) {
      if (p.policy == Policy::TaskQueue) s.drain_worker_tracks(out.trace.tracks);
      else s.drain_sm_lane_tracks(out.trace.tracks);
      out.trace.tracks.push_back(s.host_track("GPU " + std::to_string(s.device()) + " control thread"));
    }
  }
  out.makespan_ns = last > first ? last - first : 0;
  out.trace.meta.clock_source = "globaltimer aligned to steady_clock";
  return out;
}

}  // namespace gpulb::kernels
