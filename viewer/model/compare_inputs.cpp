#include "compare_inputs.hpp"

#include "display_text.hpp"

namespace gpulb::viewer {
namespace {

std::string param_text(const trace::RunMetadata& m, const std::string& key) {
  const auto it = m.parameters.find(key);
  return it == m.parameters.end() ? key + " unset"
                                  : display_label(key) + "=" + display_label(it->second);
}

}  // namespace

InputMatch compare_inputs(const trace::RunMetadata& a, const trace::RunMetadata& b,
                          const IsInputParam& is_input) {
  if (a.scenario != b.scenario)
    return {false, display_label(a.scenario) + " against " + display_label(b.scenario)};
  auto input = [&](const std::string& key) {
    if (is_input) return is_input(a.scenario, key);
    return key != "block_size" && a.parameters.contains(key) && b.parameters.contains(key);
  };
  for (const auto* m : {&a, &b}) {
    for (const auto& [key, value] : m->parameters) {
      if (!input(key)) continue;
      const auto ia = a.parameters.find(key), ib = b.parameters.find(key);
      if (ia == a.parameters.end() || ib == b.parameters.end() || ia->second != ib->second) {
        return {false, param_text(a, key) + " against " + param_text(b, key)};
      }
    }
  }
  return {true, ""};
}

}  // namespace gpulb::viewer
