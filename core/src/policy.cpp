#include "gpulb/policy.hpp"

#include "gpulb/errors.hpp"

namespace gpulb {

const std::vector<OptionSpec>& common_options() {
  static const std::vector<OptionSpec> options = {
      {{"watchdog_ms", "stop a run that makes no progress for this many ms", "10000", "10..3600000", 10, 3600000, {}},
       &PolicyOptions::watchdog_ms},
      {{"trace_capacity", "trace events per worker (16 bytes each; on the cpu backend an untimed one takes 8 or less); 0 sizes it from the task count", "0", "0..67108864", 0, 1 << 26, {}},
       &PolicyOptions::trace_capacity},
      {{"trace_batch",
        "cpu backend: the most short tasks one trace clock read covers (their times are interpolated); 1 times every "
        "task; 0 the policy's choice (4096; 1 under blocking-queue, whose lock waits between tasks are its lesson)",
        "0", "0..4096", 0, 4096, {}},
       &PolicyOptions::trace_batch},
  };
  return options;
}

const OptionSpec& spawn_capacity_option() {
  static const OptionSpec option{
      {"spawn_capacity", "work-stealing, static-list, blocking-queue, task-queue (cpu): children one task may spawn", "2048", "1..1048576", 1,
       1 << 20, {}},
      &PolicyOptions::spawn_capacity};
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
      o.**number = static_cast<std::uint32_t>(int_param(params, option->spec));
    } else if (auto* real = std::get_if<double PolicyOptions::*>(&option->field)) {
      o.**real = real_param(params, option->spec, static_cast<double>(option->spec.min), static_cast<double>(option->spec.max));
    } else {
      o.*std::get<std::string PolicyOptions::*>(option->field) = choice_param(params, option->spec);
    }
  }
  return o;
}

}  // namespace gpulb
