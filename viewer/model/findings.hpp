// Findings: the facts of a trace a teacher would point at, stated from the trace alone.
// Each is a sentence and the time range it is about (the Findings panel zooms there on a
// click). A few robust detectors, computed once on load from the model's lanes and series:
//   tail          the end of the run on few workers (busy below half the run's peak)
//   no-task gap   time inside the run with no task running anywhere (launch gaps, host waits)
//   launch gap    a device with no kernel running between its launches (the host's turn)
//   idle SM       the SM (or worker, without SM ids) busy the least, against the median
//   device finish GPUs of one run finishing apart
//   queue         a queue empty while most of its device's workers still running idled (starved by
//                 its feeder), or holding tasks while most of them idled; up to its kernel's end
//   idle device   a device of the run that ran no task (listed first)
//   steals        how few victims most steals hit
#pragma once

#include <string>
#include <vector>

#include "compare_inputs.hpp"
#include "time_format.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {

enum class FindingKind {
  Tail,
  NoTaskGap,
  IdleSm,
  DeviceFinish,
  QueueStarved,
  QueueWaiting,
  StealConcentration,
  LaunchGap,
  IdleDevice
};

// How much a finding matters for the run's time: Note (worth a look), Warning (costs a visible
// share of the run).
enum class Severity { Note, Warning };

struct Finding {
  FindingKind kind;
  Severity severity;
  std::string text;         // one sentence, times as format_time writes them
  double begin_ns, end_ns;  // trace clock, as the timeline's axis; begin < end
  double share;  // the finding's figure as a fraction: of the run (tail, gaps, queues, devices),
      // of the median SM's busy share that the idlest SM lacks, of the workers not hit by 80% of the steals
};

// Thresholds, named so that the tests and the docs can state them.
struct FindingLimits {
  double tail_min_share = 0.05;       // report a tail of at least 5% of the run
  double gap_min_share = 0.02;        // report no-task time of at least 2% of the run in all
  double idle_sm_ratio = 0.8;         // an SM busy under 80% of the median SM's share
  double device_finish_share = 0.05;  // GPUs finishing at least 5% of the run apart
  double queue_idle_share = 0.5;      // "most workers idle": under half busy
  double queue_min_share = 0.02;      // a queue interval of at least 2% of the run
  double steal_victim_share = 0.25;  // 80% of the steals hit under 25% of the workers: concentrated
  double launch_gap_share = 0.02;    // no kernel running for 2% of the run or more between launches
};

// In the order the panel lists them: Warnings first, then by the share of the run they concern.
std::vector<Finding> compute_findings(const TraceModel& model, const FindingLimits& limits = {});

const char* finding_kind_name(FindingKind kind);  // "tail", "no task", "idle SM", ...

// The range to zoom to for a finding: its own, widened to at least 1% of the run a side so that a
// short gap shows with its neighbourhood.
TimeSpan finding_view_range(const TraceModel& model, const Finding& f);

// The figures a lesson sets side by side (two runs of one input under two policies): makespan,
// efficiency, tasks per SM, busy time per device, launches, steals, time with no task running.
// A row is left out where neither trace has the figure (no SM ids, one device, no launches).
struct CompareFact {
  std::string name, a, b;
};
std::vector<CompareFact> compare_facts(const TraceModel& a, const TraceModel& b);
// "B took 1.21x the time of A (1.52 ms against 1.26 ms).", where both ran one input; else the
// makespans and what differs, without a ratio.
std::string compare_headline(const TraceModel& a, const TraceModel& b, const InputMatch& input);

// Share of the run with no task running on any worker.
double no_task_share(const TraceModel& model);

}  // namespace gpulb::viewer
