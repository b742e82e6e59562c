// Task bodies that spawn, for the dynamic-task policy tests; written once for every backend.
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb::testing {

// A complete tree: a task with payload[0] = levels left spawns `fanout` children with one level
// less. Every run is counted by task id (ids are dense: the runtime hands them out from 0 up).
struct TreeBody {
  std::uint32_t* counts;      // per task id
  std::uint64_t id_capacity;  // counts' size
  std::uint32_t fanout;
  std::uint32_t spin = 0;  // busy work per task (makes stealing worthwhile)

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    ctx.once([&] {
      if (task.id < id_capacity)
        device_atomic_ref<std::uint32_t>(counts[task.id]).fetch_add(1, mo::relaxed);
    });
    std::uint64_t x = task.id;
    for (std::uint32_t i = 0; i < spin; ++i) x = x * 6364136223846793005ull + 1;
    if (task.payload[0] == 0) return;
    ctx.for_each_thread([&](std::uint32_t t) {
      for (std::uint32_t c = t; c < fanout; c += ctx.block_size()) {
        Task child;
        child.payload[0] = task.payload[0] - 1;
        child.payload[1] = x;
        ctx.spawn(child);
      }
    });
  }

  // Tasks in a tree of `levels` levels below the root.
  static std::uint64_t tree_size(std::uint32_t fanout, std::uint32_t levels) {
    std::uint64_t n = 1, width = 1;
    for (std::uint32_t l = 0; l < levels; ++l) n += (width *= fanout);
    return n;
  }
};

}  // namespace gpulb::testing
