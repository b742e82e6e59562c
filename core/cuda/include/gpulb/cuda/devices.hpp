// The GPUs of this host, as the trace describes them.
#pragma once

#include <vector>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::cuda {

// Empty where there is no driver or no GPU (never throws).
std::vector<trace::Device> list_devices();

}  // namespace gpulb::cuda
