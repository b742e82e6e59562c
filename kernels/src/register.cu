#include "gpulb/cuda/devices.hpp"
#include "gpulb/kernels/register.hpp"

namespace gpulb::kernels {

ExecOutput execute_patterns(ScenarioInstance&, const ExecPlan&);

void register_cuda_backend(Registry& registry) {
  registry.set_cuda_device_lister(&cuda::list_devices);
  registry.set_cuda_executor("patterns", &execute_patterns);
}

}  // namespace gpulb::kernels
