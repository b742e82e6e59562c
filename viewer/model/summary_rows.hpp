// The summary's rows as text (name, value, tone), built here so that the views only draw them and
// the compare layout can measure how tall a summary is. Every figure comes from
// trace::compute_statistics, the implementation `gpulb info` prints.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ticks.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

struct SummaryRow {
  enum class Tone { Normal, Dim, Good, Bad, Unchecked };
  std::string name;   // "" for a continuation line
  std::string value;  // clipped trace strings (display_text.hpp)
  Tone tone = Tone::Normal;
};

// Compact: the side panel's and compare's; full: the Summary tab's (clock, per-device totals, result).
std::vector<SummaryRow> summary_rows(const TraceModel& model, bool compact);

// Lines `text` takes when wrapped at `width` px as the views draw it (text_wrap.hpp: at spaces only,
// a word wider than the line on a line of its own); at least 1.
int wrapped_lines(std::string_view text, float width, const TextWidth& text_width);

// The rows' height in a table whose value column is `value_w` px wide: `line_h` px a line and
// `row_pad` px more a row (the table's cell padding).
float summary_height(const std::vector<SummaryRow>& rows, float value_w, float line_h,
                     float row_pad, const TextWidth& text_width);

}  // namespace gpulb::viewer
