// What the CUDA kernels of the spawning policies (work-stealing, static-list, blocking-queue)
// share, and the host side of such a run on one GPU.
//
// [SECTION] Device: the block's mailbox, per-block counters, the first failure, the block loop
// [SECTION] Host: queue memory, trace sizing, failure messages, polling and the watchdog
//
// A worker is one thread block; its rank is blockIdx.x, always below the grid that
// persistent_grid() sized (the scenarios' per-rank counters are that large). Per task:
//   thread 0 finds a task (policy-specific) -> __syncthreads -> every thread runs the body, any of
//   them may ctx.spawn (BlockContext::spawn: slots in the block's region of `spawn_slots`, counted
//   in shared memory) -> __syncthreads -> thread 0 checks the count against spawn_capacity, gives
//   the children their ids (assign_child_ids: one fetch-and-add for the batch) and publishes them
//   (policy-specific), as the CPU backend's worker does with its SpawnBuffer (gpulb/spawn.hpp).
// Why thread 0 alone publishes: every shared structure is touched once per task, not once per
// child or per thread, and its release store then covers everything the block wrote for the
// children: the barrier orders the other threads' slot writes before thread 0's (PTX causality
// order is transitive through bar.sync), and thread 0 copies the slots into the queue itself.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/kernels/detail/watchdog.hpp"
#include "gpulb/kernels/device_context.cuh"
#include "gpulb/kernels/worker_kernels.cuh"
#include "gpulb/exec_plan.hpp"
#include "gpulb/trace_budget.hpp"
#include "gpulb/sharing_queue.hpp"
#include "gpulb/spawn.hpp"

namespace gpulb::kernels {

// -------------------------------------------------------------------------------------------------
// [SECTION] Device
// -------------------------------------------------------------------------------------------------

enum class WorkerAction : int { Run = 0, Done = 1, Stop = 2 };

// Shared by the threads of a block: the task thread 0 found, the spawn counter, what to do next.
struct DynamicMailbox {
  alignas(
      16) unsigned char task_bytes[sizeof(Task)];  // a Task (no constructor allowed in __shared__)
  std::uint32_t spawn_count;
  int action;
  BlockScratch scratch;
};

// Per block, written by its thread 0. `tasks` is stored (relaxed) after every task so that the
// host's progress poll and watchdog see it move; the rest is written once at the block's end.
struct alignas(64) DynamicBlockStats {
  std::uint64_t tasks;
  std::uint64_t spawned;
  std::uint64_t steals;
  std::uint64_t steals_failed;
  std::uint64_t spilled;
  std::uint64_t failed_attempts;
  std::uint32_t sm;  // the SM the block ran on (tasks per SM)
  std::uint32_t
      remote_steals;  // work-stealing across GPUs: steals from another GPU's deque (also in `steals`)
};
static_assert(sizeof(DynamicBlockStats) == 64);

enum class DynamicFailure : std::uint32_t {
  None = 0,
  SpawnCapacity,
  IdCapacity,
  DequeFull,
  OverflowFull,
  ListCapacity,
  BlockingFull
};

// The first failure of a run (later ones are dropped); read by the host after the kernel ended.
struct DeviceFailure {
  alignas(kHotLine) std::uint32_t code;
  std::uint32_t block;
  std::uint32_t task;
  std::uint32_t count;
};

// What every spawning kernel receives besides its policy's structures.
struct DynamicArgs {
  Task* spawn_slots = nullptr;  // blocks * spawn_capacity
  std::uint32_t spawn_capacity = 0;
  TaskIdCounter* ids = nullptr;  // device memory
  std::uint64_t id_limit = 0;
  DynamicBlockStats* stats = nullptr;
  DeviceFailure* failure = nullptr;
  const std::uint32_t* stop = nullptr;  // the watchdog's flag (GpuSession)
  DeviceTraceRef trace;
  // A run across GPUs gives out interleaved ids (take_children_interleaved, assign_child_ids_strided).
  std::uint32_t id_stride = 1;

  __device__ Task* slots(std::uint32_t rank) const {
    return spawn_slots + static_cast<std::size_t>(rank) * spawn_capacity;
  }

  __device__ BlockContext context(std::uint32_t rank, DynamicMailbox& box) const {
    return BlockContext(rank, trace.segment(rank), stop, &box.scratch,
                        DeviceSpawnRef{slots(rank), spawn_capacity, &box.spawn_count});
  }

  // The watchdog fired or another block failed: stop taking tasks. Relaxed (volatile) loads: a
  // stop signal carries no data.
  __device__ bool should_stop() const {
    return *static_cast<const volatile std::uint32_t*>(stop) != 0 ||
           *static_cast<const volatile std::uint32_t*>(&failure->code) != 0;
  }

  __device__ void fail(DynamicFailure code, std::uint32_t block, std::uint32_t task,
                       std::uint32_t count) const {
    std::uint32_t expected = 0;
    // relaxed: the details are read by the host after the kernel has ended (stream order).
    if (device_atomic_ref<std::uint32_t>(failure->code)
            .compare_exchange_strong(expected, static_cast<std::uint32_t>(code), mo::relaxed,
                                     mo::relaxed)) {
      failure->block = block;
      failure->task = task;
      failure->count = count;
    }
  }

  __device__ void task_finished(std::uint32_t rank, std::uint64_t done) const {
    device_atomic_ref<std::uint64_t>(stats[rank].tasks).store(done, mo::relaxed);  // progress only
  }

  // Thread 0, after the body and the barrier: `count` children are in slots(rank). Checks the
  // capacity and gives them ids, parent and depth; false when the run has failed.
  __device__ bool take_children(const Task& parent, std::uint32_t rank, std::uint32_t count) const {
    if (count > spawn_capacity) {
      fail(DynamicFailure::SpawnCapacity, rank, parent.id, count);
      return false;
    }
    if (!assign_child_ids(slots(rank), count, parent, ids, id_limit)) {
      fail(DynamicFailure::IdCapacity, rank, parent.id, count);
      return false;
    }
    return true;
  }
  // take_children for a run across GPUs: the ids interleave with the other GPUs' (id_stride). A
  // function apart, so that the one-GPU kernels keep their registers.
  __device__ bool take_children_interleaved(const Task& parent, std::uint32_t rank,
                                            std::uint32_t count) const {
    if (count > spawn_capacity) {
      fail(DynamicFailure::SpawnCapacity, rank, parent.id, count);
      return false;
    }
    if (!assign_child_ids_strided(slots(rank), count, parent, ids, id_limit, id_stride)) {
      fail(DynamicFailure::IdCapacity, rank, parent.id, count);
      return false;
    }
    return true;
  }
};

// The per-task cycle every spawning kernel runs (see the top). `find(task)` runs on thread 0 and
// returns what the block does next; where that is Run it has recorded the task's TaskBegin
// (BlockContext::record_found_task, with the event that found it, or record_task_begin).
// `publish(task, children)` runs on thread 0 after the body and returns false when the run failed
// (the block then stops).
template <class Body, class Find, class Publish>
__device__ void dynamic_block_loop(const BlockContext& ctx, const Body& body, DynamicMailbox& box,
                                   Find&& find, Publish&& publish) {
  Task& task = *reinterpret_cast<Task*>(box.task_bytes);
  bool stopped = false;  // thread 0's
  for (;;) {
    if (threadIdx.x == 0) {
      box.spawn_count = 0;  // before the barrier: no thread spawns before it
      box.action = static_cast<int>(stopped ? WorkerAction::Stop : find(task));
    }
    __syncthreads();  // every thread sees the same task and action
    if (box.action != static_cast<int>(WorkerAction::Run)) break;
    const Task mine = task;
    run_begun(ctx, body, mine);
    __syncthreads();  // every child is in its slot and counted; nobody reads the mailbox any more
    if (threadIdx.x == 0 && !publish(mine, box.spawn_count)) stopped = true;
  }
}

// Idle back-off of thread 0 between failed attempts (__nanosleep): spares the L2 and, for the
// sharing queue, PCIe, without delaying a block that finds work much.
inline constexpr unsigned kMinBackoffNs = 32, kMaxBackoffNs = 1024;

// seq[i] of a Vyukov queue whose first `filled` slots hold tasks: i + 1 for those, i for the rest.
__global__ inline void init_sequence_kernel(std::uint64_t* seq, std::size_t n, std::size_t filled) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    seq[i] = i < filled ? i + 1 : i;
  }
}

namespace detail {

// -------------------------------------------------------------------------------------------------
// [SECTION] Host
// -------------------------------------------------------------------------------------------------

// A Vyukov queue (gpulb/sharing_queue.hpp) in device memory, which only the GPU's blocks touch:
// the work-stealing overflow and sharing queues. `initial` tasks are in it before any kernel runs
// (the initial tasks of a run reach the blocks so, without crossing PCIe one by one).
class DeviceSharingQueue {
 public:
  explicit DeviceSharingQueue(std::uint32_t capacity, std::span<const Task> initial = {})
      : capacity_(HostSharingQueue::checked_capacity(capacity)),
        ctl_(1),
        seq_(capacity),
        tasks_(capacity) {
    if (initial.size() > capacity)
      throw std::logic_error("DeviceSharingQueue: more initial tasks than slots");
    if (!initial.empty()) {
      tasks_.upload(initial.data(), initial.size());
      SharingQueueControl c;
      c.enqueue_pos = initial.size();
      c.peak = initial.size();
      ctl_.upload(&c, 1);
    }
    // On the legacy stream and synchronized, as DeviceBuffer zeroes its memory.
    init_sequence_kernel<<<std::min<std::uint32_t>(1024, (capacity + 255) / 256), 256, 0,
                           cudaStreamLegacy>>>(seq_.get(), capacity, initial.size());
    GPULB_CUDA_CHECK_LAUNCH();
    GPULB_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
  }
  SharingQueueRef ref() const { return {ctl_.get(), seq_.get(), tasks_.get(), capacity_}; }
  SharingQueueControl control() const {
    SharingQueueControl c;
    ctl_.download(&c, 1);
    return c;
  }

 private:
  std::uint32_t capacity_;
  cuda::DeviceBuffer<SharingQueueControl> ctl_;
  cuda::DeviceBuffer<std::uint64_t> seq_;
  cuda::DeviceBuffer<Task> tasks_;
};

// Trace events per block: its share of `per_task` events for every expected task, twice over for
// an unlucky balance, plus room for idle spells; at most 1 Mi events a block and 4 GiB in all
// (a dropped event is counted and the run says so: raise trace_capacity). The run's trace budget
// has the last word (the segments come back to host memory): a cut is noted in `notes`.
inline std::uint32_t dynamic_trace_capacity(const ExecPlan& plan, std::uint32_t blocks,
                                            std::uint32_t per_task,
                                            std::vector<std::string>& notes) {
  if (!plan.trace) return 0;
  const std::uint64_t expected = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  const std::uint64_t b = std::max(1u, blocks);
  // unknown: 16 Ki
  std::uint64_t cap = plan.expected_tasks == 0 ? 16384 : 2 * per_task * expected / b + 4096;
  cap = std::min<std::uint64_t>(cap, std::uint64_t{1} << 20);
  cap = std::min<std::uint64_t>(cap, (std::uint64_t{4} << 30) / sizeof(trace::Event) / b);
  // + the host track
  const TraceFit fit = fit_trace_segments(plan, b + 1, std::max<std::uint64_t>(cap, 256));
  if (!fit.note.empty()) notes.push_back(fit.note);
  return fit.capacity;
}

// Bytes of the current device's memory that are free now (cudaMemGetInfo).
inline std::uint64_t device_free_bytes() {
  std::size_t free_bytes = 0, total = 0;
  GPULB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

// Fails with a message naming the parameter before a large cudaMalloc does with a bare CUDA error.
inline void check_device_bytes(std::uint64_t bytes, const std::string& what) {
  std::size_t free_bytes = 0, total = 0;
  GPULB_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total));
  if (bytes > free_bytes) {
    throw RunError(what + " needs " + std::to_string(bytes >> 20) + " MiB of device memory; " +
                   std::to_string(free_bytes >> 20) + " MiB are free");
  }
}

// What a control function hands back to execute_spawning().
struct DynamicOutcome {
  std::uint64_t launch_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t tasks_run = 0;
  std::uint64_t tasks_spawned = 0;
  std::uint32_t workers = 0;
  std::vector<std::string> notes;
  std::map<std::string, std::uint64_t> metrics;
};

// The run-wide device state every spawning kernel shares, and the host's waiting: progress from
// the per-block counters, the plan's progress callback, the watchdog, device errors, failures.
class DynamicHost {
 public:
  DynamicHost(GpuSession& s, const ExecPlan& plan, std::uint32_t blocks,
              std::atomic<bool>& abort_all)
      : s_(s),
        plan_(plan),
        blocks_(blocks),
        stats_(blocks),
        failure_(1),
        ids_(1),
        spawn_slots_((check_device_bytes(std::uint64_t{blocks} *
                                             plan.spawn_options().spawn_capacity * sizeof(Task),
                                         "spawn buffers (blocks x spawn_capacity=" +
                                             std::to_string(plan.spawn_options().spawn_capacity) +
                                             "; lower --param spawn_capacity)"),
                      std::size_t{blocks} * plan.spawn_options().spawn_capacity)),
        snapshot_(blocks),
        watchdog_(plan, s, abort_all) {
    TaskIdCounter first;
    first.next = first_spawn_id(plan);
    ids_.upload(&first, 1);
  }

  DynamicArgs args() const {
    return {spawn_slots_.get(), plan_.spawn_options().spawn_capacity,
            ids_.get(),         id_limit(plan_),
            stats_.get(),       failure_.get(),
            s_.stop_flag(),     s_.trace_ref(),
            id_stride_};
  }

  // A run across `gpus` GPUs, this one at `lane`: its spawned ids interleave with the others'
  // (DynamicArgs::id_stride). Before the launch.
  void interleave_ids(std::uint32_t lane, std::uint32_t gpus) {
    id_stride_ = gpus;
    TaskIdCounter first;
    first.next = first_spawn_id(plan_) + lane;
    ids_.upload(&first, 1);
  }
  // The block task count the last progress poll saw (wait_step; 0 before the first).
  std::uint64_t polled() const { return polled_; }

  // Called while the host waits on the GPU. Every 20 ms: reads the blocks' task counts, reports
  // progress, checks the kernel for an error and ticks the watchdog (`extra` also counts as
  // progress: tasks the host inserted). `state` describes the scheduler if the watchdog fires.
  void wait_step(const std::function<std::string()>& state, std::uint64_t extra = 0) {
    const std::uint64_t now = s_.now_ns();
    if (now - last_poll_ns_ > 20'000'000) {
      last_poll_ns_ = now;
      const std::uint64_t done = poll_tasks();
      polled_ = done;
      if (plan_.progress) plan_.progress(done, plan_.expected_tasks);
      const cudaError_t k = cudaStreamQuery(s_.kernel_stream());
      if (k != cudaSuccess && k != cudaErrorNotReady) GPULB_CUDA_TRY(k);
      watchdog_.check(done + extra, state);
    }
  }

  // Waits for everything queued on the kernel stream, polling as above.
  void wait_kernel(const std::function<std::string()>& state, std::uint64_t extra = 0) {
    while (cudaStreamQuery(s_.kernel_stream()) == cudaErrorNotReady) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      wait_step(state, extra);
    }
    GPULB_CUDA_TRY(cudaStreamSynchronize(s_.kernel_stream()));
  }

  // After the kernel ended: the first failure a block recorded (code None where none).
  DeviceFailure failure() const {
    DeviceFailure f;
    failure_.download(&f, 1);
    return f;
  }

  // The common failure messages (as the CPU backend words them); "" for a policy-specific code.
  std::string common_failure_message(const DeviceFailure& f) const {
    switch (static_cast<DynamicFailure>(f.code)) {
      case DynamicFailure::SpawnCapacity:
        return "task " + std::to_string(f.task) + " spawned " + std::to_string(f.count) +
               " children, more than spawn_capacity=" +
               std::to_string(plan_.spawn_options().spawn_capacity) +
               "; raise --param spawn_capacity";
      case DynamicFailure::IdCapacity:
        return "spawned task ids passed the scenario's table size (" +
               std::to_string(id_limit(plan_)) +
               " ids): the run created more tasks than the scenario expected";
      default: return "";
    }
  }

  // After the kernel ended: task and spawn counts, and the load per SM of a persistent grid
  // (per_sm: each block stayed on the SM it recorded), into `out`.
  void collect(DynamicOutcome& out, bool per_sm_load = true) {
    stats_.download(snapshot_.data(), blocks_);
    std::map<std::uint32_t, std::uint64_t> per_sm;
    for (const DynamicBlockStats& b : snapshot_) {
      out.tasks_run += b.tasks;
      out.tasks_spawned += b.spawned;
      per_sm[b.sm] += b.tasks;
    }
    if (!per_sm_load) return;
    std::uint64_t most = 0, least = ~std::uint64_t{0};
    for (const auto& [sm, n] : per_sm) {
      most = std::max(most, n);
      least = std::min(least, n);
    }
    out.metrics["tasks_per_sm_max"] = most;
    out.metrics["tasks_per_sm_min"] = per_sm.empty() ? 0 : least;
  }
  const std::vector<DynamicBlockStats>& snapshot() const { return snapshot_; }

 private:
  std::uint64_t poll_tasks() {
    GPULB_CUDA_TRY(cudaMemcpyAsync(snapshot_.data(), stats_.get(),
                                   blocks_ * sizeof(DynamicBlockStats), cudaMemcpyDeviceToHost,
                                   s_.copy_stream()));
    GPULB_CUDA_TRY(cudaStreamSynchronize(s_.copy_stream()));
    std::uint64_t done = 0;
    for (const DynamicBlockStats& b : snapshot_) done += b.tasks;
    return done;
  }

  GpuSession& s_;
  const ExecPlan& plan_;
  std::uint32_t blocks_;
  cuda::DeviceBuffer<DynamicBlockStats> stats_;
  cuda::DeviceBuffer<DeviceFailure> failure_;
  cuda::DeviceBuffer<TaskIdCounter> ids_;
  cuda::DeviceBuffer<Task> spawn_slots_;
  std::vector<DynamicBlockStats> snapshot_;
  Watchdog watchdog_;
  std::uint64_t last_poll_ns_ = 0;
  std::uint64_t polled_ = 0;
  std::uint32_t id_stride_ = 1;
};

}  // namespace detail
}  // namespace gpulb::kernels
