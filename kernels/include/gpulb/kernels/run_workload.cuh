// The CUDA backend's half of the scenario glue: one template that runs any Workload (a scenario
// instance, gpulb/scenario.hpp) on the GPUs. Each GPU's body writes its own zeroed record array
// in device memory; after the run the arrays come back to the host for the instance to collect.
// builtin/ instantiates it once per scenario.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "gpulb/cuda/devices.hpp"
#include "gpulb/cuda/memory.hpp"
#include "gpulb/kernels/execute.cuh"
#include "gpulb/rank_merge.hpp"

namespace gpulb::kernels {

template <class Instance>
ExecOutput run_workload(Instance& instance, const ExecPlan& plan) {
  using Record = typename Instance::Record;
  int count = 0;
  GPULB_CUDA_TRY(cudaGetDeviceCount(&count));
  // One slot per GPU present; the frame checks --gpus against the same count before any body.
  std::vector<cuda::DeviceBuffer<Record>> records(static_cast<std::size_t>(count));
  // The instance's read-only input, one copy a GPU, made before the GPU's run starts (untimed).
  const std::span<const std::byte> input = instance.input();
  std::vector<cuda::DeviceBuffer<std::byte>> inputs(static_cast<std::size_t>(count));
  ExecOutput out = execute(plan, [&](std::uint32_t gpu_slot, std::uint32_t workers) {
    records.at(gpu_slot) = cuda::DeviceBuffer<Record>(instance.record_count(workers));
    if (input.empty()) return instance.body(records[gpu_slot].get());
    inputs.at(gpu_slot) = cuda::DeviceBuffer<std::byte>(input.size());
    inputs[gpu_slot].upload(input.data(), input.size());
    return instance.body_on(records[gpu_slot].get(), inputs[gpu_slot].get());
  });
  std::vector<std::vector<Record>> per_device;
  for (const cuda::DeviceBuffer<Record>& device : records) {
    if (device.size() == 0) continue;  // a GPU the run did not use
    per_device.emplace_back(device.size());
    device.download(per_device.back().data(), device.size());
  }
  if (plan.distribution != nullptr) {
    // Rank 0 collects every rank's arrays (one a GPU) and the merged output, so that the
    // scenario's own verify() sees the whole run; the other ranks keep theirs.
    std::vector<std::vector<Record>> all = gather_record_arrays(*plan.distribution, per_device);
    out = merge_rank_outputs(*plan.distribution, std::move(out));
    if (plan.distribution->rank() == 0) per_device = std::move(all);
  }
  instance.collect(std::move(per_device), plan, out);
  return out;
}

}  // namespace gpulb::kernels
