// Word wrapping that never splits a number, a unit or a file name: lines break only at spaces.
// ImGui's own wrapping also breaks after ',' and '.', which cuts "800,000" and "1.5" in two.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ticks.hpp"  // TextWidth

namespace gpulb::viewer {

// `text`'s lines at `width` px: greedy, breaking at spaces (and at '\n') but never between a
// number and its unit ("473 us"); a word wider than the line gets a line of its own, whole.
std::vector<std::string> wrap_at_spaces(std::string_view text, float width,
                                        const TextWidth& text_width);

// Whether a line break between `before` and `after` (the text on either side of it, without the
// blanks it replaced) splits a number: inside a word that holds a digit ("1." | "0%", "800," |
// "000", "2.04e" | "-02"), or, at a blank (`at_blank`), between a number and its unit ("473" | "us").
bool splits_a_number(std::string_view before, std::string_view after, bool at_blank);

}  // namespace gpulb::viewer
