// The work-stealing policy on the GPU: Grossman, "Dynamic Task Parallelism with a GPU
// Work-Stealing Runtime System" (a persistent block per worker, a private deque each in global
// memory, a global work-sharing queue that the host feeds while the kernel runs, device-side task
// creation), with the deques of Arora, Blumofe & Plaxton as Mohan & Gopalan describe them.
// The scheduling steps are gpulb/work_stealing.hpp, the same source the CPU backend's threads run;
// here thread 0 of each block runs them and the whole block runs the bodies (the block worker,
// detail/ws_block_worker.cuh, on the per-task cycle of detail/dynamic_worker.cuh).
//
// Memory:
//   deques, sharing and overflow queues,   device memory: only blocks touch them, with
//   `pending`, `fed`, the feed lock        device-scope atomics;
//   staging ring + its two counters        mapped pinned memory: the host writes tasks and
//                                          `written` there; blocks only load from it and store
//                                          `consumed` (no read-modify-write crosses PCIe);
//   host_end                               device memory, set once by the host with a copy on its
//                                          own stream after its last insert, as the watchdog's
//                                          stop flag is (see control_work_stealing); or before
//                                          the launch where every task is in the prefill and no
//                                          host feed is set (WsDeviceState).
// The initial tasks are in the sharing queue before the launch (DeviceSharingQueue), the rest of
// Grossman's host insert_task goes through the staging ring.
//
// DEPARTURE (found with compute-sanitizer on an H100 host): gpulb first kept the sharing queue
// itself in mapped memory, with the blocks claiming slots by system-scope CAS over PCIe. That needs
// PCIe atomics, which many hosts lack (memcheck: "Invalid __global__ system-scoped atomic"). Now an
// idle block that takes the device-memory feed lock reads `written` (one PCIe load), moves up to
// kFeedBatch tasks from the ring into the sharing queue (accept_host_tasks: counted in `pending`
// first) and stores `consumed` for the host. One feeder at a time: at most one PCIe poll in flight,
// and `fed` and `consumed` have a single writer. Once every host task is in (host_drained), no
// block looks at the host again: find and terminated() never cross PCIe after that.
//
// Termination: the pending counter (work_stealing.hpp), never a count of failed steals.
//
// Trace (as the CPU backend): the blocks' events are the hooks' (detail/ws_block_hooks.cuh lists
// them). Host track: KernelLaunch/KernelEnd, HostEnqueue + QueueLevel (staged, not yet fed) per
// insert batch.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>

#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/kernels/detail/ws_block_worker.cuh"
#include "gpulb/policies/work_stealing.hpp"
#include "gpulb/work_stealing.hpp"

namespace gpulb::kernels {

struct WsKernelArgs {
  WorkStealingRef ws;
  StagingRef staging;
  VictimChoice victim = VictimChoice::Random;
};

// Grossman's worker on one GPU: the block worker (detail/ws_block_worker.cuh) with nothing beyond
// this GPU.
template <class Body>
__global__ void work_stealing_kernel(WsKernelArgs w, DynamicArgs a, Body body) {
  __shared__ DynamicMailbox box;
  // Thread 0's pending credit, in shared memory: kept in a register it took this kernel to 79
  // registers a thread on sm_90 (64 this way; ptxas -v), and an H100 from 32 to 24 resident
  // blocks of 32 threads an SM.
  __shared__ PendingCredit credit;
  const BlockContext ctx = a.context(blockIdx.x, box);
  WsBlockWorker<WorkStealingRef, OneGpu> worker(
      w.ws, w.staging, VictimPicker::make(w.victim, blockIdx.x), a, ctx, credit, OneGpu{});
  worker.run(ctx, body, box);
}

namespace detail {

// The host's insert_task (Grossman): writes tasks into the mapped staging ring while the kernel
// runs, for idle blocks to move into the sharing queue; while the ring is full it waits (polling,
// with the watchdog) for them to do so. The host is the ring's only producer.
class GpuSharingInserter final : public HostInserter {
 public:
  GpuSharingInserter(const StagingRef& host_view, GpuSession& s, DynamicHost& host,
                     std::function<std::string()> state)
      : ring_(host_view), s_(s), host_(host), state_(std::move(state)) {}

  void insert(std::span<const Task> tasks) override {
    const Task* p = tasks.data();
    std::size_t n = tasks.size();
    while (n > 0) {
      // acquire: the feeding block has read the slots it reports consumed.
      const std::uint64_t consumed =
          system_atomic_ref<std::uint64_t>(ring_.ctl->consumed).load(mo::acquire);
      const std::uint64_t free_slots = ring_.capacity - (written_ - consumed);
      if (free_slots == 0) {
        // Full: the blocks drain it -- unless they have all stopped (a block failed the run; the
        // control thread then reports that failure), when the rest can never be taken.
        if (cudaStreamQuery(s_.kernel_stream()) != cudaErrorNotReady) return;
        std::this_thread::yield();
        host_.wait_step(state_, written_);
        continue;
      }
      const auto slot = static_cast<std::uint32_t>(written_ % ring_.capacity);
      const auto chunk = static_cast<std::uint32_t>(
          std::min<std::uint64_t>({n, free_slots, ring_.capacity - slot}));
      std::memcpy(const_cast<Task*>(ring_.ring) + slot, p, chunk * sizeof(Task));
      written_ += chunk;
      // release: a block that reads `written` (acquire) sees the slots above.
      system_atomic_ref<std::uint64_t>(ring_.ctl->written).store(written_, mo::release);
      s_.host_record(trace::EventKind::HostEnqueue, chunk, kSharingQueueId);
      s_.host_record(trace::EventKind::QueueLevel, static_cast<std::uint32_t>(written_ - consumed),
                     kSharingQueueId);
      p += chunk;
      n -= chunk;
    }
  }
  std::uint64_t inserted() const { return written_; }

 private:
  StagingRef ring_;  // host pointers
  GpuSession& s_;
  DynamicHost& host_;
  std::function<std::string()> state_;
  std::uint64_t written_ = 0;
};

// The device memory of one run: per-block deques, the overflow and sharing queues, the host's
// mapped staging ring, the termination control. The initial tasks that fit go into the sharing
// queue before the launch (`prefill`); the rest are staged while the kernel runs.
struct WsDeviceState {
  WsDeviceState(const ExecPlan& plan, std::uint32_t blocks)
      : o(plan.policy_options<policies::WorkStealingOptions>()),
        prefill(plan.tasks.first(std::min<std::size_t>(plan.tasks.size(), o.sharing_capacity))),
        deque_ctl(checked_deque_blocks(o, blocks)),
        deque_slots(std::size_t{blocks} * o.deque_capacity),
        overflow(o.overflow_capacity),
        sharing(o.sharing_capacity, prefill),
        staging_ctl(1),
        staging_ring(o.sharing_capacity),
        feed_lock(1),
        control(1),
        host_end(1) {
    WorkStealingControl c;
    c.pending = static_cast<std::int64_t>(prefill.size());
    c.fed = prefill.size();
    // Every host task in the prefill and no host feed: the host has nothing left to insert, so
    // the feed is closed before the launch (feed_and_close later writes the same value). The
    // kernel then never waits on the host: a profiler that holds the host until the kernel ends
    // (Nsight Compute) no longer hangs it.
    if (prefill.size() == plan.tasks.size() && !plan.host_feed) c.host_end = 1 + prefill.size();
    control.upload(&c, 1);
  }

  // The kernel's view, and the host's view of the staging ring.
  WsKernelArgs kernel_args(std::uint32_t blocks) const {
    const WorkStealingRef dev{{deque_ctl.get(), deque_slots.get(), blocks, o.deque_capacity},
                              sharing.ref(),
                              overflow.ref(),
                              control.get(),
                              blocks,
                              o.deque_overflow == DequeOverflow::Spill};
    const StagingRef ring{staging_ctl.device(), staging_ring.device(), o.sharing_capacity,
                          feed_lock.get(), prefill.size()};
    return {dev, ring, o.victim};
  }
  StagingRef host_staging() const {
    return {staging_ctl.host(), staging_ring.host(), o.sharing_capacity, nullptr, prefill.size()};
  }

  // For the watchdog's message: a snapshot of the control word and the queues' levels.
  std::string describe(GpuSession& s) const {
    WorkStealingControl c;
    GPULB_CUDA_TRY(
        cudaMemcpyAsync(&c, control.get(), sizeof c, cudaMemcpyDeviceToHost, s.copy_stream()));
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
    auto queued = [](const SharingQueueControl& q) {
      return q.enqueue_pos > q.dequeue_pos ? q.enqueue_pos - q.dequeue_pos : 0;
    };
    const StagingRef h = host_staging();
    const std::uint64_t written =
        system_atomic_ref<std::uint64_t>(h.ctl->written).load(mo::relaxed);
    const std::uint64_t consumed =
        system_atomic_ref<std::uint64_t>(h.ctl->consumed).load(mo::relaxed);
    return "pending " + std::to_string(c.pending) + ", host " +
           (c.host_end == 0 ? "inserting" : "done") + ", staged " +
           std::to_string(written - consumed) + ", sharing queue " +
           std::to_string(queued(sharing.control())) + ", overflow queue " +
           std::to_string(queued(overflow.control()));
  }

  const policies::WorkStealingOptions& o;
  std::span<const Task> prefill;
  cuda::DeviceBuffer<WsDequeControl> deque_ctl;
  cuda::DeviceBuffer<gpulb::detail::TaskWords> deque_slots;
  DeviceSharingQueue overflow;
  DeviceSharingQueue sharing;
  cuda::MappedBuffer<HostStaging> staging_ctl;
  cuda::MappedBuffer<Task> staging_ring;
  cuda::DeviceBuffer<std::uint32_t> feed_lock;
  cuda::DeviceBuffer<WorkStealingControl> control;
  // The staging word of host_end's copy. Allocated here, before the launch, and freed after the
  // kernel: cudaFreeHost waits for the whole device, so freeing it while the blocks run would wait
  // on them (a stuck run would then hang before the watchdog could stop it).
  cuda::MappedBuffer<std::uint64_t> host_end;

 private:
  static std::uint32_t checked_deque_blocks(const policies::WorkStealingOptions& o,
                                            std::uint32_t blocks) {
    check_device_bytes(std::uint64_t{blocks} * o.deque_capacity * sizeof(gpulb::detail::TaskWords),
                       "the deques (blocks x deque_capacity=" + std::to_string(o.deque_capacity) +
                           "; lower --param deque_capacity)");
    return blocks;
  }
};

// The host's part while the kernel runs: the initial tasks beyond the sharing queue, the host feed
// (the plan's; a distributed run's chunks from other ranks), then host_end = 1 + every task the host gave -- one aligned 8-byte copy into device
// memory on the copy stream (as GpuSession::request_stop). The inserts are completed host stores to
// coherent pinned memory before the copy is issued, and a block reads host_end with a system-scope
// acquire before it compares `fed` with it. `control_in_host`: a run across GPUs through host memory
// keeps `control` in mapped host memory, and the host stores host_end there itself (one aligned
// 8-byte release store: no block can read half of it).
// `rest`: the initial tasks not prefilled; `fed_before`: the tasks in this control word's sharing
// queue before the launch (the prefill). The run across GPUs calls it for GPU 0 (its staging ring
// and the run's control word).
inline std::uint64_t feed_and_close(GpuSession& s, const HostFeed& feed, std::span<const Task> rest,
                                    const StagingRef& host_view, std::uint64_t fed_before,
                                    WorkStealingControl* control,
                                    cuda::MappedBuffer<std::uint64_t>& host_end, DynamicHost& host,
                                    const std::function<std::string()>& state,
                                    bool control_in_host = false) {
  GpuSharingInserter inserter(host_view, s, host, state);
  try {
    inserter.insert(rest);
    if (feed) feed(inserter);
  } catch (const RunError&) {
    throw;  // the watchdog: it has stopped the kernel
  } catch (...) {
    s.request_stop();  // the feed failed: stop the blocks before the memory goes
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
    throw;
  }
  if (control_in_host) {
    std::atomic_ref<std::uint64_t>(control->host_end)
        .store(1 + fed_before + inserter.inserted(), std::memory_order_release);
    return inserter.inserted();
  }
  *host_end.host() = 1 + fed_before + inserter.inserted();
  GPULB_CUDA_TRY(cudaMemcpyAsync(&control->host_end, host_end.host(), sizeof(std::uint64_t),
                                 cudaMemcpyHostToDevice, s.copy_stream()));
  GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
  return inserter.inserted();
}
inline std::uint64_t feed_and_close(GpuSession& s, const ExecPlan& plan, WsDeviceState& d,
                                    DynamicHost& host, const std::function<std::string()>& state) {
  return feed_and_close(s, plan.host_feed, plan.tasks.subspan(d.prefill.size()), d.host_staging(),
                        d.prefill.size(), d.control.get(), d.host_end, host, state);
}

// Steals, spills, deque peaks and task slots (Mohan & Gopalan, Fig. 7: deque memory is per block).
inline void work_stealing_metrics(const WsDeviceState& d, const DynamicHost& host,
                                  std::uint32_t blocks, DynamicOutcome& out) {
  std::vector<WsDequeControl> deques(blocks);
  d.deque_ctl.download(deques.data(), blocks);
  std::uint32_t peak_deque = 0;
  for (const WsDequeControl& q : deques) peak_deque = std::max(peak_deque, q.peak);
  std::uint64_t steals = 0, steals_failed = 0, spilled = 0;
  for (const DynamicBlockStats& b : host.snapshot()) {
    steals += b.steals;
    steals_failed += b.steals_failed;
    spilled += b.spilled;
  }
  out.metrics["steals"] = steals;
  out.metrics["steals_failed"] = steals_failed;
  out.metrics["spilled"] = spilled;
  out.metrics["peak_deque_level"] = peak_deque;
  out.metrics["peak_task_slots"] =
      std::uint64_t{blocks} * peak_deque + d.overflow.control().peak + d.sharing.control().peak;
  if (spilled > 0) {
    out.notes.push_back(
        std::to_string(spilled) +
        " spawned tasks did not fit a deque and went through the overflow queue (deque_capacity=" +
        std::to_string(d.o.deque_capacity) + ")");
  }
}

// The host's part of a one-GPU work-stealing run once the grid and the body are known, for both
// kernels (a task a block here, a task a thread in work_stealing_lanes.cuh): the device state,
// the trace (`events_per_task`), `launch(kernel_args, dynamic_args)` on the kernel stream, the
// host feed, the wait, the failure messages (`spawn_capacity_message`, where not nullptr, for a
// SpawnCapacity failure), the counts and metrics.
template <class Launch>
void drive_work_stealing(
    GpuSession& s, const ExecPlan& plan, std::uint32_t blocks, std::uint32_t events_per_task,
    Launch&& launch, std::atomic<bool>& abort_all, DynamicOutcome& out,
    const std::function<std::string(const DeviceFailure&)>& spawn_capacity_message = {}) {
  using trace::EventKind;
  WsDeviceState d(plan, blocks);
  if (!d.prefill.empty())
    s.host_record(EventKind::HostEnqueue, static_cast<std::uint32_t>(d.prefill.size()),
                  kSharingQueueId);
  DynamicHost host(s, plan, blocks, abort_all);
  s.allocate_trace(blocks, dynamic_trace_capacity(plan, blocks, events_per_task, out.notes));
  const std::function<std::string()> state = [&] { return d.describe(s); };

  s.host_record(EventKind::KernelLaunch, blocks);
  out.launch_ns = s.now_ns();
  launch(d.kernel_args(blocks), host.args());
  GPULB_CUDA_CHECK_LAUNCH();
  const std::uint64_t inserted = feed_and_close(s, plan, d, host, state);
  host.wait_kernel(state, inserted);
  out.end_ns = s.now_ns();
  s.host_record(EventKind::KernelEnd, blocks);

  const DeviceFailure f = host.failure();
  if (f.code != 0) {
    const auto why = static_cast<DynamicFailure>(f.code);
    if (why == DynamicFailure::OverflowFull || why == DynamicFailure::DequeFull) {
      throw RunError(policies::work_stealing_full_message(
          "block", f.block, plan.policy_options<policies::WorkStealingOptions>()));
    }
    if (why == DynamicFailure::SpawnCapacity && spawn_capacity_message)
      throw RunError(spawn_capacity_message(f));
    throw RunError(host.common_failure_message(f));
  }
  host.collect(out);
  out.workers = blocks;
  work_stealing_metrics(d, host, blocks, out);
}

template <class Body, class MakeBody>
void control_work_stealing(GpuSession& s, const ExecPlan& plan, MakeBody& make_body,
                           std::atomic<bool>& abort_all, DynamicOutcome& out) {
  const GridSize grid = persistent_grid(reinterpret_cast<const void*>(&work_stealing_kernel<Body>),
                                        s.device(), plan.block_size, plan.workers);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t blocks = grid.blocks;
  const Body body = make_body(s.slot(), blocks);
  // Per task: begin, end, a deque level on pop and on push, a spawn, a steal; plus idle spells.
  drive_work_stealing(
      s, plan, blocks, 8,
      [&](const WsKernelArgs& k, const DynamicArgs& a) {
        work_stealing_kernel<Body><<<blocks, plan.block_size, 0, s.kernel_stream()>>>(k, a, body);
      },
      abort_all, out);
}

}  // namespace detail
}  // namespace gpulb::kernels
