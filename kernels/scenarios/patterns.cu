// `patterns` on the CUDA backend: one PatternsBody per GPU over that GPU's result arrays.
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/execute.cuh"
#include "scenarios/patterns/patterns.hpp"

namespace gpulb::kernels {

ExecOutput execute_patterns(ScenarioInstance& base, const ExecPlan& plan) {
  auto& instance = dynamic_cast<scenarios::patterns::PatternsInstance&>(base);
  const std::size_t n = instance.blocks();
  std::vector<cuda::DeviceBuffer<std::uint32_t>> run_count;
  std::vector<cuda::DeviceBuffer<std::uint64_t>> checksum;
  ExecOutput out = execute(plan, [&](std::uint32_t) {
    run_count.emplace_back(n);
    checksum.emplace_back(n);
    return scenarios::patterns::PatternsBody{run_count.back().get(), checksum.back().get(), instance.work()};
  });
  // Each block ran on one GPU: sum the counts, and take the checksum from whichever GPU ran it.
  std::fill(instance.run_count().begin(), instance.run_count().end(), 0);
  std::fill(instance.checksum().begin(), instance.checksum().end(), 0);
  std::vector<std::uint32_t> counts(n);
  std::vector<std::uint64_t> sums(n);
  for (std::size_t g = 0; g < run_count.size(); ++g) {
    run_count[g].download(counts.data(), n);
    checksum[g].download(sums.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      instance.run_count()[i] += counts[i];
      instance.checksum()[i] += sums[i];
    }
  }
  instance.set_block_size(plan.block_size);
  return out;
}

}  // namespace gpulb::kernels
