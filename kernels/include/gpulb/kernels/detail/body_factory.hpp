// The task body of each GPU comes from a factory the caller passes to kernels::execute:
//   make_body(gpu_slot, workers) -> Body   (or make_body(gpu_slot) where the workers do not matter)
// A control thread calls it once its grid is sized, with that GPU current, so a body can point at
// per-worker arrays in that GPU's memory. Control threads of several GPUs call it one at a time.
#pragma once

#include <concepts>
#include <cstdint>
#include <mutex>
#include <type_traits>

namespace gpulb::kernels::detail {

template <class MakeBody>
class BodyFactory {
 public:
  explicit BodyFactory(MakeBody& make) : make_(make) {}

  auto operator()(std::uint32_t gpu_slot, std::uint32_t workers) {
    std::lock_guard<std::mutex> lock(mutex_);
    if constexpr (std::invocable<MakeBody&, std::uint32_t, std::uint32_t>) {
      return make_(gpu_slot, workers);
    } else {
      return make_(gpu_slot);
    }
  }

 private:
  MakeBody& make_;
  std::mutex mutex_;
};

template <class Factory>
using body_of = std::decay_t<decltype(std::declval<Factory&>()(std::uint32_t{0}, std::uint32_t{0}))>;

}  // namespace gpulb::kernels::detail
