// Drawing helpers shared by the views: colours, a bar chart and a histogram on ImGui draw lists
// (ImPlot is not in Debian), legends and number formatting.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "histogram.hpp"
#include "loads.hpp"
#include "ticks.hpp"

namespace gpulb::viewer {

namespace colours {
inline constexpr ImU32 kBackground = IM_COL32(24, 26, 31, 255);
inline constexpr ImU32 kLaneEven = IM_COL32(30, 33, 39, 255);
inline constexpr ImU32 kLaneOdd = IM_COL32(35, 38, 45, 255);
inline constexpr ImU32 kHeader = IM_COL32(48, 52, 62, 255);
inline constexpr ImU32 kRankHeader = IM_COL32(36, 58, 84, 255);  // a rank's row, above its devices
inline constexpr ImU32 kGrid = IM_COL32(70, 75, 88, 255);
inline constexpr ImU32 kText = IM_COL32(220, 223, 228, 255);
inline constexpr ImU32 kDimText = IM_COL32(150, 155, 165, 255);
inline constexpr ImU32 kIdle = IM_COL32(200, 60, 60, 150);
inline constexpr ImU32 kFailed = IM_COL32(255, 90, 90, 255);
inline constexpr ImU32 kSteal = IM_COL32(255, 200, 60, 255);
inline constexpr ImU32 kStealAcross = IM_COL32(255, 90, 200, 255);  // a steal from another GPU's worker
inline constexpr ImU32 kRankTransfer = IM_COL32(90, 210, 255, 255);  // a chunk of tasks moved between ranks
inline constexpr ImU32 kSpawn = IM_COL32(120, 230, 140, 255);
inline constexpr ImU32 kHost = IM_COL32(120, 170, 255, 255);
inline constexpr ImU32 kPlayhead = IM_COL32(255, 210, 70, 255);
inline constexpr ImU32 kSelection = IM_COL32(120, 170, 255, 50);
inline constexpr ImU32 kBusy = IM_COL32(90, 190, 130, 255);
inline constexpr ImU32 kBar = IM_COL32(95, 150, 225, 255);
inline constexpr ImU32 kMean = IM_COL32(255, 210, 70, 255);
}  // namespace colours

// A distinct, saturated colour per task kind (a fixed palette, then golden-ratio hues).
ImU32 kind_colour(std::uint16_t kind);
// Task duration on a log scale between lo and hi, from blue (short) through green to red (long).
ImU32 duration_colour(double ns, double lo_ns, double hi_ns);
ImU32 scale_colour(ImU32 c, float factor);  // darker (< 1) or lighter (> 1)

// A legend swatch and its label on the current line.
void legend_item(ImU32 colour, const char* label);

using ValueFormat = std::function<std::string(double)>;
std::string format_count(double v);
// The width ImGui draws a text at: the model's tick layout (ticks.hpp) asks for it.
float text_width(const std::string& s);

// Bars for `values` filling a frame of `size`: a title, an axis from 0 to the maximum, x labels
// at `axis` (bar indices), lines at the minimum, mean and maximum, and "max/mean" below.
// `bar_label` names bar i for the tooltip. Returns the index of the hovered bar, or -1.
int bar_chart(const char* title, std::span<const double> values, std::span<const Tick> axis, ImVec2 size,
              const ValueFormat& fmt, const std::function<std::string(int)>& bar_label, ImU32 colour = colours::kBar);

// A histogram of counts; a log-scale histogram labels its edges as times.
void histogram_chart(const char* title, const Histogram& h, ImVec2 size, const ValueFormat& edge_fmt);

// `text` wrapped to the space left on the line, breaking only at spaces (text_wrap.hpp): ImGui's
// TextWrapped also breaks after '.' and ',', inside "1.5 ms" or "800,000". A group, so that after
// SameLine every line starts where the first does.
void text_wrapped(std::string_view text);

// The text of a chart's title line at p, in the title font colour.
void chart_title(ImDrawList* dl, ImVec2 p, const char* title);

}  // namespace gpulb::viewer
