// The lesson view's wrapping: lines break at spaces only, so no number, unit or file name is cut.
#include <gtest/gtest.h>

#include "fixed_width_text.hpp"
#include "text_wrap.hpp"

namespace gpulb::viewer {
namespace {

TEST(TextWrap, BreaksOnlyAtSpacesSoNoNumberIsSplit) {
  const std::string text =
      "800,000 task slots against 12,000 (67x fewer); 1.5 ms on lesson-mohan-a.gpulb";
  for (float width = 7.0f * 4; width <= 7.0f * 90; width += 7.0f) {
    const auto lines = wrap_at_spaces(text, width, width7);
    std::string joined;
    for (const std::string& l : lines) {
      joined += (joined.empty() ? "" : " ") + l;
      // Only what cannot break may overflow: one word, or a number with its unit ("1.5 ms").
      const std::size_t space = l.find(' ');
      const bool one_unit =
          space == std::string::npos ||
          (space == l.rfind(' ') && splits_a_number(l.substr(0, space), l.substr(space + 1), true));
      EXPECT_TRUE(width7(l) <= width || one_unit) << "'" << l << "' overflows " << width << " px";
    }
    EXPECT_EQ(joined, text) << "at " << width << " px every word survives whole, in order";
  }
  EXPECT_EQ(wrap_at_spaces("aaa bbb ccc", 7.0f * 7, width7),
            (std::vector<std::string>{"aaa bbb", "ccc"}));
  EXPECT_EQ(wrap_at_spaces("one\ntwo", 1000.0f, width7), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(wrap_at_spaces("", 100.0f, width7), (std::vector<std::string>{""}));
}

// "took 473 us" broke into "took 473" and "us": a number stays with its unit.
TEST(TextWrap, ANumberStaysWithItsUnit) {
  const std::string text = "the selection took 473 us of 2.14 ms";
  for (float width = 7.0f * 6; width <= 7.0f * 40; width += 7.0f) {
    const auto lines = wrap_at_spaces(text, width, width7);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      EXPECT_FALSE(splits_a_number(lines[i - 1], lines[i], true))
          << "'" << lines[i - 1] << "' | '" << lines[i] << "' at " << width;
    }
  }
}

TEST(TextWrap, SplitNumbersAreRecognised) {
  EXPECT_TRUE(splits_a_number("the median SM 1.", "0%", false));
  EXPECT_TRUE(splits_a_number("worst 2.", "04e-02", false));
  EXPECT_TRUE(splits_a_number("800,", "000 task slots", false));
  EXPECT_TRUE(splits_a_number("lesson-mohan-", "a2.gpulb", false));
  EXPECT_TRUE(splits_a_number("selection 473", "us", true));
  EXPECT_TRUE(splits_a_number("max 1.5", "ms, mean", true));
  EXPECT_TRUE(splits_a_number("efficiency 87.5", "%", true));
  EXPECT_FALSE(splits_a_number("302 busy", "workers", true));
  EXPECT_FALSE(splits_a_number("ran 302", "tasks", true));
  EXPECT_FALSE(splits_a_number("the queue", "held", false)) << "a word without a digit";
  EXPECT_FALSE(splits_a_number("GPU 1", "ran", true));
}

}  // namespace
}  // namespace gpulb::viewer
