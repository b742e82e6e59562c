#include "gpulb/cuda/check.hpp"
#include "gpulb/kernels/request_kernels.cuh"

namespace gpulb::kernels {
namespace {

// One thread a word: word i of the copied items goes to word i % item_words of slot slots[i / item_words].
__global__ void scatter_items_kernel(const std::uint32_t* items, const std::uint32_t* slots,
                                     std::uint64_t words, std::uint32_t item_words,
                                     std::uint32_t* cache) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < words;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t item = i / item_words;
    cache[std::uint64_t{slots[item]} * item_words + i % item_words] = items[i];
  }
}

}  // namespace

void scatter_items(const std::uint32_t* items, const std::uint32_t* slots, std::uint64_t count,
                   std::uint32_t item_words, std::uint32_t* cache, cudaStream_t stream) {
  const std::uint64_t words = count * item_words;
  if (words == 0) return;
  const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>((words + 255) / 256, 4096));
  scatter_items_kernel<<<blocks, 256, 0, stream>>>(items, slots, words, item_words, cache);
  GPULB_CUDA_CHECK_LAUNCH();
}

}  // namespace gpulb::kernels
