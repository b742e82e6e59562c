// The task-queue policy on the CUDA backend: Chen et al. 2010, Algorithms 2 and 3. A persistent
// kernel per GPU takes tasks from that GPU's queues (task_queue_kernel: the queue code of
// gpulb/task_queue.hpp; task_queue_modern_kernel: mapped doorbells and batched claims) while the
// GPU's control thread refills each queue from the host task pool whenever it is empty, then
// sends the HALTs (paper) or sets the halt flag (modern).
//
// [SECTION] Publishers: Algorithm 2's writes, over PCIe (paper) or into mapped memory (modern)
// [SECTION] The control thread
// [SECTION] The driver
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/detail/body_factory.hpp"
#include "gpulb/kernels/detail/gpu_session.hpp"
#include "gpulb/kernels/detail/host_pool_run.cuh"
#include "gpulb/kernels/detail/watchdog.hpp"
#include "gpulb/kernels/task_queue_modern.cuh"
#include "gpulb/kernels/worker_kernels.cuh"
#include "gpulb/policies/task_queue.hpp"
#include "gpulb/task_queue.hpp"
#include "gpulb/trace_budget.hpp"

namespace gpulb::kernels {
namespace detail {

using trace::EventKind;

// -------------------------------------------------------------------------------------------------
// [SECTION] Publishers
// -------------------------------------------------------------------------------------------------

// Algorithm 2, lines 9-13, over PCIe: the batch goes through pinned staging memory with
// cudaMemcpyAsync; d_written_gm, then d_n_gm (see task_queue.hpp's DEPARTURE note) follow in the
// same stream, so they land after the tasks; an event synchronization is the paper's
// host_write_fence(). h_consumed is mapped pinned memory the device writes (system scope).
struct PciePublisher {
  Task* d_slots;
  TaskQueueCounters* d_counters;
  QueueWord* h_consumed;   // host pointer of the mapped array
  Task* h_staging;         // pinned, num_queues * capacity
  std::uint32_t* h_words;  // pinned, 2 per queue: written, n
  std::uint32_t capacity;
  cudaStream_t stream;
  cudaEvent_t fence;

  bool ready(std::uint32_t q, std::uint32_t h_written) const {
    return system_atomic_ref<std::uint32_t>(h_consumed[q].value).load(mo::acquire) == h_written;
  }
  void publish(std::uint32_t q, const Task* tasks, std::uint32_t n,
               std::uint32_t new_written) const {
    Task* staging = h_staging + static_cast<std::size_t>(q) * capacity;
    std::memcpy(static_cast<void*>(staging), tasks, n * sizeof(Task));
    h_words[2 * q] = new_written;
    h_words[2 * q + 1] = n;
    GPULB_CUDA_TRY(cudaMemcpyAsync(d_slots + static_cast<std::size_t>(q) * capacity, staging,
                                   n * sizeof(Task), cudaMemcpyHostToDevice, stream));
    GPULB_CUDA_TRY(cudaMemcpyAsync(&d_counters[q].written.value, &h_words[2 * q],
                                   sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream));
    GPULB_CUDA_TRY(cudaMemcpyAsync(&d_counters[q].n.value, &h_words[2 * q + 1],
                                   sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream));
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
  void publish(std::uint32_t q, const Task* tasks, std::uint32_t n,
               std::uint32_t new_written) const {
    std::memcpy(static_cast<void*>(h_staging + static_cast<std::size_t>(q) * capacity), tasks,
                n * sizeof(Task));
    system_atomic_ref<std::uint32_t>(h_doorbells[q].n).store(n, mo::relaxed);
    system_atomic_ref<std::uint32_t>(h_doorbells[q].written).store(new_written, mo::release);
  }
};

// The modern variant's copy feed (task_queue_modern.cuh): the batch goes by the copy engine straight
// from the task pool (pinned by the frame: no staging copy on the host) or, where the pool could
// not be pinned, from staging; then d_written_gm and d_n_gm, all on the queue's own stream and with
// no wait. A queue's words and staging are written again only once the device drained the queue,
// which it can only do after these copies completed.
struct CopyPublisher {
  Task* d_slots;
  TaskQueueCounters* d_counters;
  QueueWord* h_consumed;
  Task* h_staging;              // pinned, num_queues * capacity; null when the pool is pinned
  std::uint32_t* h_words;       // pinned, 4 per queue: written, range, n, unused
  const cudaStream_t* streams;  // one per queue
  std::uint32_t capacity;

  bool ready(std::uint32_t q, std::uint32_t h_written) const {
    return system_atomic_ref<std::uint32_t>(h_consumed[q].value).load(mo::acquire) == h_written;
  }
  void publish(std::uint32_t q, const Task* tasks, std::uint32_t n,
               std::uint32_t new_written) const {
    const Task* src = tasks;
    if (h_staging != nullptr) {
      Task* staging = h_staging + static_cast<std::size_t>(q) * capacity;
      std::memcpy(static_cast<void*>(staging), tasks, n * sizeof(Task));
      src = staging;
    }
    GPULB_CUDA_TRY(cudaMemcpyAsync(d_slots + static_cast<std::size_t>(q) * capacity, src,
                                   n * sizeof(Task), cudaMemcpyHostToDevice, streams[q]));
    publish_counters(q, n, new_written, false);
  }
  // A range batch (HostTaskPool::index_runs): slot 0 gets the first task, which stands for all n.
  void publish_range(std::uint32_t q, const Task& first, std::uint32_t n,
                     std::uint32_t new_written) const {
    const Task* src = &first;
    if (h_staging != nullptr) {
      Task* staging = h_staging + static_cast<std::size_t>(q) * capacity;
      *staging = first;
      src = staging;
    }
    GPULB_CUDA_TRY(cudaMemcpyAsync(d_slots + static_cast<std::size_t>(q) * capacity, src,
                                   sizeof(Task), cudaMemcpyHostToDevice, streams[q]));
    publish_counters(q, n, new_written, true);
  }

 private:
  // d_written_gm with the range flag beside it (one 8-byte copy), then d_n_gm.
  void publish_counters(std::uint32_t q, std::uint32_t n, std::uint32_t new_written,
                        bool range) const {
    std::uint32_t* w = h_words + 4 * static_cast<std::size_t>(q);
    w[0] = new_written;
    w[1] = range ? 1 : 0;
    w[2] = n;
    static_assert(offsetof(WrittenWord, range) == sizeof(std::uint32_t));
    GPULB_CUDA_TRY(cudaMemcpyAsync(&d_counters[q].written, w, 2 * sizeof(std::uint32_t),
                                   cudaMemcpyHostToDevice, streams[q]));
    GPULB_CUDA_TRY(cudaMemcpyAsync(&d_counters[q].n.value, w + 2, sizeof(std::uint32_t),
                                   cudaMemcpyHostToDevice, streams[q]));
  }
};

// Trace segment size for a persistent block: its share of the run's events, with room for an
// unlucky schedule, at most 1 Mi events; then the run's trace budget, shared by every GPU's blocks
// and host track (the segments come back to host memory). GPU 0 notes a cut for all of them.
inline std::uint32_t persistent_trace_capacity(const ExecPlan& plan, std::uint64_t tasks,
                                               std::uint32_t blocks, std::uint32_t gpu_slot,
                                               std::vector<std::string>& notes) {
  if (!plan.trace) return 0;
  const std::uint64_t events = 4 * tasks + 16;  // level, begin, end, an idle spell per task
  const std::uint64_t share = events / std::max(1u, blocks);
  const std::uint64_t cap =
      std::min<std::uint64_t>(events + 64, std::max<std::uint64_t>(8 * share + 1024, 4096));
  const std::uint64_t segments = (std::uint64_t{blocks} + 1) * std::max(1u, plan.gpus);
  const TraceFit fit =
      fit_trace_segments(plan, segments, std::min<std::uint64_t>(cap, std::uint64_t{1} << 20));
  if (!fit.note.empty() && gpu_slot == 0) notes.push_back(fit.note);
  return fit.capacity;
}

// -------------------------------------------------------------------------------------------------
// [SECTION] The control thread
// -------------------------------------------------------------------------------------------------

// The feeding loop both variants share: batches from the pool whenever a queue is empty
// (Algorithm 2), then, once every queue is drained, `halt()`.
//
// Across GPUs (`gpus` > 1) only, a batch is at most the pool's level over (GPUs x queues), as in
// guided self-scheduling: the pool's last tasks go in smaller batches, so that no GPU holds queued
// tasks that another GPU's idle blocks could run. On one GPU it measured worse (below), and across
// GPUs its effect alone was not measured: it came with the start barrier, and with both md on 2 GPUs
// ran 162-164 ms in four runs, against 158-234 ms over three runs without them.
template <class Publisher, class WaitStep, class Halt>
void feed_queues(GpuSession& s, TaskQueueHost<Publisher>& host, HostTaskPool& pool,
                 std::uint32_t gpus, std::uint32_t queues, WaitStep&& wait_step, Halt&& halt) {
  const std::uint32_t taker = gpus > 1 ? s.slot() : HostTaskPool::kNoTaker;
  using Batch = typename TaskQueueHost<Publisher>::Batch;
  // Range batches where the publisher takes them (the copy feed). Batches fill each empty queue to
  // capacity, as in the paper. Tried and measured worse on an H100 (patterns P1 and P4 0.1-0.3 ms
  // slower, dispatch 540 against 858 M tasks/s): a small first batch per queue and guided batch
  // sizes (at most the pool's level over 2 x queues x GPUs): with refill-when-empty every batch
  // costs a refill bubble, and smaller batches make more of them.
  constexpr bool ranges = requires(Publisher & p, const Task& t) {
    p.publish_range(0u, t, 0u, 0u);
  };
  std::uint64_t queued = 0;  // this GPU's part of pool.queued() (an open pool's hunger)
  const auto note_queued = [&] {
    if (!pool.open()) return;
    const std::uint64_t now = host.queued();
    pool.add_queued(static_cast<std::int64_t>(now) - static_cast<std::int64_t>(queued));
    queued = now;
  };
  while (!pool.finished() && !pool.share_spent(taker)) {
    note_queued();
    bool pool_drained = false;
    std::uint32_t q = 0;
    const std::uint32_t wrote = host.try_enqueue_from(
        [&](std::uint32_t most) {
          if (gpus > 1) {
            const std::uint64_t guided =
                (pool.level() + std::uint64_t{gpus} * queues - 1) / (std::uint64_t{gpus} * queues);
            most = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(guided, 1, most));
          }
          const HostTaskPool::Take t = pool.take(most, ranges, taker);
          pool_drained = t.n == 0;
          return Batch{t.tasks, t.n, t.range};
        },
        q);
    if (wrote > 0) {
      note_queued();
      s.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(q));
      s.host_record(EventKind::QueueLevel, wrote, static_cast<std::uint16_t>(q));
      s.host_record(EventKind::PoolLevel,
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(pool.level(), 0xFFFFFFFFu)));
    } else if (!pool_drained) {
      wait_step("feeding the queues", false);
    } else if (pool.open()) {
      // A distributed run: the pool is empty until another rank lends, or the ranks agree the
      // run is over (OpenTaskStore::close).
      wait_step("waiting for tasks from other ranks", host.all_empty());
    }
  }
  // "The host process has to check whether all queues are empty" before it stops the blocks.
  while (!host.all_empty()) {
    note_queued();
    wait_step("waiting for the queues to drain", false);
  }
  note_queued();
  halt();
}

// Each GPU's even share of the run's tasks: task_queue_grid caps a GPU's grid to it where it is
// below the resident blocks (a one-wave run).
// A distributed run has none: its ranks' tasks move between them while it runs.
inline std::uint64_t one_wave_share(const ExecPlan& plan) {
  if (plan.distribution != nullptr) return 0;
  const std::uint64_t gpus = std::max<std::uint32_t>(1, plan.gpus);
  return (plan.tasks.size() + gpus - 1) / gpus;
}

// The persistent grid of the variant's kernel on this GPU (the occupancy API; never more blocks
// than can be resident).
//
// DEPARTURE (Chen et al. size the grid by hand): where the run's tasks are fewer than the GPUs'
// resident blocks (a one-wave run), a GPU gets as many blocks as its even share of the tasks and
// the pool gives it no more than that share (HostTaskPool::set_share_quota). The hardware places
// a grid's blocks round-robin over the SMs, so a grid of the share spreads the tasks over every
// SM as Solution 1's launch does; a full grid let the first blocks to poll take them all, up to
// 12 an SM on half of the SMs (md, 512K atoms on 4 H200s: 105 ms against Solution 1's 79 ms).
template <class Body>
GridSize task_queue_grid(const GpuSession& s, const ExecPlan& plan) {
  const void* kernel =
      plan.policy_options<policies::TaskQueueOptions>().variant == QueueVariant::Modern
          ? reinterpret_cast<const void*>(&task_queue_modern_kernel<Body>)
          : reinterpret_cast<const void*>(&task_queue_kernel<Body>);
  GridSize grid = persistent_grid(kernel, s.device(), plan.block_size, plan.workers);
  const std::uint64_t share = one_wave_share(plan);
  if (plan.workers == 0 && share != 0 && share < grid.blocks) {
    if (s.slot() == 0) {
      grid.note = "task-queue: " + std::to_string(share) +
                  " blocks per GPU, each GPU's share of the " + std::to_string(plan.tasks.size()) +
                  " tasks, which are fewer than the " + std::to_string(grid.blocks) +
                  " blocks a GPU holds (set --workers to override)";
    }
    grid.blocks = static_cast<std::uint32_t>(share);
  }
  return grid;
}

// One GPU's task queues and what its control thread does the same under every variant: the
// queues' memory, the progress poll and the watchdog, the records of the launch and of the end.
class TaskQueueGpu {
 public:
  TaskQueueGpu(GpuSession& s, const ExecPlan& plan, HostTaskPool& pool,
               std::atomic<bool>& abort_all, GpuOutcome& out, const GridSize& grid)
      : s(s),
        plan(plan),
        pool(pool),
        out(out),
        grid(grid),
        shape(shape_of(s, plan, pool, out)),
        slots(static_cast<std::size_t>(shape.queues) * shape.capacity),
        counters(shape.queues),
        host_consumed(shape.queues),
        // Staging for every feed but the copy feed from a pinned pool.
        staging(copy_feed(plan) && pool.pinned()
                    ? 0
                    : static_cast<std::size_t>(shape.queues) * shape.capacity),
        done(grid.blocks),
        queues(trace_and_queues()),
        abort_all_(abort_all),
        watchdog_(plan, s, abort_all),
        snapshot_(shape.queues) {
    pool.add_refill(std::uint64_t{shape.queues} * shape.capacity);
  }

  static bool copy_feed(const ExecPlan& plan) {
    const policies::TaskQueueOptions& o = plan.policy_options<policies::TaskQueueOptions>();
    return o.variant == QueueVariant::Modern && o.feed == QueueFeed::Copy;
  }

  // Progress: d_consumed_gm of every queue, read back every 20 ms (it moves with every dequeue).
  // `resting`: nothing is outstanding here (a distributed run waiting for other ranks' tasks).
  void wait_step(const char* phase, bool resting = false) {
    if (resting) watchdog_.rest();
    const std::uint64_t now = s.now_ns();
    if (now - last_poll_ns_ > 20'000'000) {
      last_poll_ns_ = now;
      GPULB_CUDA_TRY(cudaMemcpyAsync(snapshot_.data(), counters.get(),
                                     shape.queues * sizeof(TaskQueueCounters),
                                     cudaMemcpyDeviceToHost, s.copy_stream()));
      GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
      std::uint64_t consumed = 0;
      for (const auto& c : snapshot_) consumed += c.consumed.value;
      out.progress.store(consumed, std::memory_order_relaxed);
      const cudaError_t k = cudaStreamQuery(s.kernel_stream());
      if (k != cudaSuccess && k != cudaErrorNotReady) GPULB_CUDA_TRY(k);
      watchdog_.check(consumed, [&] {
        std::string st = std::string("while ") + phase + "; pool holds " +
                         std::to_string(pool.level()) + " tasks; queues d_consumed/d_written/d_n:";
        for (const auto& c : snapshot_) {
          st += ' ';
          st += std::to_string(c.consumed.value) + '/' + std::to_string(c.written.value) + '/' +
                std::to_string(c.n.value);
        }
        return st;
      });
    }
    std::this_thread::yield();
  }

  // Each variant allocates its feed's memory and streams first: the run's time starts at the launch
  // (as `hardware`'s upload is not timed either).
  void launching() {
    if (!pool.ready_to_launch(abort_all_))
      throw RunError("task-queue: another GPU of the run failed before the launch");
    s.host_record(EventKind::KernelLaunch, grid.blocks);
    out.launch_ns = s.now_ns();
  }
  // After the launch, every GPU's control thread waits for the others' (HostTaskPool::start_together).
  void start_together() {
    if (plan.gpus > 1 && !pool.start_together(abort_all_))
      throw RunError("task-queue: another GPU of the run failed before it started");
  }
  // The run's time ends when the kernel does, before the variant frees its feed's memory and
  // streams, as it starts at the launch, after they were made. When it was taken after the
  // variant's destructors, the copy feed's cudaFree, cudaFreeHost and cudaStreamDestroy added ~70 us
  // to its makespan and the sync of its streams 7-24 us more (H100, a 2.5 ms patterns run); the
  // paper scheme's teardown added ~15 us.
  void kernel_done() {
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
    out.end_ns = s.now_ns();
    s.host_record(EventKind::KernelEnd, grid.blocks);
  }
  // After the kernel and the feed's teardown: the tasks each block ran.
  void count_tasks() {
    std::vector<std::uint32_t> per_block(grid.blocks);
    done.download(per_block.data(), per_block.size());
    for (std::uint32_t d : per_block) out.tasks_run += d;
    out.workers = grid.blocks;
  }

  GpuSession& s;
  const ExecPlan& plan;
  HostTaskPool& pool;
  GpuOutcome& out;
  const GridSize grid;
  const policies::TaskQueueShape shape;
  cuda::DeviceBuffer<Task> slots;
  cuda::DeviceBuffer<TaskQueueCounters> counters;
  cuda::MappedBuffer<QueueWord> host_consumed;
  cuda::MappedBuffer<Task> staging;
  cuda::DeviceBuffer<std::uint32_t> done;
  const TaskQueueRef queues;

 private:
  // The queues and their capacity (chosen where the options leave them 0, with a note from GPU 0).
  static policies::TaskQueueShape shape_of(const GpuSession& s, const ExecPlan& plan,
                                           const HostTaskPool& pool, GpuOutcome& out) {
    const policies::TaskQueueOptions& o = plan.policy_options<policies::TaskQueueOptions>();
    const policies::TaskQueueShape shape =
        policies::task_queue_shape(o, o.variant == QueueVariant::Modern, pool.size(), plan.gpus);
    if (s.slot() == 0 && (o.queues == 0 || o.queue_capacity == 0)) {
      out.notes.push_back(
          "task-queue " + choice_text(o.variant) + ": " + std::to_string(shape.queues) +
          " queues of " + std::to_string(shape.capacity) +
          " tasks per GPU (chosen; set --param queues= and queue_capacity= to override)");
    }
    return shape;
  }
  // The trace segments of the GPU's blocks, then the queues' view for the kernel.
  TaskQueueRef trace_and_queues() {
    const std::uint64_t share = pool.size() / std::max<std::size_t>(1, plan.gpus) + grid.blocks;
    s.allocate_trace(grid.blocks,
                     persistent_trace_capacity(plan, share, grid.blocks, s.slot(), out.notes));
    return TaskQueueRef{slots.get(), counters.get(), host_consumed.device(), shape.queues,
                        shape.capacity};
  }

  std::atomic<bool>& abort_all_;
  Watchdog watchdog_;
  std::vector<TaskQueueCounters> snapshot_;
  std::uint64_t last_poll_ns_ = 0;
};

inline std::uint32_t modern_claim(const ExecPlan& plan) {
  return std::min(kMaxClaim, std::max(1u, plan.policy_options<policies::TaskQueueOptions>().claim));
}

// The modern variant fed by the copy engine (CopyPublisher): a stream per queue.
struct CopyFeed {
  static constexpr const char* kStopping = "waiting for the blocks to stop";
  explicit CopyFeed(const TaskQueueGpu& q)
      : words(4 * q.shape.queues),
        halt(1),
        published(q.shape.queues),
        halt_seen(1),
        last_poll(q.shape.queues),
        streams(q.shape.queues) {
    for (const cuda::Stream& st : streams) handles.push_back(st.get());
  }
  template <class Body>
  void launch(TaskQueueGpu& q, const Body& body) {
    const ModernFeedRef feed{nullptr,         nullptr,         published.get(),     halt.device(),
                             last_poll.get(), halt_seen.get(), modern_claim(q.plan)};
    q.launching();
    task_queue_modern_kernel<Body><<<q.grid.blocks, q.plan.block_size, 0, q.s.kernel_stream()>>>(
        q.queues, feed, body, q.s.trace_ref(), q.s.stop_flag(), q.done.get());
  }
  CopyPublisher publisher(const TaskQueueGpu& q) const {
    return {q.slots.get(), q.counters.get(), q.host_consumed.host(), q.staging.host(),
            words.host(),  handles.data(),   q.shape.capacity};
  }
  template <class Host>
  void stop(TaskQueueGpu& q, Host&) {
    q.s.host_record(EventKind::Halt);
    system_atomic_ref<std::uint32_t>(*halt.host()).store(1, mo::release);
  }
  // The feed's copies landed before the blocks could drain them; this only keeps the streams'
  // memory alive until they are done (7-24 us, untimed).
  void after_kernel() {
    for (cudaStream_t st : handles) GPULB_CUDA_TRY(cudaStreamSynchronize(st));
  }

  cuda::MappedBuffer<std::uint32_t> words, halt;
  cuda::DeviceBuffer<std::uint32_t> published, halt_seen;
  cuda::DeviceBuffer<std::uint64_t> last_poll;
  std::vector<cuda::Stream> streams;
  std::vector<cudaStream_t> handles;
};

// The modern variant fed through mapped doorbells (MappedPublisher).
struct MappedFeed {
  static constexpr const char* kStopping = "waiting for the blocks to stop";
  explicit MappedFeed(const TaskQueueGpu& q)
      : doorbells(q.shape.queues),
        halt(1),
        published(q.shape.queues),
        halt_seen(1),
        last_poll(q.shape.queues) {}
  template <class Body>
  void launch(TaskQueueGpu& q, const Body& body) {
    const ModernFeedRef feed{doorbells.device(),  q.staging.device(), published.get(),
                             halt.device(),       last_poll.get(),    halt_seen.get(),
                             modern_claim(q.plan)};
    q.launching();
    task_queue_modern_kernel<Body><<<q.grid.blocks, q.plan.block_size, 0, q.s.kernel_stream()>>>(
        q.queues, feed, body, q.s.trace_ref(), q.s.stop_flag(), q.done.get());
  }
  MappedPublisher publisher(const TaskQueueGpu& q) const {
    return {doorbells.host(), q.staging.host(), q.host_consumed.host(), q.shape.capacity};
  }
  template <class Host>
  void stop(TaskQueueGpu& q, Host&) {
    q.s.host_record(EventKind::Halt);
    system_atomic_ref<std::uint32_t>(*halt.host()).store(1, mo::release);
  }
  void after_kernel() {}

  cuda::MappedBuffer<Doorbell> doorbells;
  cuda::MappedBuffer<std::uint32_t> halt;
  cuda::DeviceBuffer<std::uint32_t> published, halt_seen;
  cuda::DeviceBuffer<std::uint64_t> last_poll;
};

// The paper's variant (PciePublisher), stopped by a HALT task per block.
struct PcieFeed {
  static constexpr const char* kStopping = "waiting for the blocks to halt";
  explicit PcieFeed(const TaskQueueGpu& q) : words(2 * q.shape.queues) {}
  template <class Body>
  void launch(TaskQueueGpu& q, const Body& body) {
    q.launching();
    task_queue_kernel<Body><<<q.grid.blocks, q.plan.block_size, 0, q.s.kernel_stream()>>>(
        q.queues, body, q.s.trace_ref(), q.s.stop_flag(), q.done.get());
  }
  PciePublisher publisher(const TaskQueueGpu& q) const {
    return {q.slots.get(), q.counters.get(), q.host_consumed.host(), q.staging.host(),
            words.host(),  q.shape.capacity, q.s.copy_stream(),      fence.get()};
  }
  // One HALT per block (Chen et al.), through the queues like any task.
  template <class Host>
  void stop(TaskQueueGpu& q, Host& host) {
    const std::vector<Task> halts(q.grid.blocks, Task::halt());
    for (std::size_t sent = 0; sent < halts.size();) {
      std::uint32_t queue = 0;
      const std::uint32_t wrote = host.try_enqueue(
          halts.data() + sent, static_cast<std::uint32_t>(halts.size() - sent), queue);
      if (wrote > 0)
        q.s.host_record(EventKind::HostEnqueue, wrote, static_cast<std::uint16_t>(queue));
      else
        q.wait_step("sending HALT tasks");
      sent += wrote;
    }
  }
  void after_kernel() {}

  cuda::MappedBuffer<std::uint32_t> words;
  cuda::Event fence;
};

// A variant's run: its feed's memory, the launch, the feed from the pool, the stop, the wait. The
// feed's memory goes before the blocks' counts are read.
template <class Feed, class Body>
void run_task_queue_feed(TaskQueueGpu& q, const Body& body) {
  Feed feed(q);
  feed.launch(q, body);
  GPULB_CUDA_CHECK_LAUNCH();
  q.start_together();
  TaskQueueHost host(feed.publisher(q), q.shape.queues, q.shape.capacity);
  feed_queues(
      q.s, host, q.pool, q.plan.gpus, q.shape.queues,
      [&](const char* phase, bool resting) { q.wait_step(phase, resting); },
      [&] { feed.stop(q, host); });
  while (cudaStreamQuery(q.s.kernel_stream()) == cudaErrorNotReady) q.wait_step(Feed::kStopping);
  q.kernel_done();
  feed.after_kernel();
}

template <class Body>
void control_task_queue(GpuSession& s, const ExecPlan& plan, const Body& body, HostTaskPool& pool,
                        std::atomic<bool>& abort_all, GpuOutcome& out) {
  GPULB_CUDA_TRY(cudaSetDevice(s.device()));
  const GridSize grid = task_queue_grid<Body>(s, plan);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  if (plan.gpus > 1 && plan.workers == 0 && grid.blocks == one_wave_share(plan))
    pool.set_share_quota(grid.blocks);
  TaskQueueGpu q(s, plan, pool, abort_all, out, grid);
  if (TaskQueueGpu::copy_feed(plan))
    run_task_queue_feed<CopyFeed>(q, body);
  else if (plan.policy_options<policies::TaskQueueOptions>().variant == QueueVariant::Modern)
    run_task_queue_feed<MappedFeed>(q, body);
  else
    run_task_queue_feed<PcieFeed>(q, body);
  q.count_tasks();
}

}  // namespace detail

// -------------------------------------------------------------------------------------------------
// [SECTION] The driver
// -------------------------------------------------------------------------------------------------

struct TaskQueueDriver {
  static const PolicyDescriptor& descriptor() { return policies::task_queue(); }
  template <class Factory>
  static ExecOutput run(const ExecPlan& plan, Factory& make_body) {
    if (plan.policy_options<policies::TaskQueueOptions>().queues >
        TaskQueueHost<detail::PciePublisher>::kMaxQueues)
      throw ConfigError("at most 64 queues per GPU");
    using Body = std::decay_t<decltype(make_body(0u, 0u))>;
    return detail::run_on_host_pool(
        plan, detail::TrackLayout::PerBlock, make_body,
        [](const detail::GpuSession& s, const ExecPlan& p) {
          return detail::task_queue_grid<Body>(s, p).blocks;
        },
        [](detail::GpuSession& s, const ExecPlan& p, const Body& body, detail::HostTaskPool& pool,
           std::atomic<bool>& abort_all, detail::GpuOutcome& out) {
          detail::control_task_queue(s, p, body, pool, abort_all, out);
        },
        detail::TaskQueueGpu::copy_feed(plan));
  }
};

}  // namespace gpulb::kernels
