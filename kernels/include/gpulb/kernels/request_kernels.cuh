// The kernels of the work-request policies (combining, hybrid; G-Charm):
//   request_kernel       one block per request of a combined request
//   scatter_items        copies the items a combined request brought into their cache slots
#pragma once

#include <cstdint>

#include "gpulb/kernels/worker_kernels.cuh"

namespace gpulb::kernels {

// Block b runs tasks[b]. Its trace segment is the request's place in the run, first_segment + b,
// while the run's segments last (later requests run untraced; the run notes how many).
template <class Body>
__global__ void request_kernel(const Task* tasks, std::uint32_t first_segment,
                               std::uint32_t segments, Body body, DeviceTraceRef trace,
                               const std::uint32_t* stop) {
  __shared__ BlockScratch scratch;
  const std::uint32_t index = first_segment + blockIdx.x;
  const BlockContext ctx(index, index < segments ? trace.segment(index) : trace::TraceSegment{},
                         stop, &scratch);
  if (ctx.stop_requested()) return;  // the watchdog fired: drain the grid without working
  ctx.record(trace::EventKind::WorkerStart, index, static_cast<std::uint16_t>(smid()));
  const Task task = tasks[blockIdx.x];
  run_one(ctx, body, task);
}

// Launches scatter_items_kernel on `stream`: item k (item_words words from items + k * item_words)
// goes to slot slots[k] of the cache, for k < count.
void scatter_items(const std::uint32_t* items, const std::uint32_t* slots, std::uint64_t count,
                   std::uint32_t item_words, std::uint32_t* cache, cudaStream_t stream);

}  // namespace gpulb::kernels
