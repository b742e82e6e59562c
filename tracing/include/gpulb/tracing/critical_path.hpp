// The critical path a trace proves: the shortest time in which any schedule could run a tree of
// spawned tasks, however many workers it had.
//
// A child becomes visible only after its parent's body returned (gpulb/spawn.hpp), so a chain of
// tasks from a root to its deepest leaf runs one task after the other. A trace does not record
// which task spawned which (a Spawn event gives only the count of children), but it records
//   - the tree's depth, where the scenario reports it in its result as "max_depth" (uts does);
//   - which tasks spawned: a Spawn event follows its task's end on the same track.
// Every task of the chain but the last spawned a child, so the chain lasts at least
//   depth x (the shortest task that spawned) + (the shortest task).
// That is a true lower bound of the makespan, not an estimate.
#pragma once

#include <cstdint>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::trace {

struct CriticalPath {
  std::uint64_t depth = 0;               // the deepest task below an initial one; 0: unknown
  std::uint64_t shortest_parent_ns = 0;  // the shortest task that spawned children
  std::uint64_t shortest_task_ns = 0;    // the shortest task of all
  double bound_ns = 0.0;                 // 0 where the trace does not prove a chain

  std::uint64_t chain_tasks() const { return depth + 1; }
};

CriticalPath critical_path(const Trace& trace);

}  // namespace gpulb::trace
