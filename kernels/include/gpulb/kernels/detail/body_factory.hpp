// The task body of each GPU comes from a factory the caller passes to kernels::execute:
//   make_body(gpu_slot, workers) -> Body   (or make_body(gpu_slot) where the workers do not matter)
// It is called once per GPU, with that GPU current and its worker count known (the grid sized from
// the occupancy API), so a body can point at per-worker arrays in that GPU's memory. Calls are one
// at a time on one thread: a run across GPUs makes every GPU's body before any of them launches
// (gpu_run.cuh's allocate step), the one-GPU run on its only thread.
//
// Where a kernel is instantiated on the body type, write the type as
//   using Body = std::decay_t<decltype(make_body(0u, 0u))>;
// not through a named alias or member typedef: nvcc's generated kernel stubs spell the type as it
// was written, and a spelling that names the caller's lambda does not compile there.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace gpulb::kernels::detail {

template <class MakeBody>
class BodyFactory {
  static auto call(MakeBody& make, std::uint32_t gpu_slot, std::uint32_t workers) {
    if constexpr (std::invocable<MakeBody&, std::uint32_t, std::uint32_t>) {
      return make(gpu_slot, workers);
    } else {
      return make(gpu_slot);
    }
  }

 public:
  explicit BodyFactory(MakeBody& make) : make_(make) {}

  auto operator()(std::uint32_t gpu_slot, std::uint32_t workers) {
    return call(make_, gpu_slot, workers);
  }

 private:
  MakeBody& make_;
};

}  // namespace gpulb::kernels::detail
