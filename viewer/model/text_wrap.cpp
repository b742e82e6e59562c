#include "text_wrap.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace gpulb::viewer {
namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The units numbers carry in the viewer's text (times, rates, sizes, shares, counts as "12k").
bool is_unit(std::string_view word) {
  while (!word.empty() && std::string_view(",.;:)]").find(word.back()) != std::string_view::npos)
    word.remove_suffix(1);
  static constexpr std::array<std::string_view, 22> kUnits = {
      "ns", "us", "ms",  "s",   "%",   "x",  "k",  "M",   "G",   "B", "KB",
      "MB", "GB", "KiB", "MiB", "GiB", "px", "Hz", "MHz", "GHz", "K", "T"};
  return std::find(kUnits.begin(), kUnits.end(), word) != kUnits.end();
}

// `text`'s words, a number and the unit after it kept as one.
std::vector<std::string> words_of(std::string_view para) {
  std::vector<std::string> words;
  std::size_t w = 0;
  while (w < para.size()) {
    std::size_t end = para.find(' ', w);
    if (end == std::string_view::npos) end = para.size();
    const std::string word(para.substr(w, end - w));
    w = end + 1;
    if (word.empty()) continue;
    if (!words.empty() && splits_a_number(words.back(), word, true)) {
      words.back() += " " + word;
    } else {
      words.push_back(word);
    }
  }
  return words;
}

}  // namespace

bool splits_a_number(std::string_view before, std::string_view after, bool at_blank) {
  if (before.empty() || after.empty()) return false;
  if (at_blank) return digit(before.back()) && is_unit(after.substr(0, after.find(' ')));
  // Inside a word: the word's two halves, and whether either holds a digit.
  const std::size_t from = before.find_last_of(' ');
  const std::string_view head = from == std::string_view::npos ? before : before.substr(from + 1);
  const std::string_view tail = after.substr(0, after.find(' '));
  return std::any_of(head.begin(), head.end(), digit) ||
         std::any_of(tail.begin(), tail.end(), digit);
}

std::vector<std::string> wrap_at_spaces(std::string_view text, float width,
                                        const TextWidth& text_width) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t nl = text.find('\n', at);
    const std::string_view para =
        text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    std::string line;
    for (const std::string& word : words_of(para)) {
      const std::string wider = line.empty() ? word : line + " " + word;
      if (!line.empty() && text_width(wider) > width) {
        lines.push_back(line);
        line = word;
      } else {
        line = wider;
      }
    }
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return lines;
}

}  // namespace gpulb::viewer
