#include "time_format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpulb::viewer {

std::optional<double> parse_time_ns(std::string_view text) {
  const std::string s(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
  const std::string_view unit(end);
  if (unit.empty() || unit == "ns") return v;
  if (unit == "us") return v * 1e3;
  if (unit == "ms") return v * 1e6;
  if (unit == "s") return v * 1e9;
  return std::nullopt;
}

std::optional<TimeSpan> parse_time_span(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto a = parse_time_ns(text.substr(0, colon));
  const auto b = parse_time_ns(text.substr(colon + 1));
  if (!a || !b || *b <= *a) return std::nullopt;
  return TimeSpan{*a, *b};
}

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
