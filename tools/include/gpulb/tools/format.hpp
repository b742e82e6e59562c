// Human-readable figures for terminal output.
#pragma once

#include <cstdint>
#include <string>

namespace gpulb::tools {

std::string format_ns(double ns);       // "812 ns", "3.42 us", "1.20 ms", "2.5 s"
std::string format_rate(double per_s);  // "1.23 M/s"
std::string format_percent(double fraction);

}  // namespace gpulb::tools
