// A worker's private slice of a trace buffer, passed by value to device code and CPU workers
// (the cuCollections owning-object / ref split: TraceBuffer owns the memory, TraceSegment views it).
//
// No shared cursor: each worker appends to its own segment, so recording costs a store and an
// increment of a worker-private count (docs/architecture.md, Facts: 0.02 ns an event on an H100 against 0.75 ns for
// a shared atomic cursor). A full segment keeps counting: count - capacity events were dropped.
#pragma once

#include <cstdint>

#include "gpulb/tracing/event.hpp"

namespace gpulb::trace {

struct TraceSegment {
  Event* events = nullptr;  // capacity slots; nullptr when tracing is off
  std::uint32_t capacity = 0;
  std::uint32_t* count = nullptr;  // events offered so far (may exceed capacity)

  GPULB_HD bool enabled() const { return events != nullptr; }

  // Only the owning worker (one thread of it) calls this: the count is private, no atomic needed.
  GPULB_HD void record(const Event& e) const {
    if (events == nullptr) return;
    const std::uint32_t n = *count;
    if (n < capacity) events[n] = e;
    if (n != 0xFFFFFFFFu) *count = n + 1;
  }
};

}  // namespace gpulb::trace
