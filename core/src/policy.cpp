#include "gpulb/policy.hpp"

#include <sstream>
#include <stdexcept>

#include "gpulb/errors.hpp"

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>

#include <cstdlib>
#endif

namespace gpulb {

namespace {

// A type's name as its source writes it, where the compiler can say.
std::string type_name(std::type_index type) {
#if __has_include(<cxxabi.h>)
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  if (status == 0 && name != nullptr) {
    std::string out(name);
    std::free(name);  // NOLINT(cppcoreguidelines-no-malloc): __cxa_demangle's buffer
    return out;
  }
#endif
  return type.name();
}

}  // namespace

namespace detail {

std::string bounds_text(std::int64_t min, std::int64_t max) {
  return std::to_string(min) + ".." + std::to_string(max);
}

std::string decimal_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace detail

void throw_options_mismatch(std::type_index held, std::type_index asked) {
  throw std::logic_error("the plan's policy options are a " + type_name(held) + ", read as a " +
                         type_name(asked) + ": the plan's policy and its driver disagree");
}

const SpawnOptions& PolicyOptionsValue::spawn() const {
  if (value_ == nullptr) {
    static const SpawnOptions defaults{};
    return defaults;
  }
  const SpawnOptions* part = spawn_(value_.get());
  if (part == nullptr) {
    throw std::logic_error("the plan's policy options, a " + type_name(type_) +
                           ", have no SpawnOptions: its policy does not run spawned tasks");
  }
  return *part;
}

const std::vector<Option<RunOptions>>& common_options() {
  static const std::vector<Option<RunOptions>> options = {
      number_option("watchdog_ms", "stop a run that makes no progress for this many ms",
                    &RunOptions::watchdog_ms, 10, 3600000),
      number_option("trace_capacity",
                    "trace events per worker (16 bytes each; on the cpu backend an untimed one "
                    "takes 8 or less); 0 sizes it from the task count",
                    &RunOptions::trace_capacity, 0, 1 << 26),
      number_option("trace_batch",
                    "cpu backend: the most short tasks one trace clock read covers (their times "
                    "are interpolated); 1 times every "
                    "task; 0 the policy's choice (4096; 1 under blocking-queue, whose lock waits "
                    "between tasks are its lesson)",
                    &RunOptions::trace_batch, 0, 4096),
  };
  return options;
}

Option<SpawnOptions> spawn_capacity_option() {
  return number_option(
      "spawn_capacity",
      "work-stealing, static-list, blocking-queue, task-queue (cpu): children one task may spawn",
      &SpawnOptions::spawn_capacity, 1, 1 << 20);
}

std::vector<const ParamSpec*> options_of(const PolicyDescriptor& desc) {
  std::vector<const ParamSpec*> out;
  for (const Option<RunOptions>& o : common_options()) out.push_back(&o.spec);
  for (const ParamSpec& s : desc.options.specs()) out.push_back(&s);
  return out;
}

RunOptions parse_run_options(const ParamMap& params) {
  return read_options(common_options(), params);
}

PolicyOptionsValue parse_policy_options(const PolicyDescriptor& desc, const ParamMap& params) {
  return desc.options.parse(params);
}

}  // namespace gpulb
