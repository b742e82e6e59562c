// The composition root: the policies of every backend built here, and every shipped scenario
// bound to those backends (cpu::run_workload; kernels::run_workload through cuda_scenarios.cu).
#include "gpulb/builtin/registry.hpp"

#include "gpulb/cpu/drivers.hpp"
#include "gpulb/cpu/run_workload.hpp"
#include "scenario_list.hpp"
#ifdef GPULB_HAVE_CUDA_BACKEND
#include "cuda_runner.hpp"
#include "gpulb/kernels/register.hpp"
#endif

namespace gpulb::builtin {
namespace {

template <class Instance>
void add(Registry& registry, std::unique_ptr<ScenarioOf<Instance>> scenario) {
#ifdef GPULB_HAVE_CUDA_BACKEND
  const BackendRunner<Instance> cuda = &run_on_cuda<Instance>;
#else
  const BackendRunner<Instance> cuda = nullptr;
#endif
  registry.add_scenario(std::move(scenario), {&cpu::run_workload<Instance>, cuda});
}

}  // namespace

Registry make_registry() {
  Registry r;
  cpu::Drivers::register_policies(r, Backend::Cpu);
#ifdef GPULB_HAVE_CUDA_BACKEND
  kernels::register_cuda_backend(r);
#endif
#define GPULB_ADD_SCENARIO(Instance, make_scenario) add<Instance>(r, make_scenario());
  GPULB_BUILTIN_SCENARIOS(GPULB_ADD_SCENARIO)
#undef GPULB_ADD_SCENARIO
  return r;
}

const Registry& registry() {
  static const Registry registry = make_registry();
  return registry;
}

}  // namespace gpulb::builtin
