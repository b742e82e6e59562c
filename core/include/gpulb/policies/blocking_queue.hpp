// `blocking-queue`: Mohan & Gopalan's one global queue behind a CAS spin lock (mechanism:
// gpulb/blocking_queue.hpp).
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& blocking_queue() {
  static const PolicyDescriptor d{
      "blocking-queue", "Mohan & Gopalan 2014", "one global queue guarded by a CAS spin lock",
      {.runs_spawned_tasks = true, .persistent = true},
      {spawn_capacity_option(),
       {{"blocking_capacity", "blocking-queue: tasks the global queue holds", "4194304", "1..268435456", 1, 1 << 28, {}},
        &PolicyOptions::blocking_capacity}}};
  return d;
}

}  // namespace gpulb::policies
