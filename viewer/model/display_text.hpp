// Strings from a trace file are untrusted (CONVENTIONS 16): a scenario name, a parameter, a device
// or track name, the verification text or result_json can be any length. ImGui draws a text as
// one block of 4 vertices a glyph into draw lists indexed with 16 bits, so a single text of about
// 16,000 glyphs aborts the viewer; and long texts are unreadable anyway. Every trace string goes
// through display_text before the views draw it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpulb::viewer {

// bytes a line: results of the shipped traces fit (400)
inline constexpr std::size_t kMaxDisplayLine = 600;
inline constexpr std::size_t kMaxDisplayLines = 8;

// `s` with each line cut to `max_line` bytes (on a UTF-8 character boundary, "..." marking the
// cut) and at most `max_lines` lines; where anything was cut, " (N bytes in all)" follows.
// A short text comes back unchanged.
std::string display_text(std::string_view s, std::size_t max_line = kMaxDisplayLine,
                         std::size_t max_lines = kMaxDisplayLines);

// One line for labels (lanes, devices, captions): line breaks shown as spaces, then clipped.
std::string display_label(std::string_view s, std::size_t max_chars = 120);

}  // namespace gpulb::viewer
