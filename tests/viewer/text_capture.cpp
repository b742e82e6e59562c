#include "text_capture.hpp"

#include <imgui_internal.h>  // ImTextCharFromUtf8

#include <algorithm>
#include <cfloat>
#include <cstring>

namespace gpulb::viewer::testing {
namespace {

bool g_on = false;
std::vector<DrawnText> g_texts;

bool blank(char c) { return c == ' ' || c == '\t'; }

// A line [b, e) at (x, y): its box without the blanks at its ends.
TextLine make_line(const ImFont* font, float size, ImVec2 pos, float y, const char* b,
                   const char* e) {
  const char* tb = b;
  while (tb < e && blank(*tb)) ++tb;
  const char* te = e;
  while (te > tb && (blank(te[-1]) || te[-1] == '\r')) --te;
  const float lead = font->CalcTextSizeA(size, FLT_MAX, 0.0f, b, tb).x;
  const float w = font->CalcTextSizeA(size, FLT_MAX, 0.0f, tb, te).x;
  TextLine line;
  line.text.assign(tb, te);
  line.min = ImVec2(pos.x + lead, pos.y + y);
  line.max = ImVec2(pos.x + lead + w, pos.y + y + size);
  line.broke_at_blank = true;
  return line;
}

// The lines ImFont::RenderText (Dear ImGui 1.86) makes of a text: the same walk, word-wrap
// positions from the font itself, so that the breaks are the ones on screen.
std::vector<TextLine> lines_of(const ImFont* font, float size, ImVec2 pos, const char* text,
                               const char* end, float wrap_width) {
  std::vector<TextLine> lines;
  const float scale = size / font->FontSize;
  const bool wrap = wrap_width > 0.0f;
  const char* wrap_eol = nullptr;
  const char* line_begin = text;
  float x = 0.0f, y = 0.0f;
  const char* s = text;
  while (s < end) {
    if (wrap) {
      if (!wrap_eol) {
        wrap_eol = font->CalcWordWrapPositionA(scale, s, end, wrap_width - x);
        if (wrap_eol == s) ++wrap_eol;  // a glyph wider than the line still takes one
      }
      if (s >= wrap_eol) {
        lines.push_back(make_line(font, size, pos, y, line_begin, s));
        lines.back().broke_at_blank = blank(*s) || *s == '\n' || blank(s[-1]);
        x = 0.0f;
        y += size;
        wrap_eol = nullptr;
        while (s < end && blank(*s)) ++s;  // wrapping skips the blanks after the break
        if (s < end && *s == '\n') ++s;
        line_begin = s;
        continue;
      }
    }
    unsigned int c = static_cast<unsigned char>(*s);
    if (c < 0x80) {
      ++s;
    } else {
      s += ImTextCharFromUtf8(&c, s, end);
      if (c == 0) break;
    }
    if (c == '\n') {
      lines.push_back(make_line(font, size, pos, y, line_begin, s - 1));
      x = 0.0f;
      y += size;
      line_begin = s;
      continue;
    }
    if (c == '\r') continue;
    x += font->GetCharAdvance(static_cast<ImWchar>(c)) * scale;
  }
  lines.push_back(make_line(font, size, pos, y, line_begin, end));
  return lines;
}

ImVec4 intersect(const ImVec4& a, const ImVec4& b) {
  return ImVec4(std::max(a.x, b.x), std::max(a.y, b.y), std::min(a.z, b.z), std::min(a.w, b.w));
}

void record(ImDrawList* list, const ImFont* font, float size, const ImVec2& pos, ImU32 col,
            const char* begin, const char* end, float wrap_width, const ImVec4* fine_clip) {
  if (!g_on || !begin || (col & IM_COL32_A_MASK) == 0) return;
  if (!end) end = begin + std::strlen(begin);
  if (begin == end) return;
  if (!font) font = list->_Data->Font;
  if (size == 0.0f) size = list->_Data->FontSize;
  DrawnText t;
  t.text.assign(begin, end);
  t.list = list;
  t.clip = fine_clip ? intersect(list->_CmdHeader.ClipRect, *fine_clip) : list->_CmdHeader.ClipRect;
  t.lines = lines_of(font, size, pos, begin, end, wrap_width);
  g_texts.push_back(std::move(t));
}

}  // namespace

void capture_texts(bool on) {
  g_on = on;
  if (on) g_texts.clear();
}

const std::vector<DrawnText>& captured_texts() { return g_texts; }

}  // namespace gpulb::viewer::testing

// The two ImDrawList::AddText overloads, by their mangled names (-Wl,--wrap=NAME sends calls of
// NAME to __wrap_NAME; __real_NAME is the original). `self` is the member functions' `this`.
extern "C" {
void __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* self, const ImVec2& pos, ImU32 col,
                                                     const char* begin, const char* end);
void __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float size, const ImVec2& pos, ImU32 col,
    const char* begin, const char* end, float wrap_width, const ImVec4* fine_clip);

void __wrap__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* self, const ImVec2& pos, ImU32 col,
                                                     const char* begin, const char* end) {
  gpulb::viewer::testing::record(self, nullptr, 0.0f, pos, col, begin, end, 0.0f, nullptr);
  __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(self, pos, col, begin, end);
}

void __wrap__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float size, const ImVec2& pos, ImU32 col,
    const char* begin, const char* end, float wrap_width, const ImVec4* fine_clip) {
  gpulb::viewer::testing::record(self, font, size, pos, col, begin, end, wrap_width, fine_clip);
  __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
      self, font, size, pos, col, begin, end, wrap_width, fine_clip);
}
}
