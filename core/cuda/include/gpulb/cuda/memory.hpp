// Owning buffers for the CUDA backend: device memory and mapped pinned host memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "gpulb/cuda/check.hpp"
#include "gpulb/cuda/device_health.hpp"

namespace gpulb::cuda {

// cudaMalloc'd memory on the current device, zeroed.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n == 0) return;
    GPULB_CUDA_TRY(cudaMalloc(&p_, n * sizeof(T)));
    // Zero before returning: a plain cudaMemset is queued on the legacy stream, which does not
    // order against our non-blocking kernel streams, so it could land while a kernel runs.
    GPULB_CUDA_TRY(cudaMemsetAsync(p_, 0, n * sizeof(T), cudaStreamLegacy));
    GPULB_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  // After an abandoned kernel cudaFree would wait for it forever: the memory is left to the
  // process's exit (device_health.hpp).
  ~DeviceBuffer() {
    if (p_ && !kernel_abandoned()) cudaFree(p_);
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const T* src, std::size_t n) {
    GPULB_CUDA_TRY(cudaMemcpy(p_, src, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void download(T* dst, std::size_t n) const {
    GPULB_CUDA_TRY(cudaMemcpy(dst, p_, n * sizeof(T), cudaMemcpyDeviceToHost));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Pinned host memory mapped into the device's address space (cudaHostAllocMapped), zeroed:
// the host and the kernel read and write the same words while the kernel runs.
template <class T>
class MappedBuffer {
 public:
  MappedBuffer() = default;
  explicit MappedBuffer(std::size_t n) : n_(n) {
    if (n == 0) return;
    GPULB_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&host_), n * sizeof(T),
                                 cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(static_cast<void*>(host_), 0, n * sizeof(T));
    GPULB_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
  }
  MappedBuffer(MappedBuffer&& o) noexcept
      : host_(std::exchange(o.host_, nullptr)),
        device_(std::exchange(o.device_, nullptr)),
        n_(std::exchange(o.n_, 0)) {}
  MappedBuffer& operator=(MappedBuffer&& o) noexcept {
    std::swap(host_, o.host_);
    std::swap(device_, o.device_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~MappedBuffer() {
    if (host_ && !kernel_abandoned()) cudaFreeHost(host_);  // as ~DeviceBuffer
  }
  T* host() const { return host_; }
  T* device() const { return device_; }
  std::size_t size() const { return n_; }

 private:
  T* host_ = nullptr;
  T* device_ = nullptr;
  std::size_t n_ = 0;
};

// RAII for a stream and an event.
class Stream {
 public:
  Stream() { GPULB_CUDA_TRY(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(s_); }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { GPULB_CUDA_TRY(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(e_); }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace gpulb::cuda
