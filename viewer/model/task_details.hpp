// One task as the user clicks it, and the tasks a search finds. What the trace says about where a
// task came from is what its worker recorded between its previous task's end and this task's
// begin: a Steal (victim), a QueueLevel (the queue it dequeued from and what was left), a
// DequeLevel (a pop from its own deque). The trace records no payload and no parent id, so the
// details say so rather than guess; the spawn event after the task gives the children it created
// (a SpawnBatch their ids too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "time_axis.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

struct TaskRef {
  std::uint32_t lane = 0;  // index into TraceModel::lanes()
  std::uint32_t zone = 0;  // index into Lane::zones
  bool operator==(const TaskRef&) const = default;
};

// A task of one of the runs on screen: 0 is trace A (the timeline's, compare's upper panel), 1 is
// trace B (compare's lower panel). Compare's panels name lanes of two models, so a pick or a
// search result says which.
struct RunTask {
  int run = 0;
  TaskRef task;
  bool operator==(const RunTask&) const = default;
};

struct TaskDetails {
  std::uint32_t id = 0;
  std::uint16_t kind = 0;
  std::uint64_t begin_ns = 0, end_ns = 0;
  std::string worker;                        // "GPU 0 block 12, SM 3"
  std::optional<std::uint32_t> stolen_from;  // the victim's worker rank
  std::uint32_t stolen_from_device = 0;  // the victim's device (another GPU's: a steal across GPUs)
  std::optional<std::uint16_t> queue;    // the queue it was dequeued from
  std::optional<std::int64_t> queue_left;    // tasks left in that queue after the dequeue
  std::optional<std::int64_t> deque_left;    // popped from its own deque: tasks left there
  std::uint32_t spawned = 0;                 // children created while it ran (Spawn, SpawnBatch)
  std::optional<std::uint32_t> first_child;  // their first id, where a SpawnBatch names them
  // Its begin or end was placed, not read from a clock (trace::kTimeInterpolated: the CPU backend
  // times runs of short tasks once a batch): its duration is its batch's mean.
  bool interpolated = false;
  std::string source;  // one line: "stolen from worker 12", "queue 1 (1,023 left)", "not recorded"
};

TaskDetails task_details(const TraceModel& model, TaskRef task);

// The task drawn at time t on a lane (within tol_ns of its edges), if any.
std::optional<TaskRef> task_at(const TraceModel& model, std::uint32_t lane, double t_ns,
                               double tol_ns);

// Tasks with this id and/or kind (none given: none found), in lane order then time, at most `max`.
std::vector<TaskRef> find_tasks(const TraceModel& model, std::optional<std::uint32_t> id,
                                std::optional<std::uint16_t> kind, std::size_t max = 10'000);

// What a click at x on a lane picks, on a panel whose axis is on its trace's clock (compare's
// panels: panel_axis of the shared axis), within 2 px of a task's edges.
std::optional<RunTask> pick_task(const TraceModel& model, int run, std::uint32_t lane,
                                 const TimeAxis& axis, double x);

// A search as typed: "1234" (a task id), "k2" / "kind 2" (a kind), or both ("1234 k2").
// nullopt where it is neither.
struct TaskQuery {
  std::optional<std::uint32_t> id;
  std::optional<std::uint16_t> kind;
};
std::optional<TaskQuery> parse_task_query(const std::string& text);

// The search over every run on screen (A, then B where compare shows one): each run's matches in
// lane order then time, each tagged with its run, at most `max_per_run` of each.
std::vector<RunTask> find_tasks_in_runs(const TraceModel& a, const TraceModel* b,
                                        const TaskQuery& query, std::size_t max_per_run);

// The search's count as the toolbar shows it: "3 of 14" for one run; with two, where each
// match is and which run the shown one is in: "3 of 14 (A 9, B 5): in A". `capped`: a run hit
// its maximum ("14+").
std::string found_note(const std::vector<RunTask>& found, int at, bool two_runs, bool capped);

}  // namespace gpulb::viewer
