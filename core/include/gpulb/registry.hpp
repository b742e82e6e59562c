// The registry: scenarios by name, and the CUDA backend where one was built.
// The scenarios library fills it (gpulb::scenarios::register_builtin), the kernels library adds the
// CUDA executors; the CLI, the viewer and the tests ask it. Core itself knows no scenario by name.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/scenario.hpp"

namespace gpulb {

// Runs one scenario instance on the CUDA backend (the kernels library provides one per scenario).
using CudaExecutor = ExecOutput (*)(ScenarioInstance& instance, const ExecPlan& plan);
// Lists the GPUs present (empty where none or no driver).
using CudaDeviceLister = std::vector<trace::Device> (*)();

class Registry {
 public:
  void add(std::unique_ptr<Scenario> scenario);
  const Scenario* find(const std::string& name) const;
  // Throws ConfigError listing the scenarios there are.
  const Scenario& get(const std::string& name) const;
  std::vector<const Scenario*> scenarios() const;

  void set_cuda_executor(const std::string& scenario, CudaExecutor executor);
  CudaExecutor cuda_executor(const std::string& scenario) const;
  void set_cuda_device_lister(CudaDeviceLister lister) { cuda_devices_ = lister; }
  // Empty without a CUDA build or without a GPU.
  std::vector<trace::Device> cuda_devices() const;
  bool cuda_built() const { return cuda_devices_ != nullptr; }

 private:
  std::map<std::string, std::unique_ptr<Scenario>> scenarios_;
  std::map<std::string, CudaExecutor> cuda_executors_;
  CudaDeviceLister cuda_devices_ = nullptr;
};

}  // namespace gpulb
