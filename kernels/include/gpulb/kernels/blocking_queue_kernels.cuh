// The blocking-queue policy on the GPU: one global task queue behind a CAS spin lock, Cederman &
// Tsigas's blocking baseline as Mohan & Gopalan give it (gpulb/blocking_queue.hpp, the same source
// as the CPU backend), in a persistent kernel.
//
// Independent thread scheduling: only thread 0 of a block ever takes the lock (in find and in
// publish below, both thread-0-only), so no two threads of one warp spin on it against each other,
// and the holder does nothing under the lock but copy tasks and move two indices: no intra-warp
// deadlock and no waiting while holding it. The other threads of the block wait at a barrier.
// Memory orders are the queue's: acquire CAS to lock, release store to unlock (device scope), plain
// accesses to the ring and indices under the lock; `pending` (acq_rel RMWs, acquire test) ends the
// run when no task is queued or running.
//
// The initial tasks are in the queue before the launch (as a kernel launched over it finds them).
// Trace: QueueLevel (aux 0, arg: tasks queued after the operation) after each take and put;
// DequeueFailed once per idle spell; SpawnBatch; TaskBegin/TaskEnd. Metric: peak_task_slots.
#pragma once

#include "gpulb/blocking_queue.hpp"
#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/policies/blocking_queue.hpp"
#include "gpulb/static_list_sizing.hpp"

namespace gpulb::kernels {

template <class Body>
__global__ void blocking_queue_kernel(BlockingQueueRef q, DynamicArgs a, Body body) {
  using trace::EventKind;
  __shared__ DynamicMailbox box;
  const std::uint32_t rank = blockIdx.x;
  const BlockContext ctx = a.context(rank, box);
  ctx.record(EventKind::WorkerStart, rank, static_cast<std::uint16_t>(smid()));
  DynamicBlockStats st{};
  st.sm = smid();
  bool idle = false;
  unsigned backoff = kMinBackoffNs;

  auto find = [&](Task& task) -> WorkerAction {
    for (;;) {
      if (a.should_stop()) return WorkerAction::Stop;
      std::uint32_t level = 0;
      if (q.try_dequeue(task, level)) {  // DEQUEUE under the lock
        ctx.record_found_task({EventKind::QueueLevel, level, 0}, task);
        idle = false;
        backoff = kMinBackoffNs;
        return WorkerAction::Run;
      }
      if (st.failed_attempts != ~std::uint64_t{0}) ++st.failed_attempts;
      if (!idle) ctx.record(EventKind::DequeueFailed, 0, 0);
      idle = true;
      if (q.terminated()) return WorkerAction::Done;
      __nanosleep(backoff);  // fewer lock acquisitions by idle blocks
      backoff = backoff < kMaxBackoffNs ? 2 * backoff : kMaxBackoffNs;
    }
  };

  auto publish = [&](const Task& task, std::uint32_t count) -> bool {
    a.task_finished(rank, ++st.tasks);
    if (!a.take_children(task, rank, count)) return false;
    if (count == 0) {
      q.add_pending(-1);
      return true;
    }
    st.spawned += count;
    const trace::EventPayload spawn =
        trace::spawn_event(a.slots(rank)[0].id, count);   // take_children's ids are consecutive
    q.add_pending(static_cast<std::int64_t>(count) - 1);  // before the children are visible
    std::uint32_t level = 0;
    if (!q.enqueue(a.slots(rank), count, level)) {  // ENQUEUE of the batch under one acquisition
      ctx.record(spawn.kind, spawn.arg, spawn.aux);
      a.fail(DynamicFailure::BlockingFull, rank, task.id, count);
      return false;
    }
    // The spawn is recorded with the queue's level after the push, at its time (BlockContext::record_two).
    ctx.record_two(spawn, {EventKind::QueueLevel, level, 0});
    return true;
  };

  dynamic_block_loop(ctx, body, box, find, publish);
  ctx.record(EventKind::WorkerEnd,
             static_cast<std::uint32_t>(st.failed_attempts > 0xFFFFFFFFu ? 0xFFFFFFFFu
                                                                         : st.failed_attempts));
  if (threadIdx.x == 0) a.stats[rank] = st;
}

namespace detail {

// The queue's slots on the GPU (policies::blocking_queue_slots: the scenario's widest generation
// where it states one). A persistent kernel holds copies of the queue's ref, so the queue cannot
// grow while it runs: what the GPU's free memory cannot hold is refused before the launch.
inline std::uint64_t blocking_queue_slots_on_gpu(const ExecPlan& plan) {
  const std::uint64_t n = plan.tasks.size();
  const policies::BlockingQueueOptions& o = plan.policy_options<policies::BlockingQueueOptions>();
  const std::uint64_t slots = policies::blocking_queue_slots(o, plan.widest_generation, n);
  if (n > slots) {
    throw RunError("blocking-queue: the " + std::to_string(n) +
                   " initial tasks do not fit blocking_capacity=" + std::to_string(slots) +
                   "; raise --param blocking_capacity");
  }
  const std::uint64_t free = device_free_bytes();
  if (slots > kMaxListSlots || fit_list_slots(slots, slots, free) == 0) {
    throw RunError(
        "blocking-queue: the queue needs " + std::to_string(slots) + " task slots (" +
        format_gib(slots * sizeof(Task)) +
        (o.blocking_capacity == 0 ? ", the scenario's widest generation and an eighth" : "") +
        "); the GPU has " + format_gib(free) +
        " free (cudaMemGetInfo), and the queue cannot grow inside its persistent kernel: " +
        (o.blocking_capacity == 0 ? "use work-stealing" : "lower --param blocking_capacity"));
  }
  return slots;
}

template <class Body, class MakeBody>
void control_blocking_queue(GpuSession& s, const ExecPlan& plan, MakeBody& make_body,
                            std::atomic<bool>& abort_all, DynamicOutcome& out) {
  using trace::EventKind;
  const GridSize grid = persistent_grid(reinterpret_cast<const void*>(&blocking_queue_kernel<Body>),
                                        s.device(), plan.block_size, plan.workers);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t blocks = grid.blocks;
  const Body body = make_body(s.slot(), blocks);

  const std::uint64_t n = plan.tasks.size();
  const auto slots = static_cast<std::uint32_t>(blocking_queue_slots_on_gpu(plan));
  cuda::DeviceBuffer<Task> data(slots);
  data.upload(plan.tasks.data(), n);
  BlockingQueueControl initial;
  initial.end = n;
  initial.peak = n;
  initial.pending = static_cast<std::int64_t>(n);  // the initial tasks are queued
  cuda::DeviceBuffer<BlockingQueueControl> ctl(1);
  ctl.upload(&initial, 1);
  s.host_record(EventKind::HostEnqueue, static_cast<std::uint32_t>(n), 0);
  DynamicHost host(s, plan, blocks, abort_all);
  // Per task: a level on take, begin, end, a spawn, a level on put; plus idle spells.
  s.allocate_trace(blocks, dynamic_trace_capacity(plan, blocks, 6, out.notes));
  const BlockingQueueRef q{ctl.get(), data.get(), slots};

  s.host_record(EventKind::KernelLaunch, blocks);
  out.launch_ns = s.now_ns();
  blocking_queue_kernel<Body>
      <<<blocks, plan.block_size, 0, s.kernel_stream()>>>(q, host.args(), body);
  GPULB_CUDA_CHECK_LAUNCH();
  host.wait_kernel([&] {
    BlockingQueueControl c;
    GPULB_CUDA_TRY(
        cudaMemcpyAsync(&c, ctl.get(), sizeof c, cudaMemcpyDeviceToHost, s.copy_stream()));
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
    return "pending " + std::to_string(c.pending) + ", queued " + std::to_string(c.end - c.beg) +
           ", lock " + std::to_string(c.lock);
  });
  out.end_ns = s.now_ns();
  s.host_record(EventKind::KernelEnd, blocks);

  const DeviceFailure f = host.failure();
  if (f.code != 0) {
    std::string msg = host.common_failure_message(f);
    if (static_cast<DynamicFailure>(f.code) == DynamicFailure::BlockingFull) {
      msg = "blocking-queue: the queue is full (blocking_capacity=" + std::to_string(slots) +
            "); raise --param blocking_capacity";
    }
    throw RunError(msg);
  }
  host.collect(out);
  out.workers = blocks;
  BlockingQueueControl c;
  ctl.download(&c, 1);
  out.metrics["peak_task_slots"] = c.peak;
  out.metrics["queue_slots"] = slots;
}

}  // namespace detail
}  // namespace gpulb::kernels
