// The kernels of the CUDA backend, templated on a scenario's task body.
//
//   task_queue_kernel  persistent blocks taking tasks from host-fed queues (Chen et al. Alg. 3)
//   launch_kernel      one block per task over a slice of the task array: the `hardware` policy
//                      (one launch of every task) and the `chunked` policy (one launch per chunk)
#pragma once

#include <cstdint>

#include "gpulb/kernels/device_context.cuh"
#include "gpulb/task_queue.hpp"
#include "gpulb/tracing/segment.hpp"

namespace gpulb::kernels {

// Per-block trace segments in one device allocation: no shared cursor (docs/architecture.md, Facts: 0.02 ns an event against 0.75 ns for a shared atomic cursor).
struct DeviceTraceRef {
  trace::Event* events = nullptr;  // blocks * capacity, nullptr when tracing is off
  std::uint32_t capacity = 0;
  std::uint32_t* counts = nullptr;  // per block

  __device__ trace::TraceSegment segment(std::uint32_t block) const {
    if (events == nullptr) return {};
    return {events + static_cast<std::size_t>(block) * capacity, capacity, counts + block};
  }
};

// Shared by the threads of a block: the task thread 0 dequeued, and what to do next.
struct BlockMailbox {
  alignas(
      16) unsigned char task_bytes[sizeof(Task)];  // a Task (no constructor allowed in __shared__)
  int action;                                      // kRun, kHalt, kStop
  BlockScratch scratch;
};
inline constexpr int kRun = 0, kHalt = 1, kStop = 2;

// A body may cap the registers of the persistent kernels that run it (`static constexpr int
// kRegisterCap`): a latency-bound body (md's force loop) runs faster the more warps an SM holds,
// and a persistent kernel's own state (claims, cursors) otherwise costs it resident blocks that
// the hardware policy's one-block-per-task launch_kernel keeps. Such a kernel comes in two
// overloads, one with __maxnreg__ for capped bodies and one without: a __maxnreg__(255) is not
// "no cap" (ptxas then spends registers freely: patterns' task-queue kernels went 31 -> 68).
template <class Body>
concept RegisterCapped = requires {
  Body::kRegisterCap;
};

// The body and its TaskEnd, for a worker whose thread 0 recorded the TaskBegin (run_one does both).
template <class Body>
__device__ void run_begun(const BlockContext& ctx, const Body& body, const Task& task) {
  body(ctx, task);
  ctx.record(trace::EventKind::TaskEnd, task.id, task.kind);
}

template <class Body>
__device__ void run_one(const BlockContext& ctx, const Body& body, const Task& task) {
  ctx.record_task_begin(task);
  run_begun(ctx, body, task);
}

// Chen et al. Algorithm 3 in a persistent block: thread 0 dequeues (TaskQueueRef::try_dequeue,
// the same source the CPU backend runs), the block runs the task, HALT ends the block.
template <class Body>
__device__ __forceinline__ void task_queue_worker(TaskQueueRef queues, Body body,
                                                  DeviceTraceRef trace, const std::uint32_t* stop,
                                                  std::uint32_t* tasks_done) {
  __shared__ BlockMailbox box;
  Task& task = *reinterpret_cast<Task*>(box.task_bytes);
  const BlockContext ctx(blockIdx.x, trace.segment(blockIdx.x), stop, &box.scratch);
  ctx.record(trace::EventKind::WorkerStart, blockIdx.x, static_cast<std::uint16_t>(smid()));
  std::uint32_t cursor = blockIdx.x % queues.num_queues;
  std::uint32_t failed = 0, done = 0;
  for (;;) {
    if (threadIdx.x == 0) {
      bool idle = false;
      for (;;) {
        const DequeueResult r = queues.try_dequeue(cursor, task);
        if (r.got) {
          ctx.record(trace::EventKind::QueueLevel, static_cast<std::uint32_t>(r.remaining),
                     static_cast<std::uint16_t>(r.queue));
          box.action = task.is_halt() ? kHalt : kRun;
          break;
        }
        if (failed != 0xFFFFFFFFu) ++failed;
        if (!idle)
          ctx.record(trace::EventKind::DequeueFailed, 0, static_cast<std::uint16_t>(cursor));
        idle = true;
        if (ctx.stop_requested()) {
          box.action = kStop;
          break;
        }
      }
    }
    __syncthreads();  // Algorithm 3, line 23: every thread sees the same task
    const int action = box.action;
    if (action == kHalt) ctx.record(trace::EventKind::Halt);
    if (action != kRun) break;
    const Task mine = task;
    run_one(ctx, body, mine);
    ++done;
    __syncthreads();  // nobody still reads the mailbox when thread 0 refills it
  }
  ctx.record(trace::EventKind::WorkerEnd, failed);
  if (threadIdx.x == 0) tasks_done[blockIdx.x] = done;
}

template <class Body>
requires(!RegisterCapped<Body>) __global__
    void task_queue_kernel(TaskQueueRef queues, Body body, DeviceTraceRef trace,
                           const std::uint32_t* stop, std::uint32_t* tasks_done) {
  task_queue_worker(queues, body, trace, stop, tasks_done);
}
template <class Body>
requires RegisterCapped<Body> __global__ void __maxnreg__(Body::kRegisterCap)
    task_queue_kernel(TaskQueueRef queues, Body body, DeviceTraceRef trace,
                      const std::uint32_t* stop, std::uint32_t* tasks_done) {
  task_queue_worker(queues, body, trace, stop, tasks_done);
}

// One block per task of tasks[first, first + gridDim.x): a kernel launch as Solution 1 and 3 do.
// Each block is its own trace segment (its events: start with the SM id, task begin, task end).
template <class Body>
__global__ void launch_kernel(const Task* tasks, std::uint64_t first, Body body,
                              DeviceTraceRef trace, const std::uint32_t* stop) {
  __shared__ BlockScratch scratch;
  const std::uint64_t index = first + blockIdx.x;
  const BlockContext ctx(static_cast<std::uint32_t>(index),
                         trace.segment(static_cast<std::uint32_t>(index)), stop, &scratch);
  if (ctx.stop_requested()) return;  // the watchdog fired: drain the grid without working
  ctx.record(trace::EventKind::WorkerStart, static_cast<std::uint32_t>(index),
             static_cast<std::uint16_t>(smid()));
  const Task task = tasks[index];
  run_one(ctx, body, task);
}

__global__ void read_globaltimer_kernel(std::uint64_t* out);

}  // namespace gpulb::kernels
