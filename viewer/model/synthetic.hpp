// A generated trace with the shape of a real GPU run (persistent blocks on SMs, queue levels,
// idle spells, steals, spawns), for the frame-time bench (10 million events) and for tests that
// need a known trace without running anything.
#pragma once

#include <cstdint>

#include "gpulb/tracing/trace.hpp"

namespace gpulb::viewer {

struct SyntheticSpec {
  std::uint32_t sms = 132;
  std::uint32_t workers_per_sm = 8;
  std::uint64_t events = 10'000'000;  // about this many in all
  std::uint16_t kinds = 4;            // task kinds
  double mean_task_ns = 4000.0;
  bool idle = true;                   // idle spells with failed dequeues, and steals
  std::uint64_t seed = 1;
};

// Deterministic for a spec; worker events are 32 ns apart at least (the H100's %globaltimer step).
trace::Trace make_synthetic_trace(const SyntheticSpec& spec);

}  // namespace gpulb::viewer
