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
#include "palette.hpp"
#include "ticks.hpp"

namespace gpulb::viewer {

constexpr ImU32 to_imgui(Rgb8 c, unsigned alpha = 255) { return IM_COL32(c.r, c.g, c.b, alpha); }

// The frame's greys, and the meanings' colours of palette.hpp (one colour per meaning).
namespace colours {
inline constexpr ImU32 kBackground = IM_COL32(24, 26, 31, 255);
inline constexpr ImU32 kLaneEven = IM_COL32(30, 33, 39, 255);
inline constexpr ImU32 kLaneOdd = IM_COL32(35, 38, 45, 255);
inline constexpr ImU32 kHeader = IM_COL32(48, 52, 62, 255);
inline constexpr ImU32 kRankHeader = IM_COL32(36, 58, 84, 255);  // a rank's row, above its devices
inline constexpr ImU32 kGrid = IM_COL32(70, 75, 88, 255);
inline constexpr ImU32 kText = IM_COL32(220, 223, 228, 255);
inline constexpr ImU32 kDimText = IM_COL32(150, 155, 165, 255);
inline constexpr ImU32 kIdle = to_imgui(palette::kIdle);
inline constexpr ImU32 kSteal = to_imgui(palette::kSteal);
inline constexpr ImU32 kStealAcross = to_imgui(palette::kStealAcross);
inline constexpr ImU32 kRankTransfer = to_imgui(palette::kRankTransfer);
inline constexpr ImU32 kSpawn = to_imgui(palette::kSpawn);
inline constexpr ImU32 kHost = to_imgui(palette::kHost);
inline constexpr ImU32 kPlayhead = to_imgui(palette::kPlayhead);
inline constexpr ImU32 kChosen = to_imgui(palette::kChosen);
inline constexpr ImU32 kSelection = to_imgui(palette::kChosen, 40);  // the selected range's band
inline constexpr ImU32 kQueued = to_imgui(palette::kQueued);
inline constexpr ImU32 kBusy = to_imgui(palette::kBusy);
// a chart's bars of task counts (no kinds in its view)
inline constexpr ImU32 kBar = IM_COL32(95, 150, 225, 255);
inline constexpr ImU32 kMean = IM_COL32(255, 255, 255, 255);  // a chart's mean line
}  // namespace colours

ImU32 scale_colour(ImU32 c, float factor);  // darker (< 1) or lighter (> 1)

// A legend swatch and its label on the current line.
void legend_item(ImU32 colour, const char* label);
void legend_items(std::span<const LegendEntry> entries);

using ValueFormat = std::function<std::string(double)>;
std::string format_count(double v);
// The width ImGui draws a text at: the model's tick layout (ticks.hpp) asks for it.
float text_width(const std::string& s);

// Which imbalance a bar chart's footer states: the project's max/mean, or max/min where the chart
// sits beside a verdict that reads the busiest over the idlest (Grossman's tasks per SM).
enum class BarRatio { MaxOverMean, MaxOverMin };

// Bars for `values` filling a frame of `size`: a title, an axis from 0 to the maximum, x labels
// at `axis` (bar indices), lines at the minimum, mean and maximum, and `ratio` below.
// `bar_label` names bar i for the tooltip. `scale_max` (where above the values' maximum) tops the
// axis instead, so that charts set one above the other share a scale. Returns the index of the
// hovered bar, or -1.
int bar_chart(const char* title, std::span<const double> values, std::span<const Tick> axis,
              ImVec2 size, const ValueFormat& fmt, const std::function<std::string(int)>& bar_label,
              ImU32 colour = colours::kBar, double scale_max = 0.0,
              BarRatio ratio = BarRatio::MaxOverMean);

// A histogram of counts; a log-scale histogram labels its edges as times.
void histogram_chart(const char* title, const Histogram& h, ImVec2 size,
                     const ValueFormat& edge_fmt);

// `text` wrapped to the space left on the line, breaking only at spaces (text_wrap.hpp): ImGui's
// TextWrapped also breaks after '.' and ',', inside "1.5 ms" or "800,000". A group, so that after
// SameLine every line starts where the first does.
void text_wrapped(std::string_view text);

// The text of a chart's title line at p, in the title font colour.
void chart_title(ImDrawList* dl, ImVec2 p, const char* title);

}  // namespace gpulb::viewer
