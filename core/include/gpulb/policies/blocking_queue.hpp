// `blocking-queue`: Mohan & Gopalan's one global queue behind a CAS spin lock (mechanism:
// gpulb/blocking_queue.hpp).
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpulb/policy.hpp"

namespace gpulb::policies {

struct BlockingQueueOptions : SpawnOptions {
  std::uint32_t blocking_capacity = 0;  // tasks the global queue holds; 0 = sized by the run
};

inline const PolicyDescriptor& blocking_queue() {
  static const PolicyDescriptor d{
      "blocking-queue",
      "Mohan & Gopalan 2014",
      "one global queue guarded by a CAS spin lock",
      {.runs_spawned_tasks = true, .persistent = true},
      options_for<BlockingQueueOptions>(
          {spawn_capacity_option(),
           number_option(
               "blocking_capacity",
               "blocking-queue: tasks the global queue holds; 0 = sized from the scenario's "
               "widest generation "
               "where it states one, else 4194304. On the CPU backend a full queue grows, "
               "within the memory there is",
               &BlockingQueueOptions::blocking_capacity, 0, 1 << 28)})};
  return d;
}

// The queue's first slots: blocking_capacity, or where it is 0 (the default) room for the scenario's
// widest generation and an eighth more (the queue is FIFO, so a tree is walked level by level and
// the queue holds about one level, the rest of one and the start of the next; the eighth and the
// 64 Ki are for the children of the tasks running while a level turns over), else 4 Mi tasks.
inline constexpr std::uint64_t kBlockingQueueSlotsUnknown = std::uint64_t{1} << 22;
inline std::uint64_t blocking_queue_slots(const BlockingQueueOptions& o,
                                          std::uint64_t widest_generation,
                                          std::uint64_t initial_tasks) {
  if (o.blocking_capacity != 0) return o.blocking_capacity;
  const std::uint64_t slots = widest_generation != 0
                                  ? widest_generation + widest_generation / 8 + (1u << 16)
                                  : kBlockingQueueSlotsUnknown;
  return std::max(slots, initial_tasks);
}

}  // namespace gpulb::policies
