#include "gpulb/registry.hpp"

namespace gpulb {

void Registry::add(std::unique_ptr<Scenario> scenario) {
  const std::string name = scenario->name();
  scenarios_[name] = std::move(scenario);
}

const Scenario* Registry::find(const std::string& name) const {
  auto it = scenarios_.find(name);
  return it == scenarios_.end() ? nullptr : it->second.get();
}

const Scenario& Registry::get(const std::string& name) const {
  if (const Scenario* s = find(name)) return *s;
  std::string known;
  for (const auto& [n, s] : scenarios_) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("unknown scenario '" + name + "' (scenarios: " + known + ")");
}

std::vector<const Scenario*> Registry::scenarios() const {
  std::vector<const Scenario*> out;
  for (const auto& [n, s] : scenarios_) out.push_back(s.get());
  return out;
}

void Registry::set_cuda_executor(const std::string& scenario, CudaExecutor executor) {
  cuda_executors_[scenario] = executor;
}

CudaExecutor Registry::cuda_executor(const std::string& scenario) const {
  auto it = cuda_executors_.find(scenario);
  return it == cuda_executors_.end() ? nullptr : it->second;
}

std::vector<trace::Device> Registry::cuda_devices() const {
  return cuda_devices_ ? cuda_devices_() : std::vector<trace::Device>{};
}

}  // namespace gpulb
