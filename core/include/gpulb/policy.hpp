// A policy (how tasks reach workers) as the runtime knows it: one descriptor a policy, found in
// the registry's policy table; each backend registers a driver for the policies it implements
// (core/cpu/include/gpulb/cpu/drivers.hpp, kernels/include/gpulb/kernels/drivers.cuh). Nothing
// switches on a policy: `gpulb list`, --param parsing, the viewer and the docs read descriptors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpulb/backend.hpp"
#include "gpulb/params.hpp"
#include "gpulb/policy_choices.hpp"

namespace gpulb {

// Every policy's options in one plain struct that both backends read. Which of them a policy
// accepts is its descriptor's business (PolicyDescriptor::options); each default here is the only
// one: the option's spec (--param, `gpulb list`) reads it from a default PolicyOptions.
struct PolicyOptions {
  std::uint32_t watchdog_ms = 10000;  // stop a run that makes no progress for this long
  // 16-byte events per worker segment; 0 = sized from the task count
  std::uint32_t trace_capacity = 0;
  // cpu: the most short tasks one clock read covers; 1 times each task; 0 the policy's
  std::uint32_t trace_batch = 0;
  std::uint32_t queues = 0;  // task-queue: queues per device; 0 = by variant (task_queue_shape)
  // task-queue: tasks per queue (one enqueue batch); 0 = by variant
  std::uint32_t queue_capacity = 0;
  // task-queue on CUDA: the paper's scheme or the modern one
  QueueVariant variant = QueueVariant::Modern;
  // task-queue modern on CUDA: batches by the copy engine or mapped loads
  QueueFeed feed = QueueFeed::Copy;
  // task-queue modern on CUDA: most tasks a block claims per fetch-and-add
  std::uint32_t claim = 8;
  std::uint32_t chunk = 0;                     // chunked: tasks per launch; 0 = workers
  std::uint32_t spawn_capacity = 2048;         // spawning policies: children one task may spawn
  std::uint32_t deque_capacity = 1024;         // work-stealing: tasks per worker deque
  VictimChoice victim = VictimChoice::Random;  // work-stealing: how a thief picks its victim
  // work-stealing: a full deque spills to the overflow queue, or fails
  DequeOverflow deque_overflow = DequeOverflow::Spill;
  // work-stealing: most tasks one steal takes (CUDA: task_per=lane only)
  std::uint32_t steal_chunk = 20;
  // work-stealing on CUDA: a task per block (Grossman) or per lane (a thread)
  TaskPer task_per = TaskPer::Block;
  // work-stealing on CUDA across GPUs: most tasks one steal from another GPU takes; 0 = by remote (request 4, steal 1)
  std::uint32_t remote_chunk = 0;
  // work-stealing on CUDA across GPUs: failed local passes in a row before a block tries another GPU
  std::uint32_t remote_after = 4;
  // work-stealing on CUDA across GPUs, remote=request: tasks a block runs between looks at its mailbox
  std::uint32_t remote_poll = 1;
  // work-stealing on CUDA across GPUs: its owner answers, or CAS the victim's deque
  RemoteMode remote = RemoteMode::Request;
  // work-stealing on CUDA across GPUs: peer memory (on), host memory (off) or auto
  PeerMemory peer = PeerMemory::Auto;
  // work-stealing: tasks the shared overflow queue holds
  std::uint32_t overflow_capacity = 1u << 16;
  // work-stealing: tasks the host-written sharing queue holds
  std::uint32_t sharing_capacity = 4096;
  // static-list: task slots an array starts with; 0 = sized by the run (static_list_sizing.hpp)
  std::uint32_t list_capacity = 0;
  // blocking-queue: tasks the global locked queue holds; 0 = sized by the run
  std::uint32_t blocking_capacity = 0;
  // combining: adaptive|static|eager; hybrid: adaptive|static
  RequestStrategy strategy = RequestStrategy::Adaptive;
  RequestTransfer transfer =
      RequestTransfer::Reuse;    // combining, hybrid (reuse: fastest on an H100)
  std::uint32_t static_k = 100;  // combining static: arrivals per launch (the paper's K)
  std::uint32_t max_size = 0;    // combining adaptive: requests a launch; 0 = resident blocks
  std::uint32_t cache_items = 1u << 21;  // combining, hybrid: data items the device cache holds
  std::uint32_t in_flight = 2;           // combining, hybrid: combined requests running at once
  std::uint32_t assembly_threads =
      1;                   // combining, hybrid: threads that assemble a large combined request
  double cpu_share = 0.5;  // hybrid static: the CPU's fraction of each batch's data items
};

// Sets a choice option's field from the name of one of its choices (checked against the spec's).
using ChoiceSetter = std::function<void(PolicyOptions&, std::string_view)>;

// One option: its spec (as --param and `gpulb list` show it) and the field it sets. Made by
// number_option, decimal_option or choice_option, which take the default from PolicyOptions.
struct OptionSpec {
  ParamSpec spec;
  // A decimal option's bounds are the spec's min and max.
  std::variant<std::uint32_t PolicyOptions::*, double PolicyOptions::*, ChoiceSetter> field;
};

// An integer option in [min, max]; its default is PolicyOptions' own.
OptionSpec number_option(std::string name, std::string description,
                         std::uint32_t PolicyOptions::*field, std::uint32_t min, std::uint32_t max);
// A decimal option in [min, max].
OptionSpec decimal_option(std::string name, std::string description, double PolicyOptions::*field,
                          std::int64_t min, std::int64_t max);
// A choice among `offered` (every value of E where empty), named as Choices<E> names them.
template <class E>
OptionSpec choice_option(std::string name, std::string description, E PolicyOptions::*field,
                         std::vector<E> offered = {}) {
  if (offered.empty()) {
    for (std::size_t i = 0; i < Choices<E>::names.size(); ++i) offered.push_back(static_cast<E>(i));
  }
  ParamSpec spec{
      std::move(name), std::move(description), choice_text(PolicyOptions{}.*field), "", 0, 0, {}};
  for (E e : offered) {
    if (!spec.range.empty()) spec.range += '|';
    spec.range += choice_name(e);
    spec.choices.push_back(choice_text(e));
  }
  ChoiceSetter set = [field](PolicyOptions& o, std::string_view value) {
    o.*field = *choice_named<E>(value);
  };
  return OptionSpec{std::move(spec), std::move(set)};
}

struct PolicyTraits {
  bool runs_spawned_tasks = false;  // task bodies may ctx.spawn children, on every backend
  bool cpu_runs_spawned_tasks =
      false;                  // ... on the CPU backend only (task-queue: its CUDA driver does not)
  bool host_fed = false;      // the host feeds tasks to running workers
  bool persistent = false;    // persistent workers, as opposed to a block per task
  bool host_inserts = false;  // accepts ExecPlan::host_feed (host inserts during the run)
  bool runs_requests =
      false;                 // runs a scenario's work requests (ExecPlan::requests), and only those
  bool distributed = false;  // its CPU driver balances across ranks (ExecPlan::distribution)
  bool gpu_distributed = false;  // ... and its CUDA driver too
};

// Whether `traits`' policy runs a spawning scenario on `backend`.
inline bool runs_spawned_tasks(const PolicyTraits& traits, Backend backend) {
  return traits.runs_spawned_tasks || (traits.cpu_runs_spawned_tasks && backend == Backend::Cpu);
}

struct PolicyDescriptor {
  std::string_view name;     // as --policy takes it
  std::string_view paper;    // the paper and section it comes from
  std::string_view summary;  // one line: how tasks reach workers
  PolicyTraits traits;
  std::vector<OptionSpec> options;  // its own options; every policy also takes common_options()
};

// Options every policy takes (watchdog_ms, trace_capacity, trace_batch).
const std::vector<OptionSpec>& common_options();
// The option the spawning policies share (spawn_capacity).
const OptionSpec& spawn_capacity_option();

// The options `desc` accepts, common ones first.
std::vector<const OptionSpec*> options_of(const PolicyDescriptor& desc);
// Reads the options `desc` accepts from `params` (defaults for the missing ones); ConfigError for
// a bad value. Keys it does not know are the caller's business.
PolicyOptions parse_policy_options(const PolicyDescriptor& desc, const ParamMap& params);

}  // namespace gpulb
