// The lesson view's wrapping: lines break at spaces only, so no number, unit or file name is cut.
#include <gtest/gtest.h>

#include "fixed_width_text.hpp"
#include "text_wrap.hpp"

namespace gpulb::viewer {
namespace {

TEST(TextWrap, BreaksOnlyAtSpacesSoNoNumberIsSplit) {
  const std::string text = "800,000 task slots against 12,000 (67x fewer); 1.5 ms on lesson-mohan-a.gpulb";
  for (float width = 7.0f * 4; width <= 7.0f * 90; width += 7.0f) {
    const auto lines = wrap_at_spaces(text, width, width7);
    std::string joined;
    for (const std::string& l : lines) {
      joined += (joined.empty() ? "" : " ") + l;
      EXPECT_TRUE(width7(l) <= width || l.find(' ') == std::string::npos) << "'" << l << "' overflows " << width << " px";
    }
    EXPECT_EQ(joined, text) << "at " << width << " px every word survives whole, in order";
  }
  EXPECT_EQ(wrap_at_spaces("aaa bbb ccc", 7.0f * 7, width7), (std::vector<std::string>{"aaa bbb", "ccc"}));
  EXPECT_EQ(wrap_at_spaces("one\ntwo", 1000.0f, width7), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(wrap_at_spaces("", 100.0f, width7), (std::vector<std::string>{""}));
}

}  // namespace
}  // namespace gpulb::viewer
