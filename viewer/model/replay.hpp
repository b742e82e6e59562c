// The state of a run at one instant (the replay playhead): what each worker has done so far and
// what it is running, and every queue's level. The histograms and occupancy views draw this.
#pragma once

#include <cstdint>
#include <vector>

#include "trace_model.hpp"

namespace gpulb::viewer {

struct LaneState {
  std::uint64_t tasks_done = 0;  // tasks that ended at or before the playhead
  std::uint64_t busy_ns = 0;     // busy time up to the playhead (a running task counts in part)
  int running = -1;              // index into Lane::zones of the task running now, or -1
};

struct GroupLoad {
  std::uint64_t tasks = 0;
  std::uint64_t busy_ns = 0;
};

struct ReplayState {
  double time_ns = 0.0;
  std::vector<LaneState> lanes;            // parallel to TraceModel::lanes()
  std::vector<std::int64_t> queue_levels;  // parallel to TraceModel::queues()
  std::uint64_t tasks_done = 0;
  std::uint32_t running = 0;  // workers running a task now
};

// O(lanes x log tasks): cheap enough to recompute every frame while the playhead moves.
LaneState lane_state_at(const Lane& lane, double t_ns);
ReplayState replay_state_at(const TraceModel& model, double t_ns);

}  // namespace gpulb::viewer
