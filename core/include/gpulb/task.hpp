// The task descriptor: a fixed-size POD that any worker (a thread block or a host thread) runs.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gpulb/hd.hpp"

namespace gpulb {

struct Task {
  std::uint32_t id = 0;      // unique within a run; the trace and the verifiers key on it
  std::uint16_t kind = 0;    // scenario-defined; kHaltKind is reserved
  std::uint16_t flags = 0;   // scenario-defined
  std::uint32_t parent = 0;  // id of the task that spawned this one (kNoParent for initial tasks)
  std::uint32_t depth = 0;
  std::uint64_t payload[6] = {};

  static constexpr std::uint16_t kHaltKind = 0xFFFF;  // Chen et al.: a HALT task ends one worker
  static constexpr std::uint32_t kNoParent = 0xFFFFFFFFu;

  GPULB_HD bool is_halt() const { return kind == kHaltKind; }
  GPULB_HD static Task halt() {
    Task t;
    t.kind = kHaltKind;
    t.parent = kNoParent;
    return t;
  }
};
static_assert(sizeof(Task) == 64, "a task is one 64-byte line: two 32-byte sectors on the GPU");
static_assert(std::is_trivially_copyable_v<Task>);

}  // namespace gpulb
