#include "display_text.hpp"

#include <algorithm>

namespace gpulb::viewer {
namespace {

// The longest prefix of `s` of at most `max` bytes that does not end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;  // continuation byte
  return s.substr(0, cut);
}

}  // namespace

std::string display_text(std::string_view s, std::size_t max_line, std::size_t max_lines) {
  std::string out;
  out.reserve(std::min(s.size(), max_line * max_lines + 64));
  bool cut = false;
  std::size_t lines = 0, from = 0;
  while (from <= s.size()) {
    if (lines == max_lines) {
      out += "\n...";
      cut = true;
      break;
    }
    const std::size_t nl = s.find('\n', from);
    const std::string_view line =
        s.substr(from, nl == std::string_view::npos ? std::string_view::npos : nl - from);
    const std::string_view kept = utf8_prefix(line, max_line);
    if (lines > 0) out += '\n';
    out.append(kept);
    if (kept.size() < line.size()) {
      out += "...";
      cut = true;
    }
    ++lines;
    if (nl == std::string_view::npos) break;
    from = nl + 1;
  }
  if (cut) out += " (" + std::to_string(s.size()) + " bytes in all)";
  return out;
}

std::string display_label(std::string_view s, std::size_t max_chars) {
  const std::string_view kept = utf8_prefix(s, max_chars);  // a huge name is never copied whole
  std::string out(kept);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (kept.size() < s.size()) out += "... (" + std::to_string(s.size()) + " bytes in all)";
  return out;
}

}  // namespace gpulb::viewer
