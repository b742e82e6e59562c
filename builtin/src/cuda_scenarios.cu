// Every shipped scenario's body, compiled for the CUDA backend (one template: run_workload.cuh).
#include "cuda_runner.hpp"
#include "gpulb/kernels/run_workload.cuh"
#include "scenario_list.hpp"

namespace gpulb::builtin {

template <class Instance>
ExecOutput run_on_cuda(Instance& instance, const ExecPlan& plan) {
  return kernels::run_workload(instance, plan);
}

#define GPULB_INSTANTIATE_CUDA(Instance, make_scenario) \
  template ExecOutput run_on_cuda<Instance>(Instance&, const ExecPlan&);
GPULB_BUILTIN_SCENARIOS(GPULB_INSTANTIATE_CUDA)

}  // namespace gpulb::builtin
