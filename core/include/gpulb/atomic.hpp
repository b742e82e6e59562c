// One atomic vocabulary for code that runs on the device and on host threads.
//
// Where the CUDA toolkit's libcu++ is available (nvcc, or a host compiler given its include path
// and GPULB_HAVE_LIBCUDACXX) we use cuda::atomic_ref with an explicit thread scope; elsewhere
// std::atomic_ref. Queue and deque code names the scope it needs:
//   device_atomic_ref: all blocks of one GPU (or all worker threads of the CPU backend);
//   system_atomic_ref: the GPU and host threads (mapped pinned memory).
#pragma once

#include <type_traits>

#include "gpulb/hd.hpp"

#if defined(__CUDACC__) || defined(GPULB_HAVE_LIBCUDACXX)
#include <cuda/atomic>
namespace gpulb {
template <class T>
using device_atomic_ref = ::cuda::atomic_ref<T, ::cuda::thread_scope_device>;
template <class T>
using system_atomic_ref = ::cuda::atomic_ref<T, ::cuda::thread_scope_system>;
namespace mo {
inline constexpr auto relaxed = ::cuda::std::memory_order_relaxed;
inline constexpr auto acquire = ::cuda::std::memory_order_acquire;
inline constexpr auto release = ::cuda::std::memory_order_release;
inline constexpr auto acq_rel = ::cuda::std::memory_order_acq_rel;
inline constexpr auto seq_cst = ::cuda::std::memory_order_seq_cst;
}  // namespace mo
GPULB_HD inline void thread_fence_system() {
  ::cuda::std::atomic_thread_fence(::cuda::std::memory_order_seq_cst);
}
}  // namespace gpulb
#else
#include <atomic>
namespace gpulb {
template <class T>
using device_atomic_ref = std::atomic_ref<T>;
template <class T>
using system_atomic_ref = std::atomic_ref<T>;
namespace mo {
inline constexpr auto relaxed = std::memory_order_relaxed;
inline constexpr auto acquire = std::memory_order_acquire;
inline constexpr auto release = std::memory_order_release;
inline constexpr auto acq_rel = std::memory_order_acq_rel;
inline constexpr auto seq_cst = std::memory_order_seq_cst;
}  // namespace mo
inline void thread_fence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
}  // namespace gpulb
#endif

namespace gpulb {
// Keeps each hot counter on its own 128-byte line (a GPU L2 sector group; two x86 cache lines).
inline constexpr unsigned kHotLine = 128;

// For code written once for both scopes: the work-stealing deques are touched by the blocks of one
// GPU (Device) or, in a run across GPUs, by blocks of several GPUs over peer memory (System: every
// party must then use system scope, PTX morally-strong rule). On the CPU backend both are the same.
enum class Scope : unsigned char { Device, System };
template <Scope S, class T>
using scoped_atomic_ref =
    std::conditional_t<S == Scope::Device, device_atomic_ref<T>, system_atomic_ref<T>>;
}  // namespace gpulb
