#include <charconv>
#include <cmath>

#include "gpulb/errors.hpp"
#include "gpulb/params.hpp"

namespace gpulb {

const ParamSpec& find_spec(const std::vector<ParamSpec>& specs, const std::string& name) {
  for (const ParamSpec& s : specs) {
    if (s.name == name) return s;
  }
  throw ConfigError("internal: no parameter spec named '" + name + "'");
}

namespace {
const std::string& value_or_default(const ParamMap& params, const ParamSpec& spec) {
  auto it = params.find(spec.name);
  return it == params.end() ? spec.default_value : it->second;
}
}  // namespace

std::int64_t int_param(const ParamMap& params, const ParamSpec& spec) {
  const std::string& text = value_or_default(params, spec);
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) {
    throw ConfigError("parameter '" + spec.name + "': '" + text + "' is not an integer (range " +
                      spec.range + ")");
  }
  if (value < spec.min || value > spec.max) {
    throw ConfigError("parameter '" + spec.name + "': " + text + " is out of range " + spec.range);
  }
  return value;
}

double real_param(const ParamMap& params, const ParamSpec& spec, double lo, double hi) {
  const std::string& text = value_or_default(params, spec);
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(value)) {
    throw ConfigError("parameter '" + spec.name + "': '" + text + "' is not a number (range " +
                      spec.range + ")");
  }
  if (value < lo || value > hi)
    throw ConfigError("parameter '" + spec.name + "': " + text + " is out of range " + spec.range);
  return value;
}

std::string choice_param(const ParamMap& params, const ParamSpec& spec) {
  const std::string& text = value_or_default(params, spec);
  for (const std::string& c : spec.choices) {
    if (c == text) return text;
  }
  throw ConfigError("parameter '" + spec.name + "': '" + text + "' is not one of " + spec.range);
}

}  // namespace gpulb
