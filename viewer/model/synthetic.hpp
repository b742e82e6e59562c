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
  bool idle = true;  // idle spells with failed dequeues, and steals
  std::uint64_t seed = 1;
};

// Deterministic for a spec; worker events are 32 ns apart at least (the H100's %globaltimer step).
trace::Trace make_synthetic_trace(const SyntheticSpec& spec);

// A long trace with the event mix of a real one: `real`'s tracks repeated end to end in time until
// there are about `events` events, as if the run had been repeated. Each copy's time steps are
// stretched by up to +-6% (in 32 ns steps where the template is on that grid), its task ids are
// moved past the previous copy's, and its queue levels shifted a little, so the copies compress
// like recorded data (2-5 bytes an event) and not like a loop (the regular synthetic trace: 0.9).
// Task pairs, steals, levels and lanes stay as real runs write them. Deterministic for a seed.
trace::Trace make_tiled_trace(const trace::Trace& real, std::uint64_t events,
                              std::uint64_t seed = 1);

}  // namespace gpulb::viewer
