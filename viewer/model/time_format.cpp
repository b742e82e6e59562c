#include "time_format.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpulb::viewer {

std::string format_time(double ns) {
  char buf[32];
  if (std::fabs(ns) < 0.5) ns = 0.0;  // no "-0 ns" at the origin of a ruler
  const double a = std::fabs(ns);
  if (a < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  } else if (a < 1e6) {
    std::snprintf(buf, sizeof buf, "%.3g us", ns / 1e3);
  } else if (a < 1e9) {
    std::snprintf(buf, sizeof buf, "%.3g ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g s", ns / 1e9);
  }
  return buf;
}

}  // namespace gpulb::viewer
