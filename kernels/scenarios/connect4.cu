// `connect4` on the CUDA backend: one Connect4Body over a node table in device memory (indexed by
// task id, id_capacity entries), copied back into the instance for verify().
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/spawning_execute.cuh"
#include "scenarios/connect4/connect4.hpp"

namespace gpulb::kernels {

ExecOutput execute_connect4(ScenarioInstance& base, const ExecPlan& plan) {
  namespace c4 = scenarios::connect4;
  auto& instance = dynamic_cast<c4::Connect4Instance&>(base);
  require_spawning_policy(plan, "connect4");
  ExecPlan p = plan;
  p.id_capacity = instance.id_capacity();
  p.spawn_id_base = c4::kRootId + 1;
  p.expected_tasks = instance.expected_tasks();
  const std::size_t n = instance.id_capacity();
  cuda::DeviceBuffer<c4::NodeRecord> nodes(n);  // zeroed: as the CPU executor's NodeRecord{} table
  ExecOutput out = execute_spawning(p, [&](std::uint32_t, std::uint32_t) { return instance.body(nodes.get()); });
  instance.nodes().assign(n, c4::NodeRecord{});
  nodes.download(instance.nodes().data(), n);
  instance.set_last_run(out);
  return out;
}

}  // namespace gpulb::kernels
