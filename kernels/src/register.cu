#include "gpulb/cuda/devices.hpp"
#include "gpulb/kernels/register.hpp"

namespace gpulb::kernels {

ExecOutput execute_patterns(ScenarioInstance&, const ExecPlan&);
ExecOutput execute_uts(ScenarioInstance&, const ExecPlan&);
ExecOutput execute_nqueens(ScenarioInstance&, const ExecPlan&);
ExecOutput execute_connect4(ScenarioInstance&, const ExecPlan&);

void register_cuda_backend(Registry& registry) {
  registry.set_cuda_device_lister(&cuda::list_devices);
  registry.set_cuda_executor("patterns", &execute_patterns);
  registry.set_cuda_executor("uts", &execute_uts);
  registry.set_cuda_executor("nqueens", &execute_nqueens);
  registry.set_cuda_executor("connect4", &execute_connect4);
}

}  // namespace gpulb::kernels
