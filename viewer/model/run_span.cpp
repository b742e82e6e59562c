#include "run_span.hpp"

#include <algorithm>
#include <limits>

namespace gpulb::viewer {

TimeSpan run_span(const TraceModel& model) {
  const trace::TraceStatistics& st = model.stats();
  if (st.workers == 0)
    return {static_cast<double>(model.begin_ns()), static_cast<double>(model.end_ns())};
  return {static_cast<double>(st.begin_ns), static_cast<double>(st.end_ns)};
}

TimeSpan fit_span(const TraceModel& model) {
  const TimeSpan run = run_span(model);
  const double margin = (run.end_ns - run.begin_ns) * 0.01;
  return {run.begin_ns - margin, run.end_ns + margin};
}

double launch_ns(const TraceModel& model) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  for (const DeviceGroup& dev : model.devices()) {
    for (const std::uint32_t i : dev.host_lanes) {
      for (const Marker& m : model.lanes()[i].markers) {
        if (m.kind == trace::EventKind::KernelLaunch) {
          first = std::min(first, m.time_ns);
          break;  // markers are in time order
        }
      }
    }
  }
  const double run_begin = run_span(model).begin_ns;
  // A launch after the first worker event would be another kernel's: the run began before it.
  return first == std::numeric_limits<std::uint64_t>::max()
             ? run_begin
             : std::min(static_cast<double>(first), run_begin);
}

}  // namespace gpulb::viewer
