// A lesson's key figure drawn from its series recording (builtin/lesson_series.hpp): the claim at
// every value the paper's own figure has, both sides, as bars on one scale.
//   ShareOfFirst  Chen Figure 7: each scheduler's time as a share of its P0 time, the work left as
//                 a line across each group, the paper's 2009 shares as dashed outlines
//   TimeAndSlots  Mohan Figures 6 and 7: time, and task slots on a log scale, at each lookahead
//   GpuScaling    Chen Figures 9 and 10: speedup against GPUs with the linear line, and each GPU's
//                 busy time at the most GPUs
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "bar_labels.hpp"
#include "draw.hpp"
#include "gpulb/builtin/lesson_series.hpp"
#include "gpulb/builtin/lesson_verdict.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

using builtin::SeriesFigureData;
using builtin::SeriesFigureRow;

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100.0);
  return buf;
}

std::string times_x(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", v);
  return buf;
}

// A chart's times in one unit, named in its title, so that each bar's label is a number as narrow
// as its bar: "2.86", not "2.86 ms".
struct TimeUnit {
  double ns = 1.0;
  const char* name = "ns";
};

TimeUnit unit_for(double largest_ns) {
  if (largest_ns >= 1e9) return {1e9, "s"};
  if (largest_ns >= 1e6) return {1e6, "ms"};
  if (largest_ns >= 1e3) return {1e3, "us"};
  return {};
}

std::string in_unit(double ns, TimeUnit u) {
  const double v = ns / u.ns;
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10.0 ? "%.2f" : v < 100.0 ? "%.1f" : "%.0f", v);
  return buf;
}

// 691543 -> "692k": a bar's label must fit its bar.
std::string compact_count(double v) {
  char buf[32];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1fM", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(buf, sizeof buf, "%.0fk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// One bar chart of groups (a value each) of two bars (A, B). `scale` maps a value to 0..1 of the
// plot's height; `label` writes a bar's value; `ideal` (where given) is a line across the group;
// `paper_a`/`paper_b` (where given) are the paper's figures, drawn as outlines over today's bars.
struct GroupChart {
  std::string title;
  std::string axis;  // what the groups are: "pattern", "lookahead", "GPUs"
  std::vector<std::string> groups;
  std::vector<std::optional<double>> a, b, ideal, paper_a, paper_b;
  std::function<double(double)> scale;
  std::function<std::string(double)> label;
};

// A dashed line: the paper's outline, so that it stays apart from the solid line of the chart's
// own reference where the two meet (Chen's P4: the paper's 25.5% on the work left's 25%).
void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness) {
  const float len = std::hypot(b.x - a.x, b.y - a.y);
  if (len <= 0.0f) return;
  const ImVec2 d((b.x - a.x) / len, (b.y - a.y) / len);
  for (float t = 0.0f; t < len; t += 9.0f) {
    const float e = std::min(t + 5.0f, len);
    dl->AddLine(ImVec2(a.x + d.x * t, a.y + d.y * t), ImVec2(a.x + d.x * e, a.y + d.y * e), colour,
                thickness);
  }
}

void dashed_outline(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 colour) {
  dashed_line(dl, ImVec2(p0.x, p1.y), p0, colour, 2.0f);
  dashed_line(dl, p0, ImVec2(p1.x, p0.y), colour, 2.0f);
  dashed_line(dl, ImVec2(p1.x, p0.y), p1, colour, 2.0f);
}

void draw_group_chart(const GroupChart& c, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float line = ImGui::GetTextLineHeight();
  chart_title(dl, p0, c.title.c_str());
  // Room for a label over the tallest bar, and the group names and axis name below.
  const float top = p0.y + line * 2.6f, bottom = p0.y + size.y - line * 2.4f;
  const float plot_h = std::max(10.0f, bottom - top);
  dl->AddLine(ImVec2(p0.x, bottom), ImVec2(p0.x + size.x, bottom), colours::kGrid);
  const std::size_t n = c.groups.size();
  const float group_w = n ? size.x / static_cast<float>(n) : size.x;
  const float bar_w = std::min(64.0f, group_w * 0.4f);
  const auto height = [&](double v) {
    return static_cast<float>(std::clamp(c.scale(v), 0.0, 1.0)) * plot_h;
  };
  std::vector<LabelledBar> bars;
  std::vector<std::string> texts;
  std::vector<ImU32> bar_colours;
  for (std::size_t i = 0; i < n; ++i) {
    const float gx = p0.x + group_w * static_cast<float>(i) + group_w * 0.5f;
    for (int side = 0; side < 2; ++side) {
      const std::optional<double>& v = side == 0 ? c.a[i] : c.b[i];
      const ImU32 colour = to_imgui(side == 0 ? palette::kRunA : palette::kRunB);
      const float x0 = side == 0 ? gx - bar_w - 2.0f : gx + 2.0f;
      if (v) {
        const float h = height(*v);
        dl->AddRectFilled(ImVec2(x0, bottom - h), ImVec2(x0 + bar_w, bottom), colour, 2.0f);
        texts.push_back(c.label(*v));
        bars.push_back(
            {x0, x0 + bar_w, bottom - h, bottom, ImGui::CalcTextSize(texts.back().c_str()).x});
        bar_colours.push_back(colour);
      }
    }
    if (i < c.ideal.size() && c.ideal[i]) {  // the line a perfect scheduler would reach
      const float y = bottom - height(*c.ideal[i]);
      dl->AddLine(ImVec2(gx - bar_w - 8.0f, y), ImVec2(gx + bar_w + 8.0f, y), colours::kText, 2.0f);
    }
    for (int side = 0; side < 2;
         ++side) {  // the paper's figure: a dashed outline of the bar it reported
      const auto& paper = side == 0 ? c.paper_a : c.paper_b;
      if (i >= paper.size() || !paper[i]) continue;
      const float x0 = side == 0 ? gx - bar_w - 2.0f : gx + 2.0f;
      dashed_outline(dl, ImVec2(x0 - 3.0f, bottom - height(*paper[i])),
                     ImVec2(x0 + bar_w + 3.0f, bottom), to_imgui(palette::kPaperFigure));
    }
    const float lw = ImGui::CalcTextSize(c.groups[i].c_str()).x;
    dl->AddText(ImVec2(gx - lw * 0.5f, bottom + 3.0f), colours::kText, c.groups[i].c_str());
  }
  // Each value on its own bar, in its colour (inside the bar's top: dark on the bar).
  for (const PlacedBarLabel& l :
       place_bar_labels(bars, line, p0.x, p0.x + size.x, p0.y + line * 1.2f)) {
    dl->AddText(ImVec2(l.x, l.y), l.inside ? colours::kBackground : bar_colours[l.bar],
                texts[l.bar].c_str());
  }
  const float aw = ImGui::CalcTextSize(c.axis.c_str()).x;
  dl->AddText(ImVec2(p0.x + (size.x - aw) * 0.5f, bottom + 3.0f + line * 1.1f), colours::kDimText,
              c.axis.c_str());
  ImGui::Dummy(size);
}

// What the chart's marks mean, on one line: the two runs, and the line and outline where drawn.
void chart_legend(const builtin::Lesson& lesson, const char* line_meaning, bool paper) {
  // legend_item leaves the cursor on its line; each text below does too, and the legend ends it.
  legend_item(to_imgui(palette::kRunA),
              ("A: " + std::string(lesson.a.label.substr(0, lesson.a.label.find(" (")))).c_str());
  legend_item(to_imgui(palette::kRunB),
              ("B: " + std::string(lesson.b.label.substr(0, lesson.b.label.find(" (")))).c_str());
  const ImVec4 text(0.86f, 0.87f, 0.9f, 1);
  if (line_meaning) {
    ImGui::TextColored(text, "line: %s", line_meaning);
    ImGui::SameLine(0, 14);
  }
  if (paper) legend_item(to_imgui(palette::kPaperFigure), "dashed outline: the paper's figure");
  ImGui::NewLine();
}

std::vector<std::optional<double>> column(const SeriesFigureData& d,
                                          std::optional<double> SeriesFigureRow::*field) {
  std::vector<std::optional<double>> out;
  for (const SeriesFigureRow& r : d.rows) out.push_back(r.*field);
  return out;
}

std::vector<std::string> groups(const SeriesFigureData& d) {
  std::vector<std::string> out;
  for (const SeriesFigureRow& r : d.rows) out.push_back(r.value);
  return out;
}

double largest(std::initializer_list<std::vector<std::optional<double>>> columns) {
  double top = 0.0;
  for (const auto& col : columns) {
    for (const auto& v : col) {
      if (v && std::isfinite(*v)) top = std::max(top, *v);
    }
  }
  return top > 0.0 ? top : 1.0;
}

void share_of_first(const SeriesFigureData& d, const std::string& parameter, ImVec2 size) {
  GroupChart c{"time, as a share of the same scheduler's time on " +
                   (d.rows.empty() ? std::string() : d.rows.front().value),
               parameter,
               groups(d),
               column(d, &SeriesFigureRow::a),
               column(d, &SeriesFigureRow::b),
               column(d, &SeriesFigureRow::ideal),
               column(d, &SeriesFigureRow::paper_a),
               column(d, &SeriesFigureRow::paper_b),
               {},
               {}};
  const double top = std::max(1.0, largest({c.a, c.b})) * 1.05;
  c.scale = [top](double v) { return v / top; };
  c.label = percent;
  draw_group_chart(c, size);
}

void time_and_slots(const SeriesFigureData& d, const std::string& parameter, ImVec2 size) {
  const ImVec2 half(size.x * 0.5f - 8.0f, size.y);
  GroupChart t{"",
               parameter,
               groups(d),
               column(d, &SeriesFigureRow::a),
               column(d, &SeriesFigureRow::b),
               {},
               column(d, &SeriesFigureRow::paper_a),
               column(d, &SeriesFigureRow::paper_b),
               {},
               {}};
  const double t_top = largest({t.a, t.b}) * 1.05;
  const TimeUnit unit = unit_for(t_top);
  t.title = std::string("time of the median run, ") + unit.name;
  t.scale = [t_top](double v) { return v / t_top; };
  t.label = [unit](double ns) { return in_unit(ns, unit); };
  draw_group_chart(t, half);
  ImGui::SameLine(0.0f, 16.0f);
  GroupChart s{"task slots needed (log scale)",
               parameter,
               groups(d),
               column(d, &SeriesFigureRow::a_slots),
               column(d, &SeriesFigureRow::b_slots),
               {},
               column(d, &SeriesFigureRow::paper_a_slots),
               column(d, &SeriesFigureRow::paper_b_slots),
               {},
               {}};
  const double s_top = std::log10(largest({s.a, s.b, s.paper_a, s.paper_b}) * 1.5);
  s.scale = [s_top](double v) { return v > 1.0 ? std::log10(v) / s_top : 0.0; };
  s.label = compact_count;
  draw_group_chart(s, half);
}

void time_only(const SeriesFigureData& d, const std::string& parameter, ImVec2 size) {
  GroupChart t{"",
               parameter,
               groups(d),
               column(d, &SeriesFigureRow::a),
               column(d, &SeriesFigureRow::b),
               column(d, &SeriesFigureRow::ideal),
               {},
               {},
               {},
               {}};
  const double top = largest({t.a, t.b}) * 1.05;
  const TimeUnit unit = unit_for(top);
  t.title = std::string("time of the median run, ") + unit.name;
  t.scale = [top](double v) { return v / top; };
  t.label = [unit](double ns) { return in_unit(ns, unit); };
  draw_group_chart(t, size);
}

void gpu_scaling(const SeriesFigureData& d, ImVec2 size) {
  const ImVec2 half(size.x * 0.5f - 8.0f, size.y);
  GroupChart sp{"speedup over its own time on 1 GPU",
                "GPUs",
                groups(d),
                column(d, &SeriesFigureRow::a),
                column(d, &SeriesFigureRow::b),
                column(d, &SeriesFigureRow::ideal),
                {},
                {},
                {},
                {}};
  const double top = largest({sp.a, sp.b, sp.ideal}) * 1.05;
  sp.scale = [top](double v) { return v / top; };
  sp.label = times_x;
  draw_group_chart(sp, half);
  ImGui::SameLine(0.0f, 16.0f);
  const std::size_t gpus = std::max(d.a_device_busy_ns.size(), d.b_device_busy_ns.size());
  GroupChart busy{"", "GPU", {}, {}, {}, {}, {}, {}, {}, {}};
  for (std::size_t g = 0; g < gpus; ++g) {
    busy.groups.push_back(std::to_string(g));
    busy.a.push_back(g < d.a_device_busy_ns.size() ? std::optional<double>(d.a_device_busy_ns[g])
                                                   : std::nullopt);
    busy.b.push_back(g < d.b_device_busy_ns.size() ? std::optional<double>(d.b_device_busy_ns[g])
                                                   : std::nullopt);
  }
  const double busy_top = largest({busy.a, busy.b}) * 1.05;
  busy.scale = [busy_top](double v) { return v / busy_top; };
  const TimeUnit unit = unit_for(busy_top);
  busy.title = "busy time of each GPU, on " + std::to_string(gpus) + ", " + unit.name;
  busy.label = [unit](double ns) { return in_unit(ns, unit); };
  draw_group_chart(busy, half);
}

// The recordings are read once: they are shipped files that do not change while the viewer runs.
struct LoadedSeries {
  std::optional<builtin::SeriesRecording> recording;
  std::string error;  // why there is none
};

const LoadedSeries& loaded_series(const builtin::Lesson& lesson) {
  static std::map<std::string, LoadedSeries> cache;
  const std::string key(lesson.name);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  LoadedSeries loaded;
  if (const auto file = builtin::find_series_recording(lesson)) {
    try {
      loaded.recording = builtin::read_series(*file);
    } catch (const std::exception& e) {
      loaded.error = e.what();
    }
  } else {
    loaded.error =
        "its recording " + std::string(lesson.series->recording) + " is not installed here";
  }
  return cache.emplace(key, std::move(loaded)).first->second;
}

}  // namespace

const builtin::SeriesRecording* lesson_recording(const builtin::Lesson& lesson) {
  if (!lesson.series) return nullptr;
  const LoadedSeries& s = loaded_series(lesson);
  return s.recording ? &*s.recording : nullptr;
}

bool draw_lesson_series(const builtin::Lesson& lesson, ImVec2 size) {
  if (!lesson.series) return false;
  const LoadedSeries& s = loaded_series(lesson);
  if (!s.recording) {
    ImGui::TextDisabled("The key figure's series: %s.", s.error.c_str());
    return false;
  }
  const builtin::SeriesRecording& rec = *s.recording;
  const float top_y = ImGui::GetCursorScreenPos().y;
  const SeriesFigureData d = builtin::series_figure(lesson, rec);
  const std::string over = rec.parameter == "gpus" ? "GPU count" : rec.parameter;
  ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.45f, 1),
                     "The key figure: the claim at each %s, recorded on %s (%s)", over.c_str(),
                     rec.device.c_str(), rec.recorded.c_str());
  text_wrapped("measured: " + d.measured);
  const bool paper = !lesson.series->paper_marks.empty();
  chart_legend(lesson,
               d.figure == builtin::SeriesFigure::ShareOfFirst ? "the work left"
               : d.figure == builtin::SeriesFigure::GpuScaling ? "linear speedup"
               : d.figure == builtin::SeriesFigure::Time ? "B's time if its work alone counted"
                                                         : nullptr,
               paper);
  const float used = ImGui::GetCursorScreenPos().y - top_y;
  const ImVec2 chart(size.x, std::max(120.0f, size.y - used));
  switch (d.figure) {
    case builtin::SeriesFigure::ShareOfFirst: share_of_first(d, rec.parameter, chart); break;
    case builtin::SeriesFigure::TimeAndSlots: time_and_slots(d, rec.parameter, chart); break;
    case builtin::SeriesFigure::GpuScaling: gpu_scaling(d, chart); break;
    case builtin::SeriesFigure::Time: time_only(d, rec.parameter, chart); break;
  }
  return true;
}

}  // namespace gpulb::viewer
