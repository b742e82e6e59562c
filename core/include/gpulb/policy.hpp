// Policies (how tasks reach workers), backends (where workers run) and the options a policy takes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulb {

enum class Policy { Hardware, Chunked, StaticList, BlockingQueue, TaskQueue, WorkStealing };
enum class Backend { Cpu, Cuda };

struct PolicyInfo {
  Policy policy;
  std::string_view name;
  std::string_view source;  // the paper it comes from
  std::string_view summary;
};

const std::vector<PolicyInfo>& all_policies();
std::string_view to_string(Policy);
std::string_view to_string(Backend);
std::optional<Policy> parse_policy(std::string_view);
std::optional<Backend> parse_backend(std::string_view);

// Which policies a backend implements in this build.
bool backend_supports(Backend, Policy);

// A tunable of a scenario or a policy, as listed by `gpulb list` and the viewer's scenario panel.
struct ParamSpec {
  std::string name;
  std::string description;
  std::string default_value;
  std::string range;  // human-readable: "1..1000000", "P0|P1|P2|P3|P4"
  // Integer bounds where the parameter is an integer (checked by parse_int_param).
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::vector<std::string> choices;  // non-empty for enumerations
};

// Options of the policies, set with --param like a scenario's parameters.
struct PolicyOptions {
  std::uint32_t queues = 2;             // task-queue: queues per device (Chen et al. used 2 per GPU)
  std::uint32_t queue_capacity = 128;   // task-queue: tasks per queue (one enqueue batch)
  std::uint32_t watchdog_ms = 10000;    // stop a run that makes no progress for this long
  std::uint32_t trace_capacity = 0;     // events per worker segment; 0 = sized from the task count
  std::string variant = "paper";        // task-queue on CUDA: "paper" or "modern"
  std::uint32_t chunk = 0;              // chunked: tasks per launch; 0 = workers
  std::uint32_t claim = 8;              // task-queue modern on CUDA: tasks a block claims per fetch-and-add

  // Policies that run spawned tasks (work-stealing, static-list, blocking-queue).
  std::uint32_t spawn_capacity = 2048;     // children one task may spawn (a worker's spawn buffer)
  // work-stealing (Grossman; ABP deques)
  std::uint32_t deque_capacity = 1024;     // tasks per worker deque
  std::string victim = "random";           // steal victim choice: "random" or "round-robin"
  std::string deque_overflow = "spill";    // a full deque: "spill" to the overflow queue, or "fail"
  std::uint32_t overflow_capacity = 1u << 16;  // tasks the shared overflow queue holds
  std::uint32_t sharing_capacity = 4096;   // tasks the host-written work-sharing queue holds
  // static-list (Cederman-Tsigas via Mohan & Gopalan)
  std::uint32_t list_capacity = 1u << 23;  // task slots per array (one generation's children)
  // blocking-queue (Mohan & Gopalan)
  std::uint32_t blocking_capacity = 1u << 22;  // tasks the global locked queue holds
};

const std::vector<ParamSpec>& policy_param_specs();

}  // namespace gpulb
