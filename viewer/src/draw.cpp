#include "draw.hpp"

#include "text_wrap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpulb::viewer {

ImU32 scale_colour(ImU32 c, float factor) {
  ImVec4 v = ImGui::ColorConvertU32ToFloat4(c);
  v.x = std::min(v.x * factor, 1.0f);
  v.y = std::min(v.y * factor, 1.0f);
  v.z = std::min(v.z * factor, 1.0f);
  return ImGui::ColorConvertFloat4ToU32(v);
}

void legend_item(ImU32 colour, const char* label) {
  const float h = ImGui::GetTextLineHeight();
  // A legend wider than its row goes on below, rather than past the window's edge.
  if (ImGui::GetContentRegionAvail().x < h + 4 + ImGui::CalcTextSize(label).x) ImGui::NewLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + h, p.y + h - 2),
                                            colour, 2.0f);
  ImGui::Dummy(ImVec2(h + 2, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(label);
  ImGui::SameLine(0, 14);
}

void legend_items(std::span<const LegendEntry> entries) {
  for (const LegendEntry& e : entries) legend_item(to_imgui(e.colour), e.label.c_str());
}

float text_width(const std::string& s) { return ImGui::CalcTextSize(s.c_str()).x; }

std::string format_count(double v) {
  char buf[32];
  if (std::fabs(v) >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  } else if (std::fabs(v) >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  } else if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  }
  return buf;
}

void text_wrapped(std::string_view text) {
  const float width = std::max(ImGui::GetContentRegionAvail().x, 1.0f);
  std::string lines;  // one text of several lines: ImGui's own line height, as TextWrapped has
  for (const std::string& line : wrap_at_spaces(text, width, text_width))
    lines += (lines.empty() ? "" : "\n") + line;
  ImGui::BeginGroup();
  ImGui::TextUnformatted(lines.c_str(), lines.c_str() + lines.size());
  ImGui::EndGroup();
}

void chart_title(ImDrawList* dl, ImVec2 p, const char* title) {
  dl->AddText(p, colours::kText, title);
}

namespace {

struct ChartFrame {
  ImVec2 outer0, outer1;  // the whole widget
  ImVec2 p0, p1;          // the plotting area
};

// Reserves the widget's space and draws its background and title; leaves room for axis labels.
ChartFrame begin_chart(const char* title, ImVec2 size, float left_margin, int bottom_lines = 1) {
  ChartFrame f;
  f.outer0 = ImGui::GetCursorScreenPos();
  f.outer1 = ImVec2(f.outer0.x + size.x, f.outer0.y + size.y);
  ImGui::Dummy(size);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(f.outer0, f.outer1, colours::kLaneEven, 4.0f);
  const float line = ImGui::GetTextLineHeight();
  chart_title(dl, ImVec2(f.outer0.x + 8, f.outer0.y + 4), title);
  f.p0 = ImVec2(f.outer0.x + left_margin, f.outer0.y + line + 12);
  f.p1 = ImVec2(f.outer1.x - 10, f.outer1.y - static_cast<float>(bottom_lines) * (line + 2) - 6);
  return f;
}

}  // namespace

int bar_chart(const char* title, std::span<const double> values, std::span<const Tick> axis,
              ImVec2 size, const ValueFormat& fmt, const std::function<std::string(int)>& bar_label,
              ImU32 colour, double scale_max, BarRatio ratio) {
  const ChartFrame f = begin_chart(title, size, 64.0f, 2);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (values.empty()) {
    dl->AddText(ImVec2(f.p0.x, f.p0.y + 10), colours::kDimText, "(nothing to show)");
    return -1;
  }
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  const double lo = *lo_it, hi = *hi_it;
  double sum = 0;
  for (const double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  const double top = std::max(hi, scale_max) > 0 ? std::max(hi, scale_max) * 1.08 : 1.0;
  const float w = f.p1.x - f.p0.x, h = f.p1.y - f.p0.y;
  auto y_of = [&](double v) { return f.p1.y - static_cast<float>(v / top) * h; };

  // Axis: 0 and the top value.
  dl->AddLine(ImVec2(f.p0.x, f.p1.y), ImVec2(f.p1.x, f.p1.y), colours::kGrid);
  dl->AddText(ImVec2(f.outer0.x + 6, f.p1.y - ImGui::GetTextLineHeight()), colours::kDimText, "0");
  const std::string top_text = fmt(hi);
  dl->AddText(ImVec2(f.outer0.x + 6, y_of(hi) - 2), colours::kDimText, top_text.c_str());

  // Bars: at least one pixel each; many bars share a pixel column as a max.
  const std::size_t n = values.size();
  const float bw = w / static_cast<float>(n);
  const float gap = bw > 4 ? std::max(1.0f, bw * 0.15f) : 0.0f;
  if (bw >= 1.0f) {
    for (std::size_t i = 0; i < n; ++i) {
      const float x0 = f.p0.x + bw * static_cast<float>(i);
      dl->AddRectFilled(ImVec2(x0 + gap * 0.5f, y_of(values[i])),
                        ImVec2(x0 + bw - gap * 0.5f, f.p1.y), colour);
    }
  } else {
    // More bars than pixels: each column is a bucket of bars, its range as a band, its mean as
    // the fill (bar_buckets), so the fill averages to the mean line as the bars do.
    const ImU32 band = (colour & 0x00FFFFFFu) | (80u << 24);
    const std::vector<Bucket> buckets = bar_buckets(values, static_cast<int>(w));
    for (std::size_t c = 0; c < buckets.size(); ++c) {
      const float x0 = f.p0.x + static_cast<float>(c);
      dl->AddRectFilled(ImVec2(x0, y_of(buckets[c].max)), ImVec2(x0 + 1, y_of(buckets[c].min)),
                        band);
      dl->AddRectFilled(ImVec2(x0, y_of(buckets[c].mean)), ImVec2(x0 + 1, f.p1.y), colour);
    }
  }
  // x labels: every device, and a few SMs between them (place_axis_labels); a tick for each.
  for (const Tick& t : axis) {
    const float x = f.p0.x + bw * static_cast<float>(t.at);
    dl->AddLine(ImVec2(x, f.p1.y), ImVec2(x, f.p1.y + 4), colours::kDimText);
  }
  for (const PlacedLabel& l : place_axis_labels(axis, n, w, f.outer1.x - 2 - f.p1.x, text_width)) {
    dl->AddText(ImVec2(f.p0.x + l.x, f.p1.y + 2), colours::kDimText, l.text.c_str());
  }

  // Min, mean and max lines, and the imbalance figure.
  auto hline = [&](double v, ImU32 c, float thickness) {
    dl->AddLine(ImVec2(f.p0.x, y_of(v)), ImVec2(f.p1.x, y_of(v)), c, thickness);
  };
  hline(lo, IM_COL32(150, 155, 165, 200), 1.0f);
  hline(hi, IM_COL32(230, 110, 120, 220), 1.0f);
  hline(mean, colours::kMean, 2.0f);
  char stats[160];
  if (ratio == BarRatio::MaxOverMin) {
    char ratio_text[32] = "max/min: min is 0";
    if (lo > 0) std::snprintf(ratio_text, sizeof ratio_text, "max/min %.2f", hi / lo);
    std::snprintf(stats, sizeof stats, "min %s   mean %s   max %s   %s", fmt(lo).c_str(),
                  fmt(mean).c_str(), fmt(hi).c_str(), ratio_text);
  } else {
    std::snprintf(stats, sizeof stats, "min %s   mean %s   max %s   max/mean %.3f", fmt(lo).c_str(),
                  fmt(mean).c_str(), fmt(hi).c_str(), mean > 0 ? hi / mean : 1.0);
  }
  dl->AddText(ImVec2(f.p0.x, f.p1.y + ImGui::GetTextLineHeight() + 4), colours::kDimText, stats);

  int hovered = -1;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (ImGui::IsItemHovered() && m.x >= f.p0.x && m.x < f.p1.x) {
    hovered = std::clamp(static_cast<int>((m.x - f.p0.x) / w * static_cast<float>(n)), 0,
                         static_cast<int>(n) - 1);
    ImGui::BeginTooltip();
    ImGui::Text("%s: %s", bar_label(hovered).c_str(),
                fmt(values[static_cast<std::size_t>(hovered)]).c_str());
    ImGui::EndTooltip();
  }
  return hovered;
}

void histogram_chart(const char* title, const Histogram& h, ImVec2 size,
                     const ValueFormat& edge_fmt) {
  const ChartFrame f = begin_chart(title, size, 64.0f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const std::uint64_t peak = h.peak();
  if (peak == 0) {
    dl->AddText(ImVec2(f.p0.x, f.p0.y + 10), colours::kDimText, "(no tasks yet)");
    return;
  }
  const float w = f.p1.x - f.p0.x, hgt = f.p1.y - f.p0.y;
  const std::size_t n = h.counts.size();
  const float bw = w / static_cast<float>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float y =
        f.p1.y - hgt * static_cast<float>(h.counts[i]) / static_cast<float>(peak) / 1.08f;
    const float x0 = f.p0.x + bw * static_cast<float>(i);
    dl->AddRectFilled(ImVec2(x0 + 1, y), ImVec2(x0 + bw - 1, f.p1.y), colours::kBusy);
  }
  dl->AddLine(ImVec2(f.p0.x, f.p1.y), ImVec2(f.p1.x, f.p1.y), colours::kGrid);
  dl->AddText(ImVec2(f.outer0.x + 6, f.p1.y - ImGui::GetTextLineHeight()), colours::kDimText, "0");
  const std::string top = format_count(static_cast<double>(peak));
  dl->AddText(ImVec2(f.outer0.x + 6, f.p1.y - hgt / 1.08f - 2), colours::kDimText, top.c_str());
  // Edge labels: first, middle and last, more where there is room.
  const int labels = std::clamp(static_cast<int>(w / 110.0f), 2, static_cast<int>(n));
  for (int k = 0; k <= labels; ++k) {
    const std::size_t e = n * static_cast<std::size_t>(k) / static_cast<std::size_t>(labels);
    const std::string text = edge_fmt(h.edges[e]);
    const float x = f.p0.x + bw * static_cast<float>(e);
    const float tw = ImGui::CalcTextSize(text.c_str()).x;
    dl->AddLine(ImVec2(x, f.p1.y), ImVec2(x, f.p1.y + 3), colours::kGrid);
    dl->AddText(ImVec2(std::clamp(x - tw * 0.5f, f.outer0.x + 2, f.outer1.x - tw - 2), f.p1.y + 4),
                colours::kDimText, text.c_str());
  }
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (ImGui::IsItemHovered() && m.x >= f.p0.x && m.x < f.p1.x) {
    const auto i = std::min(n - 1, static_cast<std::size_t>((m.x - f.p0.x) / bw));
    ImGui::BeginTooltip();
    ImGui::Text("%s .. %s: %llu tasks", edge_fmt(h.edges[i]).c_str(),
                edge_fmt(h.edges[i + 1]).c_str(), static_cast<unsigned long long>(h.counts[i]));
    ImGui::EndTooltip();
  }
}

}  // namespace gpulb::viewer
