// gpulb-viewer --bench-frames: load time and frame times on a generated trace of ten million
// events, the figures docs/benchmarks.md records against the targets (<= 2 s to load, <= 16 ms a
// frame, <= 4 bytes an event on disk).
#pragma once

#include <cstdint>
#include <string>

namespace gpulb::viewer {

struct BenchOptions {
  std::uint64_t events = 10'000'000;
  int width = 1600, height = 1000;
  // measured frames per case, after a few unmeasured ones; 0: load and memory only
  int frames = 60;
  // The trace whose event mix the bench trace repeats (make_tiled_trace): a path, a shipped
  // trace's file name, or "synthetic" for the regular generated trace (0.9 bytes an event).
  std::string tmpl = "uts-geometric-d7-work-stealing-h200.gpulb";
  std::string only;  // run only the cases whose name holds this ("folded", "occupancy"); "" for all
};

// Prints a report on stdout; returns 0, or 1 when a target is missed.
int run_bench(const BenchOptions& options);

}  // namespace gpulb::viewer
