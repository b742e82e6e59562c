// Trace strings clipped for display: a 30,000-character name must reach ImGui as a few
// hundred characters, cut between characters, saying how long it was.
#include <gtest/gtest.h>

#include <string>

#include "display_text.hpp"

namespace gpulb::viewer {
namespace {

TEST(DisplayText, ShortTextIsUnchanged) {
  EXPECT_EQ(display_text("work-stealing"), "work-stealing");
  EXPECT_EQ(display_text("two\nlines"), "two\nlines");
  EXPECT_EQ(display_label("worker 3"), "worker 3");
}

TEST(DisplayText, ALongLineIsCutWithAnEllipsisAndItsFullLength) {
  const std::string s(30'000, 'x');
  EXPECT_EQ(display_text(s, 10), "xxxxxxxxxx... (30000 bytes in all)");
  EXPECT_EQ(display_label(s, 5), "xxxxx... (30000 bytes in all)");
}

TEST(DisplayText, CutsNeverSplitACharacter) {
  // "ab" then e-acute (2 bytes) then the euro sign (3 bytes): cuts inside either fall back before it.
  const std::string s = "ab\xC3\xA9\xE2\x82\xAC";
  EXPECT_EQ(display_text(s, 3), "ab... (7 bytes in all)");
  EXPECT_EQ(display_text(s, 4), "ab\xC3\xA9... (7 bytes in all)");
  EXPECT_EQ(display_text(s, 6), "ab\xC3\xA9... (7 bytes in all)");
  EXPECT_EQ(display_label(s, 5), "ab\xC3\xA9... (7 bytes in all)");
}

TEST(DisplayText, ManyLinesKeepOnlyTheFirst) {
  std::string s;
  for (int i = 0; i < 6000; ++i) s += "line\n";
  const std::string shown = display_text(s, 300, 3);
  EXPECT_EQ(shown, "line\nline\nline\n... (30000 bytes in all)");
  EXPECT_EQ(display_label("a\nb\tc"), "a b c") << "labels are one line";
}

TEST(DisplayText, EverythingShownIsBoundedWhateverTheInput) {
  std::string s;
  for (int i = 0; i < 20'000; ++i) s += (i % 7 == 0 ? "\n" : "\xF0\x9F\x98\x80");
  EXPECT_LT(display_text(s).size(), kMaxDisplayLine * kMaxDisplayLines + 100);
  EXPECT_LT(display_label(s).size(), 160u);
}

}  // namespace
}  // namespace gpulb::viewer
