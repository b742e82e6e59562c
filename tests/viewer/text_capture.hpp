// Every text Dear ImGui draws in a frame, with where it is on screen: for the tests that check
// that no label is drawn over another and no number is split across lines (text_layout_test.cpp).
//
// All of ImGui's text goes through ImDrawList::AddText: the widgets call it from imgui.cpp and
// imgui_widgets.cpp, the viewer's views from their own files. This executable links with
// -Wl,--wrap for both AddText overloads (tests/viewer/CMakeLists.txt), which sends every call
// from another object file (Debian's libimgui.a included) through text_capture.cpp first.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace gpulb::viewer::testing {

// One line of a drawn text, as ImFont::RenderText lays it out (explicit '\n' and word wrap).
struct TextLine {
  std::string text;  // without the blanks at its ends
  ImVec2 min, max;   // its box on screen, blanks left out
  bool
      broke_at_blank;  // the break before the next line replaced blanks or a '\n' (else: inside a word)
};

struct DrawnText {
  std::string text;
  const ImDrawList* list = nullptr;
  ImVec4 clip;                  // the clip rectangle in force (x0, y0, x1, y1)
  std::vector<TextLine> lines;  // top to bottom
};

// Starts recording (clearing what was recorded) or stops it.
void capture_texts(bool on);
const std::vector<DrawnText>& captured_texts();

}  // namespace gpulb::viewer::testing
