#include "text_wrap.hpp"

namespace gpulb::viewer {

std::vector<std::string> wrap_at_spaces(std::string_view text, float width, const TextWidth& text_width) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t nl = text.find('\n', at);
    const std::string_view para = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    std::string line;
    std::size_t w = 0;
    while (w < para.size()) {
      std::size_t end = para.find(' ', w);
      if (end == std::string_view::npos) end = para.size();
      const std::string word(para.substr(w, end - w));
      w = end + 1;
      if (word.empty()) continue;
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
