// `nqueens` on the CUDA backend: one NQueensBody over per-block counts, sized to the persistent grid.
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/spawning_execute.cuh"
#include "scenarios/nqueens/nqueens.hpp"

namespace gpulb::kernels {

ExecOutput execute_nqueens(ScenarioInstance& base, const ExecPlan& plan) {
  auto& instance = dynamic_cast<scenarios::nqueens::NQueensInstance&>(base);
  require_spawning_policy(plan, "nqueens");
  ExecPlan p = plan;
  p.expected_tasks = instance.expected_tasks();
  cuda::DeviceBuffer<scenarios::nqueens::NQueensCounts> counts;
  std::uint32_t workers = 0;
  ExecOutput out = execute_spawning(p, [&](std::uint32_t, std::uint32_t w) {
    counts = cuda::DeviceBuffer<scenarios::nqueens::NQueensCounts>(w);
    workers = w;
    return instance.body(counts.get());
  });
  instance.counts().assign(workers, scenarios::nqueens::NQueensCounts{});
  counts.download(instance.counts().data(), workers);
  instance.set_last_run(out);
  return out;
}

}  // namespace gpulb::kernels
