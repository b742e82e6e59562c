// The registry: the policy table (descriptors, and the backends with a driver for each) and the
// scenarios, each bound to the backends that can run it. builtin/ fills it (the composition
// root); gpulb::run, the CLI, the viewer and the tests ask it. Core knows no scenario by name.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/backend.hpp"
#include "gpulb/policy.hpp"
#include "gpulb/scenario.hpp"

namespace gpulb {

// One instance of a scenario, ready to run on any backend registered for its scenario.
class BoundRun {
 public:
  virtual ~BoundRun() = default;
  virtual ScenarioInstance& instance() = 0;
  virtual ExecOutput execute(Backend backend, const ExecPlan& plan) = 0;
};

// A scenario and the backends that can run it.
class ScenarioEntry {
 public:
  virtual ~ScenarioEntry() = default;
  virtual const Scenario& scenario() const = 0;
  virtual bool runs_on(Backend backend) const = 0;
  // Validates `params` (ConfigError names the bad one) and makes an instance.
  virtual std::unique_ptr<BoundRun> bind(const ParamMap& params) const = 0;
};

// How a backend runs an instance of one type (cpu::run_workload, kernels::run_workload).
template <class Instance>
using BackendRunner = ExecOutput (*)(Instance&, const ExecPlan&);

// Lists the GPUs present (empty where none or no driver).
using CudaDeviceLister = std::vector<trace::Device> (*)();

class Registry {
 public:
  // Scenarios. `runners` holds a runner per Backend (index: the enum's value); nullptr where the
  // backend was not built.
  template <class Instance>
  void add_scenario(std::unique_ptr<ScenarioOf<Instance>> scenario,
                    std::array<BackendRunner<Instance>, 2> runners);
  const Scenario* find(const std::string& name) const;
  // Throws ConfigError listing the scenarios there are.
  const Scenario& get(const std::string& name) const;
  const ScenarioEntry& entry(const std::string& name) const;
  std::vector<const Scenario*> scenarios() const;

  // Policies: a backend registers each policy it has a driver for; the table keeps the order of
  // first registration.
  void add_policy(const PolicyDescriptor& policy, Backend backend);
  std::vector<const PolicyDescriptor*> policies() const;
  const PolicyDescriptor* find_policy(const std::string& name) const;
  // Throws ConfigError listing the policies there are.
  const PolicyDescriptor& policy(const std::string& name) const;
  bool policy_runs_on(const PolicyDescriptor& policy, Backend backend) const;
  // A CPU policy from outside the backend's compiled list (a program's own: cpu::add_policy, in
  // gpulb/cpu/add_policy.hpp). Its name must be new: ConfigError where a policy has it already.
  void add_cpu_driver(const PolicyDescriptor& policy, AddedCpuDriver driver);
  // The driver add_cpu_driver gave `policy`; null for a policy of a compiled list.
  AddedCpuDriver added_cpu_driver(const PolicyDescriptor& policy) const;

  void set_cuda_device_lister(CudaDeviceLister lister) { cuda_devices_ = lister; }
  // Empty without a CUDA build or without a GPU.
  std::vector<trace::Device> cuda_devices() const;
  bool cuda_built() const { return cuda_devices_ != nullptr; }

 private:
  struct PolicyEntry {
    const PolicyDescriptor* descriptor;
    std::array<bool, 2> backends{};
    AddedCpuDriver added_cpu = nullptr;
  };
  void add_entry(std::unique_ptr<ScenarioEntry> entry);

  std::vector<std::unique_ptr<ScenarioEntry>> scenarios_;  // sorted by name
  std::vector<PolicyEntry> policies_;
  CudaDeviceLister cuda_devices_ = nullptr;
};

// -------------------------------------------------------------------------------------------------
// The typed binding behind add_scenario: the instance keeps its type from instantiate() to the
// backend's runner, so no cast is needed anywhere.

namespace detail {

template <class Instance>
class TypedBoundRun final : public BoundRun {
 public:
  TypedBoundRun(std::unique_ptr<Instance> instance, std::array<BackendRunner<Instance>, 2> runners)
      : instance_(std::move(instance)), runners_(runners) {}
  ScenarioInstance& instance() override { return *instance_; }
  ExecOutput execute(Backend backend, const ExecPlan& plan) override {
    return runners_[static_cast<std::size_t>(backend)](*instance_, plan);
  }

 private:
  std::unique_ptr<Instance> instance_;
  std::array<BackendRunner<Instance>, 2> runners_;
};

template <class Instance>
class TypedScenarioEntry final : public ScenarioEntry {
 public:
  TypedScenarioEntry(std::unique_ptr<ScenarioOf<Instance>> scenario,
                     std::array<BackendRunner<Instance>, 2> runners)
      : scenario_(std::move(scenario)), runners_(runners) {}
  const Scenario& scenario() const override { return *scenario_; }
  bool runs_on(Backend backend) const override {
    return runners_[static_cast<std::size_t>(backend)] != nullptr;
  }
  std::unique_ptr<BoundRun> bind(const ParamMap& params) const override {
    return std::make_unique<TypedBoundRun<Instance>>(scenario_->instantiate(params), runners_);
  }

 private:
  std::unique_ptr<ScenarioOf<Instance>> scenario_;
  std::array<BackendRunner<Instance>, 2> runners_;
};

}  // namespace detail

template <class Instance>
void Registry::add_scenario(std::unique_ptr<ScenarioOf<Instance>> scenario,
                            std::array<BackendRunner<Instance>, 2> runners) {
  add_entry(std::make_unique<detail::TypedScenarioEntry<Instance>>(std::move(scenario), runners));
}

}  // namespace gpulb
