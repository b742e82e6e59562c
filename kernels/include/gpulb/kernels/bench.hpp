// GPU measurements behind `gpulb bench` (tools/src/bench.cpp formats them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpulb/exec_plan.hpp"

namespace gpulb::kernels {

// fetch-and-add on one global address by thread 0 of every resident block: the ceiling of any
// single shared counter (docs/architecture.md, Facts: 0.73 ns an operation on an H100). Returns ns per operation.
double atomic_ceiling_ns(int device);

// Empty tasks through a plan (trace off): host-observed launch-to-end seconds.
double empty_task_seconds(const ExecPlan& plan);

struct QueueFigures {
  double enqueue_us_paper = 0;   // one PCIe batch write of `batch` tasks, with the host write fence
  double enqueue_us_modern = 0;  // one mapped-memory batch write and doorbell
  double dequeue_ns_paper = 0;   // per task, from a pre-loaded queue, `blocks` blocks
  double dequeue_ns_modern = 0;  // per task, the same, claims of `claim`
  std::uint32_t blocks = 0;
};
// Chen et al. section 5.2: enqueue many batches without a kernel; dequeue from pre-loaded queues.
QueueFigures queue_figures(int device, std::uint32_t batch, std::uint32_t blocks,
                           std::uint32_t block_size, std::uint64_t tasks, std::uint32_t claim);

}  // namespace gpulb::kernels
