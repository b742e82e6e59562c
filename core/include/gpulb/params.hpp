// Typed parameters of scenarios and policies: their specs (name, help, default, range) and the
// lookups that check a value against its spec. `gpulb list`, --param and the viewer read the specs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpulb {

using ParamMap = std::map<std::string, std::string>;

// A tunable of a scenario or a policy.
struct ParamSpec {
  std::string name;
  std::string description;
  std::string default_value;
  std::string range;  // human-readable: "1..1000000", "P0|P1|P2|P3|P4"
  // Integer bounds where the parameter is an integer (checked by int_param).
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::vector<std::string> choices;  // non-empty for enumerations
};

// Look up `spec.name` in `params` (its default where absent) and check it against the spec;
// ConfigError names the parameter and its range.
std::int64_t int_param(const ParamMap& params, const ParamSpec& spec);
std::string choice_param(const ParamMap& params, const ParamSpec& spec);
// A decimal number in [lo, hi] (spec.range says so to the user).
double real_param(const ParamMap& params, const ParamSpec& spec, double lo, double hi);
const ParamSpec& find_spec(const std::vector<ParamSpec>& specs, const std::string& name);

}  // namespace gpulb
