// What this process can still do with each GPU after a failure.
//
// Two failures outlive the run that met them:
//   - a *lost context*: a kernel trapped, read or wrote outside its memory, or hit another sticky
//     error. Every later CUDA call on that GPU in this process fails with the same error; a new
//     process starts clean (measured on an H100, docs/reliability.md).
//   - an *abandoned kernel*: the watchdog asked a kernel to stop and it did not (a task body that
//     never returns and never polls ctx.stop_requested()). cudaFree, cudaFreeHost and
//     cudaDeviceReset would wait for it forever, so from then on the buffers of gpulb::cuda leave
//     their memory to the process's exit (which does not wait for the kernel: measured).
// Later runs on such a GPU are refused with the reason instead of failing obscurely or hanging.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace gpulb::cuda {

// True for the errors that leave the GPU's context unusable for the rest of the process.
bool loses_context(cudaError_t err);

// Records that `device` cannot be used again by this process, and why.
void mark_context_lost(int device, const std::string& why);
void mark_kernel_abandoned(int device, const std::string& why);

// Why `device` cannot be used any more (empty while it can).
std::optional<std::string> unusable_reason(int device);

// Throws RunError naming the device and the reason when it cannot be used any more.
void check_usable(int device);

// Whether some kernel of this process was abandoned: buffers then skip their frees.
bool kernel_abandoned();

}  // namespace gpulb::cuda
