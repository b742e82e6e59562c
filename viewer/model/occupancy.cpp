#include "occupancy.hpp"

#include <algorithm>
#include <map>

namespace gpulb::viewer {

namespace {

// Every plot of a kind topped at the kind's highest top, its ticks made again for it.
void share_scales(std::vector<OccupancyPlot>& plots) {
  std::map<OccupancyPlot::Kind, double> top;
  for (const OccupancyPlot& p : plots) top[p.kind] = std::max(top[p.kind], p.top);
  for (OccupancyPlot& p : plots) {
    p.top = top[p.kind];
    p.ticks = value_ticks(p.top, 4);
  }
}

}  // namespace

OccupancyPlots occupancy_plots(const TraceModel& model, CounterScale scale) {
  OccupancyPlots out;
  std::vector<std::string> empty;
  auto add = [&](OccupancyPlot::Kind kind, std::string title, const StepSeries& s,
                 double capacity) {
    OccupancyPlot p;
    p.kind = kind;
    p.title = std::move(title);
    p.series = &s;
    p.capacity = capacity;
    // The peak sets the scale; the capacity is said in words (and drawn where it fits).
    p.top = std::max(1.0, static_cast<double>(s.max_value()) * 1.05);
    p.caption = "max " + std::to_string(s.max_value());
    if (capacity > 0)
      p.caption += " of " + std::to_string(static_cast<long long>(capacity)) + " workers";
    p.ticks = value_ticks(p.top, 4);
    out.plots.push_back(std::move(p));
  };
  for (const QueueSeries& q : model.queues()) {
    if (q.level.max_value() <= 0) {  // never held a task: a panel would show nothing
      empty.push_back(q.label);
      continue;
    }
    const auto kind = q.source == QueueSeries::Source::Pool     ? OccupancyPlot::Kind::Pool
                      : q.source == QueueSeries::Source::Deques ? OccupancyPlot::Kind::Deques
                                                                : OccupancyPlot::Kind::Queue;
    add(kind, q.label, q.level, 0.0);
  }
  for (const DeviceGroup& dev : model.devices()) {
    if (!dev.busy) continue;
    add(OccupancyPlot::Kind::Busy, dev.label.substr(0, dev.label.find(':')) + " busy workers",
        *dev.busy, static_cast<double>(dev.workers));
  }
  if (scale == CounterScale::Shared) share_scales(out.plots);
  for (const std::string& e : empty) out.note += (out.note.empty() ? "" : ", ") + e;
  if (!empty.empty()) out.note += " stayed empty (not plotted)";
  return out;
}

}  // namespace gpulb::viewer
