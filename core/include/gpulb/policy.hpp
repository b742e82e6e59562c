// A policy (how tasks reach workers) as the runtime knows it: one descriptor a policy, found in
// the registry's policy table; each backend registers a driver for the policies it implements
// (core/cpu/include/gpulb/cpu/drivers.hpp, kernels/include/gpulb/kernels/drivers.cuh). Nothing
// switches on a policy: `gpulb list`, --param parsing, the viewer and the docs read descriptors.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "gpulb/backend.hpp"
#include "gpulb/params.hpp"
#include "gpulb/policy_choices.hpp"

namespace gpulb {

// Options every policy takes, read by the backends' runtimes (ExecPlan::run_options).
struct RunOptions {
  std::uint32_t watchdog_ms = 10000;  // stop a run that makes no progress for this long
  // 16-byte events per worker segment; 0 = sized from the task count
  std::uint32_t trace_capacity = 0;
  // cpu: the most short tasks one clock read covers; 1 times each task; 0 the policy's
  std::uint32_t trace_batch = 0;
};

// The option the spawning policies share. Their options structs derive from it, so that the code
// they share (a backend's spawn buffers) reads it through ExecPlan::spawn_options() without
// knowing which policy runs.
struct SpawnOptions {
  std::uint32_t spawn_capacity = 2048;  // children one task may spawn
};

// One option of an options struct T: its spec (as --param and `gpulb list` show it) and how it
// sets its field of a T from a ParamMap. Made by number_option, decimal_option or choice_option,
// which read the default from a default-constructed T, so that a default is written once: in T.
template <class T>
struct Option {
  ParamSpec spec;
  std::function<void(T&, const ParamMap&)> read;

  Option(ParamSpec s, std::function<void(T&, const ParamMap&)> r)
      : spec(std::move(s)), read(std::move(r)) {}
  // An option of a base of T (SpawnOptions, RequestTransferOptions) is an option of T.
  template <class Base, std::enable_if_t<std::is_base_of_v<Base, T> && !std::is_same_v<Base, T>,
                                         int> = 0>
  Option(Option<Base> o)  // NOLINT(google-explicit-constructor): a descriptor's list mixes them
      : spec(std::move(o.spec)),
        read([r = std::move(o.read)](T& t, const ParamMap& params) { r(t, params); }) {}
};

namespace detail {
std::string bounds_text(std::int64_t min, std::int64_t max);  // "min..max"
std::string decimal_text(double value);
}  // namespace detail

// An integer option in [min, max].
template <class T>
Option<T> number_option(std::string name, std::string description, std::uint32_t T::*field,
                        std::uint32_t min, std::uint32_t max) {
  ParamSpec spec{std::move(name),
                 std::move(description),
                 std::to_string(T{}.*field),
                 detail::bounds_text(min, max),
                 min,
                 max,
                 {}};
  return {spec, [spec, field](T& o, const ParamMap& params) {
            o.*field = static_cast<std::uint32_t>(int_param(params, spec));
          }};
}

// A decimal option in [min, max].
template <class T>
Option<T> decimal_option(std::string name, std::string description, double T::*field,
                         std::int64_t min, std::int64_t max) {
  ParamSpec spec{std::move(name),
                 std::move(description),
                 detail::decimal_text(T{}.*field),
                 detail::bounds_text(min, max),
                 min,
                 max,
                 {}};
  return {spec, [spec, field](T& o, const ParamMap& params) {
            o.*field = real_param(params, spec, static_cast<double>(spec.min),
                                  static_cast<double>(spec.max));
          }};
}

// A choice among `offered` (every value of E where empty), named as Choices<E> names them.
template <class E, class T>
Option<T> choice_option(std::string name, std::string description, E T::*field,
                        std::vector<E> offered = {}) {
  if (offered.empty()) {
    for (std::size_t i = 0; i < Choices<E>::names.size(); ++i) offered.push_back(static_cast<E>(i));
  }
  ParamSpec spec{std::move(name), std::move(description), choice_text(T{}.*field), "", 0, 0, {}};
  for (E e : offered) {
    if (!spec.range.empty()) spec.range += '|';
    spec.range += choice_name(e);
    spec.choices.push_back(choice_text(e));
  }
  return {spec, [spec, field](T& o, const ParamMap& params) {
            o.*field = *choice_named<E>(choice_param(params, spec));
          }};
}

// A T with every option read from `params` (its default where absent); ConfigError for a bad
// value. Keys no option names are the caller's business.
template <class T>
T read_options(const std::vector<Option<T>>& options, const ParamMap& params) {
  T o{};
  for (const Option<T>& option : options) option.read(o, params);
  return o;
}

// Says, naming both types, that a plan's options are not of the type a driver reads.
[[noreturn]] void throw_options_mismatch(std::type_index held, std::type_index asked);

// A policy's options struct, whatever its type (ExecPlan::options): filled by the descriptor's
// PolicyOptionSet, read by the policy's drivers with get<T>(), which checks the type. Empty (a
// plan built by hand, or a policy with no options of its own) reads as a default T.
class PolicyOptionsValue {
 public:
  PolicyOptionsValue() = default;
  template <class T,
            std::enable_if_t<!std::is_same_v<std::decay_t<T>, PolicyOptionsValue>, int> = 0>
  explicit PolicyOptionsValue(T value)
      : value_(std::make_shared<T>(std::move(value))), type_(typeid(T)), spawn_(&spawn_part<T>) {}

  bool empty() const { return value_ == nullptr; }
  std::type_index type() const { return type_; }

  template <class T>
  const T& get() const {
    if (value_ == nullptr) {
      static const T defaults{};
      return defaults;
    }
    if (type_ != std::type_index(typeid(T))) throw_options_mismatch(type_, typeid(T));
    return *static_cast<const T*>(value_.get());
  }
  // This value's own T to change (a copy where another plan shares it; a default T where empty).
  template <class T>
  T& edit() {
    if (value_ == nullptr) {
      *this = PolicyOptionsValue(T{});
    } else if (value_.use_count() > 1) {
      *this = PolicyOptionsValue(get<T>());
    }
    return const_cast<T&>(get<T>());
  }
  // The spawning policies' shared option; logic_error where the struct has none.
  const SpawnOptions& spawn() const;

 private:
  template <class T>
  static const SpawnOptions* spawn_part(const void* value) {
    if constexpr (std::is_base_of_v<SpawnOptions, T>) {
      return static_cast<const T*>(value);
    } else {
      return nullptr;
    }
  }

  std::shared_ptr<void> value_;
  std::type_index type_ = typeid(void);
  const SpawnOptions* (*spawn_)(const void*) = nullptr;
};

// The options a policy declares (PolicyDescriptor::options): their specs, and how to fill the
// policy's struct from a ParamMap. Default-constructed: a policy with no options of its own.
class PolicyOptionSet {
 public:
  using Parse = std::function<PolicyOptionsValue(const ParamMap&)>;
  PolicyOptionSet() = default;
  PolicyOptionSet(std::vector<ParamSpec> specs, Parse parse)
      : specs_(std::move(specs)), parse_(std::move(parse)) {}

  const std::vector<ParamSpec>& specs() const { return specs_; }
  PolicyOptionsValue parse(const ParamMap& params) const {
    return parse_ ? parse_(params) : PolicyOptionsValue{};
  }

 private:
  std::vector<ParamSpec> specs_;
  Parse parse_;
};

// A policy's options, each an option of T: `options_for<WorkStealingOptions>({...})`.
template <class T>
PolicyOptionSet options_for(std::vector<Option<T>> options) {
  std::vector<ParamSpec> specs;
  for (const Option<T>& o : options) specs.push_back(o.spec);
  return {std::move(specs), [options = std::move(options)](const ParamMap& params) {
            return PolicyOptionsValue(read_options(options, params));
          }};
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
  PolicyOptionSet options;  // its own (options_for); every policy also takes common_options()
};

// Options every policy takes (watchdog_ms, trace_capacity, trace_batch).
const std::vector<Option<RunOptions>>& common_options();
// The option the spawning policies share (spawn_capacity), for their options_for lists.
Option<SpawnOptions> spawn_capacity_option();

// The specs of the options `desc` accepts, common ones first.
std::vector<const ParamSpec*> options_of(const PolicyDescriptor& desc);
// Reads the options every policy takes, and those of `desc`, from `params` (defaults for the
// missing ones); ConfigError for a bad value. Keys they do not know are the caller's business.
RunOptions parse_run_options(const ParamMap& params);
PolicyOptionsValue parse_policy_options(const PolicyDescriptor& desc, const ParamMap& params);

}  // namespace gpulb
