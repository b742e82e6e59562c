// What every export of a trace covers and where its clock starts: the run and the host work
// around it, not a host event far from it.
//
// The run is its first to its last worker event (the summary's makespan). The host work that
// led up to it is kept: the first kernel launch, and before that each host event within a tenth
// of the makespan of the next kept one (combining's queue filling over the 17 ms before its first
// launch); likewise after the run (kernel ends, transfers back). A host event further out is left
// out: the initial task that work-stealing writes into the sharing queue before it allocates,
// 45 ms before four GPUs start their blocks, would otherwise stretch the timeline 60-fold.
// Every export counts time in ns from the window's start, the same clock in every format.
#pragma once

#include <cstdint>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/trace.hpp"

namespace gpulb::trace {

struct ExportWindow {
  std::uint64_t origin_ns = 0;  // the export's time 0, on the trace's clock
  TimeRange
      range;  // the events exported, on the trace's clock: the window cut to a requested range
  // events outside the window (those outside only the requested range not counted)
  std::uint64_t left_out = 0;

  bool keeps(std::uint64_t t) const { return range.contains(t); }
  // A kept time on the export's clock (a task that overlaps the window from before it starts at 0).
  std::uint64_t at(std::uint64_t t) const { return t > origin_ns ? t - origin_ns : 0; }
};

// The window of `trace`, cut to `requested` (the trace's clock; the default: all of it).
ExportWindow export_window(const Trace& trace, TimeRange requested = {});

}  // namespace gpulb::trace
