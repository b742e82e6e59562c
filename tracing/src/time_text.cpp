#include "gpulb/tracing/time_text.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace gpulb::trace {

std::optional<double> parse_time_ns(std::string_view text) {
  // Digits with at most one point, then the unit: strtod alone would also take spaces, a sign,
  // hexadecimal and exponents (" 1", "0x10", "1e400").
  std::size_t i = 0, digits = 0, points = 0;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.');
       ++i) {
    (text[i] == '.' ? points : digits) += 1;
  }
  if (digits == 0 || points > 1) return std::nullopt;
  const std::string_view unit = text.substr(i);
  double scale = 0.0;
  if (unit.empty() || unit == "ns") scale = 1.0;
  if (unit == "us") scale = 1e3;
  if (unit == "ms") scale = 1e6;
  if (unit == "s") scale = 1e9;
  const double ns = std::strtod(std::string(text.substr(0, i)).c_str(), nullptr) * scale;
  if (scale == 0.0 || !std::isfinite(ns)) return std::nullopt;  // an unknown unit; 1e300s overflows
  return ns;
}

std::optional<TimeSpan> parse_time_span(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    return std::nullopt;
  const auto a = parse_time_ns(text.substr(0, colon));
  const auto b = parse_time_ns(text.substr(colon + 1));
  if (!a || !b || *b <= *a) return std::nullopt;
  return TimeSpan{*a, *b};
}

}  // namespace gpulb::trace
