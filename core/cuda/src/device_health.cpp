#include "gpulb/cuda/device_health.hpp"

#include <atomic>
#include <map>
#include <mutex>

#include "gpulb/errors.hpp"

namespace gpulb::cuda {
namespace {

std::mutex health_mutex;
std::map<int, std::string>& unusable() {
  static std::map<int, std::string> reasons;
  return reasons;
}
std::atomic<bool> abandoned{false};

void mark(int device, const std::string& why) {
  std::lock_guard lock(health_mutex);
  unusable().emplace(device, why);  // the first reason is the one that explains the others
}

}  // namespace

bool loses_context(cudaError_t err) {
  // The errors the CUDA runtime documents as leaving the context in an inconsistent state
  // ("the process must be terminated and relaunched").
  switch (err) {
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable: return true;
    default: return false;
  }
}

void mark_context_lost(int device, const std::string& why) { mark(device, why); }

void mark_kernel_abandoned(int device, const std::string& why) {
  abandoned.store(true);
  mark(device, why);
}

std::optional<std::string> unusable_reason(int device) {
  std::lock_guard lock(health_mutex);
  const auto it = unusable().find(device);
  if (it == unusable().end()) return std::nullopt;
  return it->second;
}

void check_usable(int device) {
  if (const auto why = unusable_reason(device)) {
    throw RunError("GPU " + std::to_string(device) + " cannot be used again by this process (" +
                   *why + "); start a new process to use it");
  }
}

bool kernel_abandoned() { return abandoned.load(std::memory_order_relaxed); }

}  // namespace gpulb::cuda
