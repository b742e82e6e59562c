// `task-queue`: Chen et al. 2010, Algorithms 2 and 3 (mechanism: gpulb/task_queue.hpp).
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& task_queue() {
  static const PolicyDescriptor d{
      "task-queue", "Chen et al. 2010, Algorithms 2 and 3",
      "persistent workers; host-fed queues, wait-free fetch-and-add dequeue, HALT tasks",
      {.host_fed = true, .persistent = true, .distributed = true},
      {{{"queues", "task-queue: queues per device", "2", "1..64", 1, 64, {}}, &PolicyOptions::queues},
       {{"queue_capacity", "task-queue: tasks per queue, the largest enqueue batch", "128", "1..1048576", 1, 1 << 20, {}},
        &PolicyOptions::queue_capacity},
       {{"variant", "task-queue on CUDA: the paper's scheme or the modern one", "paper", "paper|modern", 0, 0,
         {"paper", "modern"}},
        &PolicyOptions::variant},
       {{"claim", "task-queue modern (CUDA): tasks a block claims with one fetch-and-add", "8", "1..32", 1, 32, {}},
        &PolicyOptions::claim}}};
  return d;
}

}  // namespace gpulb::policies
