// `task-queue`: Chen et al. 2010, Algorithms 2 and 3 (mechanism: gpulb/task_queue.hpp).
//
// DEPARTURE from Chen et al. (whose tasks never spawn): on the CPU backend a task's children go
// back to the host task pool, which feeds them to the queues as it feeds the initial tasks
// (UTS under task-queue, on one host and across ranks). The CUDA driver runs no spawned task.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpulb/policy.hpp"

namespace gpulb::policies {

struct TaskQueueOptions : SpawnOptions {
  std::uint32_t queues = 0;          // queues per device; 0 = by variant (task_queue_shape)
  std::uint32_t queue_capacity = 0;  // tasks per queue (one enqueue batch); 0 = by variant
  QueueVariant variant = QueueVariant::Modern;  // on CUDA: the paper's scheme or the modern one
  QueueFeed feed = QueueFeed::Copy;  // modern on CUDA: batches by the copy engine or mapped loads
  std::uint32_t claim = 8;           // modern on CUDA: most tasks a block claims per fetch-and-add
};

inline const PolicyDescriptor& task_queue() {
  static const PolicyDescriptor d{
      "task-queue",
      "Chen et al. 2010, Algorithms 2 and 3",
      "persistent workers; host-fed queues, wait-free fetch-and-add dequeue, HALT tasks; cpu: "
      "spawned children back to the host pool",
      {.cpu_runs_spawned_tasks = true,
       .host_fed = true,
       .persistent = true,
       .distributed = true,
       .gpu_distributed = true},
      options_for<TaskQueueOptions>(
          {number_option(
               "queues",
               "task-queue: queues per device; 0 = 2 (Chen et al.) for the paper variant and "
               "the CPU, 8 for modern on CUDA",
               &TaskQueueOptions::queues, 0, 64),
           number_option(
               "queue_capacity",
               "task-queue: tasks per queue, the largest enqueue batch; 0 = 128 for the paper "
               "variant "
               "and the CPU (1024 on the CPU for a "
               "spawning scenario), sized from the task count for modern on CUDA (docs/papers.md)",
               &TaskQueueOptions::queue_capacity, 0, 1 << 20),
           choice_option("variant",
                         "task-queue on CUDA: the paper's scheme (the reference) or the modern one",
                         &TaskQueueOptions::variant),
           choice_option(
               "feed",
               "task-queue modern (CUDA): batches move by the copy engine, or by a block's "
               "loads from mapped memory",
               &TaskQueueOptions::feed),
           number_option(
               "claim",
               "task-queue modern (CUDA): most tasks a block claims with one fetch-and-add "
               "(1 while tasks run long)",
               &TaskQueueOptions::claim, 1, 32),
           spawn_capacity_option()})};
  return d;
}

// The queues and their capacity a run uses: the options, or where they are 0 (the default) a
// choice by backend and variant.
//  - The paper variant and the CPU backend: Chen et al.'s 2 queues of 128 tasks.
//  - The CPU backend where the scenario spawns (`cpu_spawns`): 2 queues of 1024. Every child comes
//    back through the host thread, and a distributed run's host thread sleeps 50 us between polls
//    of MPI: 2 x 128 UTS nodes last about 20 us on one worker, 2 x 1024 about 160 us. Measured
//    (UTS T1, 4 ranks of 1 worker, 2 loaded cores, 2 runs each): 0.64-1.13 s with 128,
//    0.27-0.29 s with 1024.
//  - The modern variant on CUDA: 8 queues, each batch sized so that a copy's fixed cost (three
//    cudaMemcpyAsync calls and the PCIe latency, ~5 us measured on an H100 host) is spread over
//    enough tasks to cost under 1 ns a task (>= 8192 tasks), but never so large that one control
//    thread's batch takes more than its share of the pool: every queue of every GPU should get at
//    least 4 batches, or the first GPU to ask hoards the pool (Chen et al. section 6.2's balance).
struct TaskQueueShape {
  std::uint32_t queues;
  std::uint32_t capacity;
};
inline TaskQueueShape task_queue_shape(const TaskQueueOptions& o, bool cuda_modern,
                                       std::uint64_t tasks, std::uint32_t gpus,
                                       bool cpu_spawns = false) {
  TaskQueueShape s{o.queues, o.queue_capacity};
  if (s.queues == 0) s.queues = cuda_modern ? 8 : 2;
  if (s.capacity == 0) {
    if (!cuda_modern) {
      s.capacity = cpu_spawns ? 1024 : 128;
    } else {
      const std::uint64_t share = tasks / (std::uint64_t{s.queues} * std::max(1u, gpus) * 4);
      std::uint32_t c = 128;
      while (c < 8192 && c < share) c *= 2;
      s.capacity = c;
    }
  }
  return s;
}

}  // namespace gpulb::policies
