// Tests name a policy by its descriptor (gpulb/policies/*.hpp), the same object the registry lists.
#pragma once

#include "gpulb/policies/blocking_queue.hpp"
#include "gpulb/policies/chunked.hpp"
#include "gpulb/policies/hardware.hpp"
#include "gpulb/policies/static_list.hpp"
#include "gpulb/policies/task_queue.hpp"
#include "gpulb/policies/work_stealing.hpp"

namespace gpulb {
using Policy = const PolicyDescriptor*;
}  // namespace gpulb
