// A text width for layout tests without a font: 7 px a character, about ImGui's default font.
#pragma once

#include <string>

namespace gpulb::viewer {

inline float width7(const std::string& s) { return 7.0f * static_cast<float>(s.size()); }

}  // namespace gpulb::viewer
