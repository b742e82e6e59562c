// The work-stealing policy on the GPU: Grossman, "Dynamic Task Parallelism with a GPU
// Work-Stealing Runtime System" (a persistent block per worker, a private deque each in global
// memory, a global work-sharing queue the host writes while the kernel runs, device-side task
// creation), with the deques of Arora, Blumofe & Plaxton as Mohan & Gopalan describe them.
// The scheduling steps are gpulb/work_stealing.hpp, the same source the CPU backend's threads run;
// here thread 0 of each block runs them and the whole block runs the bodies
// (detail/dynamic_worker.cuh).
//
// Memory:
//   deques, overflow queue, `pending`      device memory (only blocks touch them);
//   sharing queue                          mapped pinned memory: the host control thread appends
//                                          the initial tasks and any host_feed inserts to it while
//                                          the kernel runs (Grossman's host insert_task);
//   host_done                              device memory, set once by the host with a copy on its
//                                          own stream after its last insert, as the watchdog's
//                                          stop flag is (see control_work_stealing).
// Termination: the pending counter (work_stealing.hpp), never a count of failed steals.
//
// DEPARTURE, for PCIe: polling the sharing queue costs a round trip over PCIe (about 2 us) per
// look. Once a block has seen host_done and then the sharing queue empty, that stays true for the
// rest of the run, so the block swaps its copy of the queue for an always-empty one in device
// memory: find_task and terminated() then never cross PCIe again.
//
// Trace (as the CPU backend): TaskBegin/TaskEnd; Spawn (arg: children); DequeLevel (aux: owner,
// arg: tasks in the deque) after each pop from and push onto a block's own deque; Steal (arg:
// victim) per steal; StealFailed (arg: victim) and DequeueFailed once per idle spell (every failed
// attempt counted in WorkerEnd's arg); QueueLevel for the sharing (aux 0) and overflow (aux 1)
// queues. Host track: KernelLaunch/KernelEnd, HostEnqueue + QueueLevel per insert batch.
#pragma once

#include <span>

#include "gpulb/kernels/detail/dynamic_worker.cuh"
#include "gpulb/work_stealing.hpp"

namespace gpulb::kernels {


struct WsKernelArgs {
  WorkStealingRef ws;
  SharingQueueRef drained;  // always empty, device memory (see the DEPARTURE above)
  VictimChoice victim = VictimChoice::Random;
};

template <class Body>
__global__ void work_stealing_kernel(WsKernelArgs w, DynamicArgs a, Body body) {
  using trace::EventKind;
  __shared__ DynamicMailbox box;
  const std::uint32_t rank = blockIdx.x;
  const BlockContext ctx = a.context(rank, box);
  ctx.record(EventKind::WorkerStart, rank, static_cast<std::uint16_t>(smid()));
  // Thread 0's state (the other threads carry it unused).
  WorkStealingRef ws = w.ws;
  VictimPicker picker = VictimPicker::make(w.victim, rank);
  DynamicBlockStats st{};
  bool idle = false, drained = false;
  unsigned backoff = kMinBackoffNs;
  const auto owner = static_cast<std::uint16_t>(rank);

  auto find = [&](Task& task) -> WorkerAction {
    for (;;) {
      if (a.should_stop()) return WorkerAction::Stop;
      const FindResult f = ws.find_task(rank, picker, task);
      if (f.source != TaskSource::None) {
        idle = false;
        backoff = kMinBackoffNs;
        if (record_found(ctx, ws, f, owner)) ++st.steals;
        return WorkerAction::Run;
      }
      if (f.steal_failed) {
        ++st.steals_failed;
        if (!idle) ctx.record(EventKind::StealFailed, f.victim);
      }
      if (st.failed_attempts != ~std::uint64_t{0}) ++st.failed_attempts;
      if (!idle) ctx.record(EventKind::DequeueFailed, 0, kSharingQueueId);
      idle = true;
      // acquire on host_done, then the queue's acquire loads: the same order terminated() uses.
      if (!drained && system_atomic_ref<std::uint32_t>(ws.ctl->host_done).load(mo::acquire) != 0 && ws.sharing.empty()) {
        ws.sharing = w.drained;
        drained = true;
      }
      if (ws.terminated()) return WorkerAction::Done;
      __nanosleep(backoff);
      backoff = backoff < kMaxBackoffNs ? 2 * backoff : kMaxBackoffNs;
    }
  };

  auto publish = [&](const Task& task, std::uint32_t count) -> bool {
    a.task_finished(rank, ++st.tasks);
    if (!a.take_children(task, rank, count)) return false;
    if (count == 0) {
      ws.task_done();
      return true;
    }
    st.spawned += count;
    ctx.record(EventKind::Spawn, count);
    const PublishResult p = ws.publish_children(rank, a.slots(rank), count);
    if (p.pushed > 0) ctx.record(EventKind::DequeLevel, p.deque_level, owner);
    if (p.spilled > 0) {
      st.spilled += p.spilled;
      ctx.record(EventKind::QueueLevel, ws.overflow.size_hint(), kOverflowQueueId);
    }
    if (p.failed) {
      a.fail(ws.spill ? DynamicFailure::OverflowFull : DynamicFailure::DequeFull, rank, task.id, count);
      return false;
    }
    return true;
  };

  dynamic_block_loop(ctx, body, box, find, publish);
  ctx.record(EventKind::WorkerEnd, static_cast<std::uint32_t>(st.failed_attempts > 0xFFFFFFFFu ? 0xFFFFFFFFu : st.failed_attempts));
  if (threadIdx.x == 0) a.stats[rank] = st;
}

namespace detail {

// The host's insert_task (Grossman): appends to the mapped sharing queue while the kernel runs;
// while the queue is full it waits (polling, with the watchdog) for the blocks to drain it.
class GpuSharingInserter final : public HostInserter {
 public:
  GpuSharingInserter(SharingQueueRef queue, GpuSession& s, DynamicHost& host, std::function<std::string()> state)
      : queue_(queue), s_(s), host_(host), state_(std::move(state)) {}

  void insert(std::span<const Task> tasks) override {
    const Task* p = tasks.data();
    std::size_t n = tasks.size();
    while (n > 0) {
      const auto chunk = static_cast<std::uint32_t>(std::min<std::size_t>(n, 1u << 20));
      const std::uint32_t wrote = queue_.try_push(p, chunk);
      if (wrote == 0) {
        // Full: the blocks drain it -- unless they have all stopped (a block failed the run; the
        // control thread then reports that failure), when the rest can never be taken.
        if (cudaStreamQuery(s_.kernel_stream()) != cudaErrorNotReady) return;
        std::this_thread::yield();
        host_.wait_step(state_, inserted_);
        continue;
      }
      s_.host_record(trace::EventKind::HostEnqueue, wrote, kSharingQueueId);
      s_.host_record(trace::EventKind::QueueLevel, queue_.size_hint(), kSharingQueueId);
      p += wrote;
      n -= wrote;
      inserted_ += wrote;
    }
  }
  std::uint64_t inserted() const { return inserted_; }

 private:
  SharingQueueRef queue_;
  GpuSession& s_;
  DynamicHost& host_;
  std::function<std::string()> state_;
  std::uint64_t inserted_ = 0;
};

template <class Body, class MakeBody>
void control_work_stealing(GpuSession& s, const ExecPlan& plan, MakeBody& make_body, std::atomic<bool>& abort_all,
                           DynamicOutcome& out) {
  using trace::EventKind;
  const PolicyOptions& o = plan.options;
  const GridSize grid = persistent_grid(reinterpret_cast<const void*>(&work_stealing_kernel<Body>), s.device(), plan.block_size, plan.workers);
  if (!grid.note.empty()) out.notes.push_back(grid.note);
  const std::uint32_t blocks = grid.blocks;
  const Body body = make_body(s.slot(), blocks);

  check_device_bytes(std::uint64_t{blocks} * o.deque_capacity * sizeof(gpulb::detail::TaskWords),
                     "the deques (blocks x deque_capacity=" + std::to_string(o.deque_capacity) + "; lower --param deque_capacity)");
  cuda::DeviceBuffer<WsDequeControl> deque_ctl(blocks);
  cuda::DeviceBuffer<gpulb::detail::TaskWords> deque_slots(std::size_t{blocks} * o.deque_capacity);
  DeviceSharingQueue overflow(o.overflow_capacity);
  DeviceSharingQueue drained(1);  // seq[0] = 0 < position 0 + 1: empty forever
  MappedSharingQueue sharing(o.sharing_capacity);
  cuda::DeviceBuffer<WorkStealingControl> control(1);
  DynamicHost host(s, plan, blocks, abort_all);
  // Per task: begin, end, a deque level on pop and on push, a spawn, a steal; plus idle spells.
  s.allocate_trace(blocks, dynamic_trace_capacity(plan, blocks, 8));

  const bool spill = o.deque_overflow == "spill";
  const WorkStealingRef dev{{deque_ctl.get(), deque_slots.get(), blocks, o.deque_capacity}, sharing.device_ref(), overflow.ref(),
                            control.get(), blocks, spill};
  const WsKernelArgs args{dev, drained.ref(), o.victim == "round-robin" ? VictimChoice::RoundRobin : VictimChoice::Random};

  auto state = [&] {
    WorkStealingControl c;
    GPULB_CUDA_TRY(cudaMemcpyAsync(&c, control.get(), sizeof c, cudaMemcpyDeviceToHost, s.copy_stream()));
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));
    const SharingQueueControl ov = overflow.control();
    return "pending " + std::to_string(c.pending) + ", host_done " + std::to_string(c.host_done) + ", sharing queue " +
           std::to_string(sharing.host_ref().size_hint()) + ", overflow queue " +
           std::to_string(ov.enqueue_pos > ov.dequeue_pos ? ov.enqueue_pos - ov.dequeue_pos : 0);
  };

  s.host_record(EventKind::KernelLaunch, blocks);
  out.launch_ns = s.now_ns();
  work_stealing_kernel<Body><<<blocks, plan.block_size, 0, s.kernel_stream()>>>(args, host.args(), body);
  GPULB_CUDA_CHECK_LAUNCH();

  GpuSharingInserter inserter(sharing.host_ref(), s, host, state);
  try {
    inserter.insert(plan.tasks);  // Grossman: the initial tasks reach the blocks through the sharing queue
    if (plan.host_feed) plan.host_feed(inserter);
  } catch (const RunError&) {
    throw;  // the watchdog: it has stopped the kernel
  } catch (...) {
    s.request_stop();  // the feed failed: stop the blocks before the memory goes
    GPULB_CUDA_TRY(cudaStreamSynchronize(s.kernel_stream()));
    throw;
  }
  // host_done, after the last insert. A copy into device memory on the copy stream while the
  // kernel runs (as GpuSession::request_stop): the inserts above are completed host stores to
  // coherent pinned memory before the copy is issued, and a block reads host_done with a
  // system-scope acquire before it looks at the queue again.
  cuda::MappedBuffer<std::uint32_t> one(1);
  *one.host() = 1;
  GPULB_CUDA_TRY(cudaMemcpyAsync(&control.get()->host_done, one.host(), sizeof(std::uint32_t), cudaMemcpyHostToDevice, s.copy_stream()));
  GPULB_CUDA_TRY(cudaStreamSynchronize(s.copy_stream()));

  host.wait_kernel(state, inserter.inserted());
  out.end_ns = s.now_ns();
  s.host_record(EventKind::KernelEnd, blocks);

  const DeviceFailure f = host.failure();
  if (f.code != 0) {
    std::string msg = host.common_failure_message(f);
    if (static_cast<DynamicFailure>(f.code) == DynamicFailure::OverflowFull) {
      msg = "work-stealing: block " + std::to_string(f.block) + "'s deque (deque_capacity=" + std::to_string(o.deque_capacity) +
            ") and the overflow queue (overflow_capacity=" + std::to_string(o.overflow_capacity) +
            ") are full; raise --param overflow_capacity or deque_capacity";
    } else if (static_cast<DynamicFailure>(f.code) == DynamicFailure::DequeFull) {
      msg = "work-stealing: block " + std::to_string(f.block) + "'s deque is full (deque_capacity=" + std::to_string(o.deque_capacity) +
            ") and deque_overflow=fail; raise --param deque_capacity or use deque_overflow=spill";
    }
    throw RunError(msg);
  }

  host.collect(out);
  out.workers = blocks;
  std::vector<WsDequeControl> deques(blocks);
  deque_ctl.download(deques.data(), blocks);
  std::uint32_t peak_deque = 0;
  for (const WsDequeControl& d : deques) peak_deque = std::max(peak_deque, d.peak);
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
  out.metrics["peak_task_slots"] = std::uint64_t{blocks} * peak_deque + overflow.control().peak + sharing.host_ref().ctl->peak;
  if (spilled > 0) {
    out.notes.push_back(std::to_string(spilled) + " spawned tasks did not fit a deque and went through the overflow queue (deque_capacity=" +
                        std::to_string(o.deque_capacity) + ")");
  }
}

}  // namespace detail
}  // namespace gpulb::kernels
