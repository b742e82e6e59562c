// Times as people type them: "1.5ms", "250us", "3s", "1200" (ns). The CLI's --range and the
// viewer's --range, --select and --playhead read them alike.
#pragma once

#include <optional>
#include <string_view>

namespace gpulb::trace {

// Parses a non-negative decimal time with an optional unit (ns, us, ms, s): "1500", "2.5us".
// nullopt for anything else (a sign, spaces, exponents, hexadecimal, a time past what a double holds).
std::optional<double> parse_time_ns(std::string_view text);

struct TimeSpan {
  double begin_ns = 0.0, end_ns = 0.0;
};
// "START:END": exactly one colon, both parts as parse_time_ns takes them, END > START.
std::optional<TimeSpan> parse_time_span(std::string_view text);

}  // namespace gpulb::trace
