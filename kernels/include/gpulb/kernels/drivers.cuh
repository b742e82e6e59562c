// The CUDA backend's policies: one driver a policy (policies/*.cuh), registered here, one line each.
#pragma once

#include "gpulb/driver_list.hpp"
#include "gpulb/kernels/policies/blocking_queue.cuh"
#include "gpulb/kernels/policies/chunked.cuh"
#include "gpulb/kernels/policies/combining.cuh"
#include "gpulb/kernels/policies/hardware.cuh"
#include "gpulb/kernels/policies/hybrid.cuh"
#include "gpulb/kernels/policies/static_list.cuh"
#include "gpulb/kernels/policies/task_queue.cuh"
#include "gpulb/kernels/policies/work_stealing.cuh"

namespace gpulb::kernels {

using Drivers = DriverList<  //
    TaskQueueDriver,         // Chen et al. Algorithms 2 and 3, 1..N GPUs
    HardwareDriver,          // Chen et al. Solution 1, 1..N GPUs
    ChunkedDriver,           // Chen et al. Solution 3, 1..N GPUs
    WorkStealingDriver,      // Grossman / ABP, one GPU (--gpus N: N GPUs stealing from each other)
    StaticListDriver,  // Cederman & Tsigas via Mohan & Gopalan, one GPU (--gpus N: a generation split over N GPUs)
    BlockingQueueDriver,  // Mohan & Gopalan, one GPU
    CombiningDriver,      // Rengasamy & Vadhiyar (G-Charm) 3.1-3.2, one GPU
    HybridDriver>;        // Rengasamy & Vadhiyar (G-Charm) 3.3, CPU threads and one GPU

}  // namespace gpulb::kernels
