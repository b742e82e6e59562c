// The kernel launches a host made (KernelLaunch events on host tracks): when, how many blocks,
// and why (combining's reasons: full, timeout, static, eager, drain). G-Charm's lesson draws them
// over time, adaptive against static.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpulb::viewer {

class TraceModel;

struct Launch {
  std::uint64_t at_ns = 0;  // from the run's begin (TraceModel::begin_ns)
  std::uint32_t blocks = 0;
  std::string reason;  // "full", "timeout", ...; empty where the launcher gives none
};

struct LaunchSeries {
  std::vector<Launch> launches;                  // in time order
  std::map<std::string, std::size_t> by_reason;  // "full" -> 40
  std::uint32_t largest = 0;
  double mean_blocks = 0.0;
};

LaunchSeries launch_series(const TraceModel& model);

// "43 launches, 1,862 blocks each on average: full 40, drain 3".
std::string launch_summary(const LaunchSeries& series);

}  // namespace gpulb::viewer
