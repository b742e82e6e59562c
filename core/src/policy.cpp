#include "gpulb/policy.hpp"

#include "gpulb/scenario.hpp"

namespace gpulb {

const std::vector<PolicyInfo>& all_policies() {
  static const std::vector<PolicyInfo> policies = {
      {Policy::Hardware, "hardware", "Chen et al. 2010, Solution 1",
       "one launch, one block per task; the hardware block scheduler balances"},
      {Policy::Chunked, "chunked", "Chen et al. 2010, Solution 3",
       "a host control thread launches one kernel per chunk whenever its GPU is free"},
      {Policy::StaticList, "static-list", "Mohan & Gopalan 2014 / Cederman & Tsigas",
       "a generation of tasks in an array, children appended by fetch-and-add, relaunch per generation"},
      {Policy::BlockingQueue, "blocking-queue", "Mohan & Gopalan 2014",
       "one global queue guarded by a CAS spin lock"},
      {Policy::TaskQueue, "task-queue", "Chen et al. 2010, Algorithms 2 and 3",
       "persistent workers; host-fed queues, wait-free fetch-and-add dequeue, HALT tasks"},
      {Policy::WorkStealing, "work-stealing", "Grossman; Arora-Blumofe-Plaxton in Mohan & Gopalan",
       "persistent workers with private deques, a host-written sharing queue, stealing"},
  };
  return policies;
}

std::string_view to_string(Policy p) {
  for (const PolicyInfo& info : all_policies()) {
    if (info.policy == p) return info.name;
  }
  return "unknown";
}

std::string_view to_string(Backend b) { return b == Backend::Cpu ? "cpu" : "cuda"; }

std::optional<Policy> parse_policy(std::string_view name) {
  for (const PolicyInfo& info : all_policies()) {
    if (info.name == name) return info.policy;
  }
  return std::nullopt;
}

std::optional<Backend> parse_backend(std::string_view name) {
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  return std::nullopt;
}

bool backend_supports(Backend backend, Policy policy) {
  switch (backend) {
    case Backend::Cpu:
      return policy == Policy::TaskQueue || policy == Policy::Hardware || policy == Policy::WorkStealing ||
             policy == Policy::StaticList || policy == Policy::BlockingQueue;
    case Backend::Cuda:
      return policy == Policy::TaskQueue || policy == Policy::Hardware || policy == Policy::Chunked ||
             policy == Policy::WorkStealing || policy == Policy::StaticList || policy == Policy::BlockingQueue;
  }
  return false;
}

const std::vector<ParamSpec>& policy_param_specs() {
  static const std::vector<ParamSpec> specs = {
      {"queues", "task-queue: queues per device", "2", "1..64", 1, 64, {}},
      {"queue_capacity", "task-queue: tasks per queue, the largest enqueue batch", "128", "1..1048576", 1, 1 << 20, {}},
      {"watchdog_ms", "stop a run that makes no progress for this many ms", "10000", "10..3600000", 10, 3600000, {}},
      {"trace_capacity", "trace events per worker; 0 sizes it from the task count", "0", "0..67108864", 0, 1 << 26, {}},
      {"variant", "task-queue on CUDA: the paper's scheme or the modern one", "paper", "paper|modern", 0, 0,
       {"paper", "modern"}},
      {"chunk", "chunked: tasks per kernel launch; 0 = one per worker", "0", "0..1073741824", 0, 1 << 30, {}},
      {"claim", "task-queue modern (CUDA): tasks a block claims with one fetch-and-add", "8", "1..32", 1, 32, {}},
      {"spawn_capacity", "work-stealing, static-list, blocking-queue: children one task may spawn", "2048",
       "1..1048576", 1, 1 << 20, {}},
      {"deque_capacity", "work-stealing: tasks per worker deque", "1024", "1..16777216", 1, 1 << 24, {}},
      {"victim", "work-stealing: how a thief picks its victim", "random", "random|round-robin", 0, 0,
       {"random", "round-robin"}},
      {"deque_overflow", "work-stealing: a full deque spills to the overflow queue, or fails the run", "spill",
       "spill|fail", 0, 0, {"spill", "fail"}},
      {"overflow_capacity", "work-stealing: tasks the overflow queue holds", "65536", "1..67108864", 1, 1 << 26, {}},
      {"sharing_capacity", "work-stealing: tasks the sharing queue holds (CUDA: and the host staging ring)", "4096", "1..16777216", 1,
       1 << 24, {}},
      {"list_capacity", "static-list: task slots per array (the most children one generation may create)",
       "8388608", "1..268435456", 1, 1 << 28, {}},
      {"blocking_capacity", "blocking-queue: tasks the global queue holds", "4194304", "1..268435456", 1, 1 << 28,
       {}},
  };
  return specs;
}

void parse_dynamic_task_options(const ParamMap& params, PolicyOptions& o) {
  const auto& ps = policy_param_specs();
  auto u32 = [&](const char* name) { return static_cast<std::uint32_t>(int_param(params, find_spec(ps, name))); };
  o.spawn_capacity = u32("spawn_capacity");
  o.deque_capacity = u32("deque_capacity");
  o.victim = choice_param(params, find_spec(ps, "victim"));
  o.deque_overflow = choice_param(params, find_spec(ps, "deque_overflow"));
  o.overflow_capacity = u32("overflow_capacity");
  o.sharing_capacity = u32("sharing_capacity");
  o.list_capacity = u32("list_capacity");
  o.blocking_capacity = u32("blocking_capacity");
}

}  // namespace gpulb
