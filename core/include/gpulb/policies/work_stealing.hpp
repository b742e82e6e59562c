// `work-stealing`: Grossman's persistent workers with ABP deques (Arora, Blumofe, Plaxton, as in
// Mohan & Gopalan); mechanism: gpulb/work_stealing.hpp.
#pragma once

#include "gpulb/policy.hpp"

namespace gpulb::policies {

inline const PolicyDescriptor& work_stealing() {
  static const PolicyDescriptor d{
      "work-stealing", "Grossman; Arora-Blumofe-Plaxton in Mohan & Gopalan",
      "persistent workers with private deques, a host-written sharing queue, stealing",
      {.runs_spawned_tasks = true, .host_fed = true, .persistent = true, .host_inserts = true},
      {spawn_capacity_option(),
       {{"deque_capacity", "work-stealing: tasks per worker deque", "1024", "1..16777216", 1, 1 << 24, {}},
        &PolicyOptions::deque_capacity},
       {{"victim", "work-stealing: how a thief picks its victim", "random", "random|round-robin", 0, 0,
         {"random", "round-robin"}},
        &PolicyOptions::victim},
       {{"deque_overflow", "work-stealing: a full deque spills to the overflow queue, or fails the run", "spill",
         "spill|fail", 0, 0, {"spill", "fail"}},
        &PolicyOptions::deque_overflow},
       {{"overflow_capacity", "work-stealing: tasks the overflow queue holds", "65536", "1..67108864", 1, 1 << 26, {}},
        &PolicyOptions::overflow_capacity},
       {{"sharing_capacity", "work-stealing: tasks the sharing queue holds (CUDA: and the host staging ring)", "4096",
         "1..16777216", 1, 1 << 24, {}},
        &PolicyOptions::sharing_capacity}}};
  return d;
}

}  // namespace gpulb::policies
