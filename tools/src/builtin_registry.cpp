#include "gpulb/tools/builtin_registry.hpp"

#include "gpulb/scenarios/builtin.hpp"
#ifdef GPULB_HAVE_CUDA_BACKEND
#include "gpulb/kernels/register.hpp"
#endif

namespace gpulb::tools {

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    scenarios::register_builtin(r);
#ifdef GPULB_HAVE_CUDA_BACKEND
    kernels::register_cuda_backend(r);
#endif
    return r;
  }();
  return registry;
}

}  // namespace gpulb::tools
