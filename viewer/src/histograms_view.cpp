// Load histograms: tasks and busy time per worker, per SM (or device) and per device, and the task
// duration histogram on a log axis. All at the playhead, so a replay shows load accumulating.
#include <algorithm>
#include <string>
#include <vector>

#include "draw.hpp"
#include "loads.hpp"
#include "time_format.hpp"
#include "views.hpp"

namespace gpulb::viewer {
namespace {

// Durations of the tasks finished by the playhead; recomputed only when the playhead moves.
const Histogram& duration_histogram(const TraceModel& model, const ReplayState& state) {
  static const TraceModel* cached_model = nullptr;
  static double cached_time = -1.0;
  static Histogram cached;
  if (cached_model != &model || cached_time != state.time_ns) {
    std::vector<double> d;
    d.reserve(state.tasks_done);
    for (std::size_t i = 0; i < model.lanes().size(); ++i) {
      const Lane& lane = model.lanes()[i];
      for (std::uint64_t k = 0; k < state.lanes[i].tasks_done; ++k) {
        d.push_back(static_cast<double>(lane.zones[k].end_ns - lane.zones[k].begin_ns));
      }
    }
    cached = log_histogram(d, 40);
    // Keep the bins of the whole run while replaying, so bars grow in place instead of jumping.
    if (state.tasks_done < model.task_count() && model.min_task_ns() > 0) {
      const std::vector<double> range = {static_cast<double>(model.min_task_ns()),
                                         static_cast<double>(model.max_task_ns())};
      Histogram frame = log_histogram(range, 40);
      frame.counts.assign(frame.counts.size(), 0);
      for (const double v : d) ++frame.counts[static_cast<std::size_t>(bin_of(frame, v))];
      cached = std::move(frame);
    }
    cached_model = &model;
    cached_time = state.time_ns;
  }
  return cached;
}

}  // namespace

void draw_histograms(const TraceModel& model, const ReplayState& state, ImVec2 size) {
  const ValueFormat count = format_count;
  const ValueFormat time = [](double v) { return format_time(v); };
  const Loads w = worker_loads(model, state);
  bool any_sms = false;
  for (const DeviceGroup& d : model.devices()) any_sms = any_sms || d.has_sms;
  const Loads g = group_loads(model, state, false);
  const Loads d = group_loads(model, state, true);
  if (w.silent > 0) {
    ImGui::TextColored(
        ImVec4(0.6f, 0.62f, 0.67f, 1),
        "%zu worker tracks recorded no event: not counted, as in the summary (%zu workers).",
        w.silent, w.busy.size());
    size.y -= ImGui::GetTextLineHeightWithSpacing();
  }

  // The charts that say something for this trace, two a row.
  struct Chart {
    const char* title;
    const Loads* loads;
    const std::vector<double>* values;
    const ValueFormat* fmt;
    ImU32 colour;
  };
  std::vector<Chart> charts = {{"Tasks per worker", &w, &w.tasks, &count, colours::kBar},
                               {"Busy time per worker", &w, &w.busy, &time, colours::kBusy}};
  if (any_sms) {
    charts.push_back({"Tasks per SM", &g, &g.tasks, &count, colours::kBar});
    charts.push_back(
        {"Busy time per SM (sum over its workers)", &g, &g.busy, &time, colours::kBusy});
  }
  if (model.devices().size() > 1) {
    charts.push_back({"Tasks per device", &d, &d.tasks, &count, colours::kBar});
    charts.push_back(
        {"Busy time per device (sum over its workers)", &d, &d.busy, &time, colours::kBusy});
  }
  charts.push_back(
      {"Idle time per worker (alive, not in a task)", &w, &w.idle, &time, colours::kIdle});
  const int cells = static_cast<int>(charts.size()) + 1;  // + the duration histogram
  const int rows = (cells + 1) / 2;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const ImVec2 cell((size.x - gap) * 0.5f,
                    (size.y - static_cast<float>(rows - 1) * ImGui::GetStyle().ItemSpacing.y) /
                        static_cast<float>(rows));
  for (std::size_t i = 0; i < charts.size(); ++i) {
    const Chart& c = charts[i];
    const Loads* loads = c.loads;
    ImGui::PushID(static_cast<int>(i));
    bar_chart(
        c.title, *c.values, loads->axis, cell, *c.fmt,
        [loads](int k) { return loads->labels[static_cast<std::size_t>(k)]; }, c.colour);
    ImGui::PopID();
    if (i % 2 == 0) ImGui::SameLine();
  }
  histogram_chart("Task durations (log axis)", duration_histogram(model, state), cell, time);
}

}  // namespace gpulb::viewer
