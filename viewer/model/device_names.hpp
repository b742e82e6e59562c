// How a device is named wherever the views list devices: with its index, since a 2-GPU trace holds
// two "NVIDIA H200" (the summary listed the same name twice).
#pragma once

#include <string>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::viewer {

// "GPU 1: NVIDIA H200 (2112 workers, 132 SMs)", "CPU (8 threads) (8 workers, 8 hw threads)".
std::string device_line(const trace::Device& d);

}  // namespace gpulb::viewer
