#include "gpulb/builtin/registry.hpp"

#include "gpulb/scenarios/builtin.hpp"
#ifdef GPULB_HAVE_CUDA_BACKEND
#include "gpulb/kernels/register.hpp"
#endif

namespace gpulb::builtin {

const Registry& registry() {
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

}  // namespace gpulb::builtin
