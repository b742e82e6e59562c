// A run's memory, estimated before anything is allocated: the scenario's data (from its
// parameters, Scenario::data_size) plus the trace budget, per rank, against what this process may
// use. gpulb::run refuses a run that cannot fit (ConfigError naming the numbers) instead of
// allocating for minutes and ending in std::bad_alloc or the OOM killer.
#pragma once

#include <cstdint>
#include <string>

#include "gpulb/scenario.hpp"

namespace gpulb {

// Bytes this process may use: the least of the physical memory (MemTotal in /proc/meminfo), a
// cgroup v2 limit (memory.max) and the address-space limit (ulimit -v); and what the kernel says
// is available now (MemAvailable). 0 where unknown.
struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string source;  // what set it, for messages: "physical memory (MemTotal)", "ulimit -v"...
  std::uint64_t available = 0;
};
MemoryLimit memory_limit();

// A run holds its initial task list three times at its peak (the scenario's list, the plan's, the
// backend's queues): measured 205 bytes a block for patterns (64-byte tasks, 16-byte records) at
// 1 M and 4 M blocks, --no-trace, on the CPU backend.
inline constexpr std::uint64_t kTaskListCopies = 3;

struct MemoryEstimate {
  DataSize data;                  // the scenario's
  std::uint64_t task_bytes = 0;   // the initial tasks, as the run holds them
  std::uint64_t trace_bytes = 0;  // the trace budget (0: no trace)
  std::uint32_t ranks_here = 1;  // ranks of a distributed run on this host, each with its own share
  std::uint64_t per_rank() const { return task_bytes + data.bytes + trace_bytes; }
  std::uint64_t total() const { return per_rank() * ranks_here; }
};

MemoryEstimate estimate_memory(const DataSize& data, std::uint64_t trace_budget,
                               std::uint32_t ranks_here);

// ConfigError naming the estimate, its parts, the limit and what to lower, where the estimate
// exceeds `limit`. Returns a note where the data alone exceeds what is available now (empty: none).
std::string check_memory(const MemoryEstimate& estimate, const MemoryLimit& limit);

}  // namespace gpulb
