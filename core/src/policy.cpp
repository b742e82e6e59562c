#include "gpulb/policy.hpp"

#include <sstream>

#include "gpulb/errors.hpp"

namespace gpulb {

OptionSpec number_option(std::string name, std::string description,
                         std::uint32_t PolicyOptions::*field, std::uint32_t min,
                         std::uint32_t max) {
  return {{std::move(name),
           std::move(description),
           std::to_string(PolicyOptions{}.*field),
           std::to_string(min) + ".." + std::to_string(max),
           min,
           max,
           {}},
          field};
}

OptionSpec decimal_option(std::string name, std::string description, double PolicyOptions::*field,
                          std::int64_t min, std::int64_t max) {
  std::ostringstream value;
  value << PolicyOptions{}.*field;
  return {{std::move(name),
           std::move(description),
           value.str(),
           std::to_string(min) + ".." + std::to_string(max),
           min,
           max,
           {}},
          field};
}

const std::vector<OptionSpec>& common_options() {
  static const std::vector<OptionSpec> options = {
      number_option("watchdog_ms", "stop a run that makes no progress for this many ms",
                    &PolicyOptions::watchdog_ms, 10, 3600000),
      number_option("trace_capacity",
                    "trace events per worker (16 bytes each; on the cpu backend an untimed one "
                    "takes 8 or less); 0 sizes it from the task count",
                    &PolicyOptions::trace_capacity, 0, 1 << 26),
      number_option("trace_batch",
                    "cpu backend: the most short tasks one trace clock read covers (their times "
                    "are interpolated); 1 times every "
                    "task; 0 the policy's choice (4096; 1 under blocking-queue, whose lock waits "
                    "between tasks are its lesson)",
                    &PolicyOptions::trace_batch, 0, 4096),
  };
  return options;
}

const OptionSpec& spawn_capacity_option() {
  static const OptionSpec option = number_option(
      "spawn_capacity",
      "work-stealing, static-list, blocking-queue, task-queue (cpu): children one task may spawn",
      &PolicyOptions::spawn_capacity, 1, 1 << 20);
  return option;
}

std::vector<const OptionSpec*> options_of(const PolicyDescriptor& desc) {
  std::vector<const OptionSpec*> out;
  for (const OptionSpec& o : common_options()) out.push_back(&o);
  for (const OptionSpec& o : desc.options) out.push_back(&o);
  return out;
}

PolicyOptions parse_policy_options(const PolicyDescriptor& desc, const ParamMap& params) {
  PolicyOptions o;
  for (const OptionSpec* option : options_of(desc)) {
    if (auto* number = std::get_if<std::uint32_t PolicyOptions::*>(&option->field)) {
      o.** number = static_cast<std::uint32_t>(int_param(params, option->spec));
    } else if (auto* real = std::get_if<double PolicyOptions::*>(&option->field)) {
      o.** real = real_param(params, option->spec, static_cast<double>(option->spec.min),
                             static_cast<double>(option->spec.max));
    } else {
      std::get<ChoiceSetter>(option->field)(o, choice_param(params, option->spec));
    }
  }
  return o;
}

}  // namespace gpulb
