// A lesson's key figure drawn from its two traces (builtin::TraceFigure), for a claim that a
// trace shows whole: the tasks each SM ran (Grossman), the host's launches over the run (G-Charm).
// A above B, on one scale, each with the figure the claim is about written over it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "draw.hpp"
#include "findings.hpp"
#include "gpulb/builtin/lesson_verdict.hpp"
#include "launches.hpp"
#include "loads.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

const ImVec4 kHeading(0.95f, 0.85f, 0.45f, 1.0f);

std::string share_text(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, share < 0.01 ? "%.2f%%" : "%.0f%%", share * 100.0);
  return buf;
}

std::string side_name(const builtin::LessonRun& run) {
  return std::string(run.label.substr(0, run.label.find(" (")));
}

// "max/min 2.04 (724 / 355), mean 494, std 71": Grossman's ratio and his Dijkstra figures.
std::string tasks_per_sm_text(const std::vector<double>& tasks) {
  if (tasks.empty()) return "no SM ran a task";
  const auto [lo, hi] = std::minmax_element(tasks.begin(), tasks.end());
  double mean = 0.0, var = 0.0;
  for (double t : tasks) mean += t;
  mean /= static_cast<double>(tasks.size());
  for (double t : tasks) var += (t - mean) * (t - mean);
  const double std_dev = std::sqrt(var / static_cast<double>(tasks.size()));
  char buf[160];
  if (*lo > 0.0) {
    std::snprintf(buf, sizeof buf,
                  "busiest SM over idlest %.2f (%.0f / %.0f tasks), mean %.0f, std %.0f", *hi / *lo,
                  *hi, *lo, mean, std_dev);
  } else {
    std::snprintf(buf, sizeof buf, "an SM ran no task (busiest %.0f), mean %.0f, std %.0f", *hi,
                  mean, std_dev);
  }
  return buf;
}

void tasks_per_sm(const builtin::Lesson& lesson, const TraceModel& a, const TraceModel& b,
                  ImVec2 size) {
  ImGui::TextColored(kHeading,
                     "The key figure: tasks run by each SM, the same input under both policies "
                     "(Grossman's Figure 3)");
  const float chart_h = (size.y - ImGui::GetTextLineHeightWithSpacing() * 3.0f) * 0.5f;
  double top = 0.0;
  const Loads la = group_loads(a, replay_state_at(a, static_cast<double>(a.end_ns())), false);
  const Loads lb = group_loads(b, replay_state_at(b, static_cast<double>(b.end_ns())), false);
  for (const Loads* l : {&la, &lb}) {
    for (double t : l->tasks) top = std::max(top, t);
  }
  for (int side = 0; side < 2; ++side) {
    const Loads& l = side == 0 ? la : lb;
    const std::string title = std::string(side == 0 ? "A, " : "B, ") +
                              side_name(side == 0 ? lesson.a : lesson.b) + ": " +
                              tasks_per_sm_text(l.tasks);
    bar_chart(
        title.c_str(), l.tasks, l.axis, ImVec2(size.x, chart_h), format_count,
        [&l](int k) { return l.labels[static_cast<std::size_t>(k)]; },
        to_imgui(side == 0 ? palette::kRunA : palette::kRunB), top, BarRatio::MaxOverMin);
  }
}

// One run's launches as ticks over the run: x the launch's time, height its size on the scale
// both runs share, and the run's launches and GPU time in words above.
void launch_strip(const char* tag, const builtin::LessonRun& run, const TraceModel& m,
                  const LaunchSeries& s, double span_ns, std::uint32_t largest, ImU32 colour,
                  ImVec2 size) {
  const std::string head = std::string(tag) + side_name(run) + ": " + launch_summary(s) +
                           "; a request ran on the GPU during " +
                           share_text(1.0 - no_task_share(m)) + " of the run";
  text_wrapped(head);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float h = std::max(20.0f, size.y - ImGui::GetTextLineHeightWithSpacing() * 2.0f);
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + h), colours::kLaneEven);
  for (const Launch& l : s.launches) {
    const float x = p0.x + static_cast<float>(static_cast<double>(l.at_ns) / span_ns) * size.x;
    const float bar =
        largest ? h * static_cast<float>(l.blocks) / static_cast<float>(largest) : 0.0f;
    dl->AddLine(ImVec2(x, p0.y + h), ImVec2(x, p0.y + h - std::max(bar, 1.0f)), colour, 1.0f);
  }
  ImGui::Dummy(ImVec2(size.x, h + 2.0f));
}

void launches(const builtin::Lesson& lesson, const TraceModel& a, const TraceModel& b,
              ImVec2 size) {
  ImGui::TextColored(
      kHeading,
      "The key figure: every launch over the run, its height the requests it combined (one scale)");
  const LaunchSeries la = launch_series(a), lb = launch_series(b);
  const double span_ns = static_cast<double>(
      std::max({a.end_ns() - a.begin_ns(), b.end_ns() - b.begin_ns(), std::uint64_t{1}}));
  const std::uint32_t largest = std::max(la.largest, lb.largest);
  const ImVec2 strip(size.x, (size.y - ImGui::GetTextLineHeightWithSpacing() * 3.0f) * 0.5f);
  launch_strip("A, ", lesson.a, a, la, span_ns, largest, to_imgui(palette::kRunA), strip);
  launch_strip("B, ", lesson.b, b, lb, span_ns, largest, to_imgui(palette::kRunB), strip);
  const std::string axis = "0 to " + builtin::format_duration_ns(span_ns) +
                           " (the longer run); tallest: " + std::to_string(largest) + " requests";
  ImGui::TextColored(ImVec4(0.6f, 0.62f, 0.67f, 1), "%s", axis.c_str());
}

}  // namespace

bool draw_lesson_trace_figure(const builtin::Lesson& lesson, const TraceModel& a,
                              const TraceModel& b, ImVec2 size) {
  switch (lesson.trace_figure) {
    case builtin::TraceFigure::TasksPerSm: tasks_per_sm(lesson, a, b, size); return true;
    case builtin::TraceFigure::Launches: launches(lesson, a, b, size); return true;
    case builtin::TraceFigure::None: break;
  }
  return false;
}

}  // namespace gpulb::viewer
