// The CPU backend's policies: one driver a policy (policies/*.hpp), registered here, one line each.
#pragma once

#include "gpulb/cpu/policies/blocking_queue.hpp"
#include "gpulb/cpu/policies/combining.hpp"
#include "gpulb/cpu/policies/chunked.hpp"
#include "gpulb/cpu/policies/hardware.hpp"
#include "gpulb/cpu/policies/hybrid.hpp"
#include "gpulb/cpu/policies/static_list.hpp"
#include "gpulb/cpu/policies/task_queue.hpp"
#include "gpulb/cpu/policies/work_stealing.hpp"
#include "gpulb/driver_list.hpp"

namespace gpulb::cpu {

using Drivers = DriverList<  //
    TaskQueueDriver,         // Chen et al. Algorithms 2 and 3
    HardwareDriver,          // Chen et al. Solution 1
    ChunkedDriver,           // Chen et al. Solution 3
    WorkStealingDriver,      // Grossman / ABP
    StaticListDriver,        // Cederman & Tsigas via Mohan & Gopalan
    BlockingQueueDriver,     // Mohan & Gopalan
    CombiningDriver,         // Rengasamy & Vadhiyar (G-Charm), section 3.1-3.2
    HybridDriver>;           // Rengasamy & Vadhiyar (G-Charm), section 3.3

}  // namespace gpulb::cpu
