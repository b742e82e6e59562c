#include "gpulb/registry.hpp"

#include <algorithm>

namespace gpulb {

namespace {
template <class Range, class Name>
std::string join_names(const Range& range, Name name) {
  std::string out;
  for (const auto& item : range) out += (out.empty() ? "" : ", ") + std::string(name(item));
  return out;
}
}  // namespace

void Registry::add_entry(std::unique_ptr<ScenarioEntry> entry) {
  const std::string name = entry->scenario().name();
  auto at = std::find_if(scenarios_.begin(), scenarios_.end(),
                         [&](const auto& e) { return e->scenario().name() >= name; });
  if (at != scenarios_.end() && (*at)->scenario().name() == name) {
    *at = std::move(entry);  // a later registration replaces an earlier one
  } else {
    scenarios_.insert(at, std::move(entry));
  }
}

const Scenario* Registry::find(const std::string& name) const {
  for (const auto& e : scenarios_) {
    if (e->scenario().name() == name) return &e->scenario();
  }
  return nullptr;
}

const ScenarioEntry& Registry::entry(const std::string& name) const {
  for (const auto& e : scenarios_) {
    if (e->scenario().name() == name) return *e;
  }
  throw ConfigError("unknown scenario '" + name + "' (scenarios: " +
                    join_names(scenarios_, [](const auto& e) { return e->scenario().name(); }) +
                    ")");
}

const Scenario& Registry::get(const std::string& name) const { return entry(name).scenario(); }

std::vector<const Scenario*> Registry::scenarios() const {
  std::vector<const Scenario*> out;
  for (const auto& e : scenarios_) out.push_back(&e->scenario());
  return out;
}

void Registry::add_policy(const PolicyDescriptor& policy, Backend backend) {
  auto it = std::find_if(policies_.begin(), policies_.end(),
                         [&](const PolicyEntry& e) { return e.descriptor->name == policy.name; });
  if (it == policies_.end()) it = policies_.insert(policies_.end(), PolicyEntry{&policy, {}});
  it->backends[static_cast<std::size_t>(backend)] = true;
}

std::vector<const PolicyDescriptor*> Registry::policies() const {
  std::vector<const PolicyDescriptor*> out;
  for (const PolicyEntry& e : policies_) out.push_back(e.descriptor);
  return out;
}

const PolicyDescriptor* Registry::find_policy(const std::string& name) const {
  for (const PolicyEntry& e : policies_) {
    if (e.descriptor->name == name) return e.descriptor;
  }
  return nullptr;
}

const PolicyDescriptor& Registry::policy(const std::string& name) const {
  if (const PolicyDescriptor* p = find_policy(name)) return *p;
  throw ConfigError("unknown policy '" + name + "' (policies: " +
                    join_names(policies_, [](const PolicyEntry& e) { return e.descriptor->name; }) +
                    ")");
}

bool Registry::policy_runs_on(const PolicyDescriptor& policy, Backend backend) const {
  for (const PolicyEntry& e : policies_) {
    if (e.descriptor->name == policy.name) return e.backends[static_cast<std::size_t>(backend)];
  }
  return false;
}

void Registry::add_cpu_driver(const PolicyDescriptor& policy, AddedCpuDriver driver) {
  if (driver == nullptr)
    throw ConfigError("policy '" + std::string(policy.name) +
                      "': a CPU driver added without a function");
  if (find_policy(std::string(policy.name)) != nullptr) {
    throw ConfigError("policy '" + std::string(policy.name) +
                      "' is registered already; an added policy needs a name of its own");
  }
  add_policy(policy, Backend::Cpu);
  policies_.back().added_cpu = driver;
}

AddedCpuDriver Registry::added_cpu_driver(const PolicyDescriptor& policy) const {
  for (const PolicyEntry& e : policies_) {
    if (e.descriptor->name == policy.name) return e.added_cpu;
  }
  return nullptr;
}

std::vector<trace::Device> Registry::cuda_devices() const {
  return cuda_devices_ ? cuda_devices_() : std::vector<trace::Device>{};
}

}  // namespace gpulb
