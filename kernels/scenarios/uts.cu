// `uts` on the CUDA backend: one UtsBody over per-block counts, sized to the persistent grid.
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/spawning_execute.cuh"
#include "scenarios/uts/uts.hpp"

namespace gpulb::kernels {

ExecOutput execute_uts(ScenarioInstance& base, const ExecPlan& plan) {
  auto& instance = dynamic_cast<scenarios::uts::UtsInstance&>(base);
  require_spawning_policy(plan, "uts");
  ExecPlan p = plan;
  p.expected_tasks = instance.expected_tasks();
  cuda::DeviceBuffer<scenarios::uts::UtsCounts> counts;
  std::uint32_t workers = 0;
  ExecOutput out = execute_spawning(p, [&](std::uint32_t, std::uint32_t w) {
    counts = cuda::DeviceBuffer<scenarios::uts::UtsCounts>(w);
    workers = w;
    return scenarios::uts::UtsBody{instance.params(), counts.get()};
  });
  instance.counts().assign(workers, scenarios::uts::UtsCounts{});
  counts.download(instance.counts().data(), workers);
  instance.set_last_run(out);
  return out;
}

}  // namespace gpulb::kernels
