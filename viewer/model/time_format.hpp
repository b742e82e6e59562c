// Times as people type and read them: "1.5ms", "250us", "3s", "1200" (ns).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpulb/tracing/time_text.hpp"

namespace gpulb::viewer {

// The parsing lives in tracing/ (time_text.hpp), shared with the command line.
using trace::parse_time_ns;
using trace::parse_time_span;
using trace::TimeSpan;

// "812 ns", "3.42 us", "1.20 ms", "2.50 s".
std::string format_time(double ns);

}  // namespace gpulb::viewer
