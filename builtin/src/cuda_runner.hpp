// The CUDA backend's runner of a scenario instance, declared for the host compiler:
// cuda_scenarios.cu instantiates it (kernels::run_workload) for every scenario of the list.
#pragma once

#include "gpulb/exec_plan.hpp"

namespace gpulb::builtin {

template <class Instance>
ExecOutput run_on_cuda(Instance& instance, const ExecPlan& plan);

}  // namespace gpulb::builtin
