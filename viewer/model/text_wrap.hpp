// Word wrapping that never splits a number, a unit or a file name: lines break only at spaces.
// ImGui's own wrapping also breaks after ',' and '.', which cuts "800,000" and "1.5" in two.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ticks.hpp"  // TextWidth

namespace gpulb::viewer {

// `text`'s lines at `width` px: greedy, breaking at spaces (and at '\n'); a word wider than the
// line gets a line of its own, whole.
std::vector<std::string> wrap_at_spaces(std::string_view text, float width, const TextWidth& text_width);

}  // namespace gpulb::viewer
