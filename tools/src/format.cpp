#include "gpulb/tools/format.hpp"

#include <cstdio>

namespace gpulb::tools {

std::string format_ns(double ns) {
  char buf[32];
  if (ns < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (ns < 1e6)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (ns < 1e9)
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

std::string format_rate(double per_s) {
  char buf[32];
  if (per_s >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f G/s", per_s / 1e9);
  else if (per_s >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f M/s", per_s / 1e6);
  else if (per_s >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f k/s", per_s / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f /s", per_s);
  return buf;
}

std::string format_percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

}  // namespace gpulb::tools
