#include "gpulb/tracing/trace_limits.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

#include <unistd.h>

#include "gpulb/tracing/trace_file.hpp"

namespace gpulb::trace {

std::uint64_t default_memory_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::uint64_t{1} << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 4;
}

std::uint64_t ReadLimits::budget() const {
  return max_memory ? max_memory : default_memory_budget();
}

std::optional<std::uint64_t> parse_byte_size(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0 || i > 24) return std::nullopt;
  const std::string number = text.substr(0, i);
  if (number.find('.') != number.rfind('.') || number.front() == '.' || number.back() == '.')
    return std::nullopt;
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty()) {
    const std::string units = "KMGT";
    const auto at = units.find(unit[0]);
    if (at != std::string::npos) {
      shift = 10 * static_cast<int>(at + 1);
      unit.erase(0, 1);
      if (!unit.empty() && unit[0] == 'I') unit.erase(0, 1);
    }
    if (unit == "B") unit.clear();
    if (!unit.empty()) return std::nullopt;
  }
  const long double bytes = std::strtold(number.c_str(), nullptr) * std::ldexp(1.0L, shift);
  if (!(bytes >= 1.0L) || bytes >= std::ldexp(1.0L, 63)) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", v, units[u]);
  return buf;
}

void MemoryBudget::charge(std::uint64_t bytes, const std::string& what) {
  if (bytes > limit_ || used_ > limit_ - bytes) {
    throw TraceFileError(origin_ + ": refusing to read: " + what + " needs " + format_bytes(bytes) +
                         " (" + format_bytes(used_) +
                         " already taken), over the reader's memory budget of " +
                         format_bytes(limit_) +
                         "; raise it (gpulb info/export --max-memory) if the file is trusted");
  }
  used_ += bytes;
}

namespace {
struct TooDeep {};
}  // namespace

BoundedJson parse_json_bounded(const std::string& text, std::size_t max_bytes, int max_depth) {
  BoundedJson out;
  if (text.size() > max_bytes) {
    out.refusal = "larger than " + format_bytes(max_bytes) + " (" + format_bytes(text.size()) + ")";
    return out;
  }
  // nlohmann's parser is iterative, but the DOM it builds is destroyed and printed recursively,
  // and `dump(2)` indents each level: refuse depth while parsing, before any of that.
  const nlohmann::json::parser_callback_t limit =
      [max_depth](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if ((event == nlohmann::json::parse_event_t::object_start ||
             event == nlohmann::json::parse_event_t::array_start) &&
            depth >= max_depth) {
          throw TooDeep{};
        }
        return true;
      };
  try {
    out.value = nlohmann::json::parse(text, limit);
  } catch (const TooDeep&) {
    out.refusal = "nested deeper than " + std::to_string(max_depth) + " levels";
  } catch (const nlohmann::json::exception& e) {
    out.refusal = std::string("not valid JSON (") + e.what() + ")";
  }
  return out;
}

std::string clip_for_display(const std::string& s, std::size_t max_chars) {
  if (s.size() <= max_chars) return s;
  std::size_t cut = max_chars;  // never inside a UTF-8 sequence: JSON output refuses broken text
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "... (" + std::to_string(s.size()) + " bytes in all)";
}

}  // namespace gpulb::trace
