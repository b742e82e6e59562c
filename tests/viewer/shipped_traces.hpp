// Real GPU traces, loaded once per test binary. Two sets:
// - recorded(): the recordings in tests/fixtures/traces that the model tests take their figures
//   from. They are fixed, so a re-recording of what ships cannot move a test's expectation; some
//   show behaviour the runtime no longer has (md-64k-tq-2xh200: GPU 1 ran no task), which the
//   viewer must still explain.
// - shipped(), all_shipped(): what scenarios/traces ships today, for tests of a property that
//   every shipped trace must have.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpulb/tracing/trace_file.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer::testing {

inline const TraceModel& cached_model(const std::string& path) {
  static std::map<std::string, std::unique_ptr<TraceModel>> cache;
  auto& m = cache[path];
  if (!m)
    m = std::make_unique<TraceModel>(std::make_shared<const trace::Trace>(trace::read_trace(path)));
  return *m;
}

inline const TraceModel& shipped(const std::string& file) {
  return cached_model(std::string(GPULB_SHIPPED_TRACES) + "/" + file);
}

inline const TraceModel& recorded(const std::string& file) {
  return cached_model(std::string(GPULB_RECORDED_TRACES) + "/" + file);
}

// Every shipped trace, by name.
inline std::vector<std::filesystem::path> all_shipped() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(GPULB_SHIPPED_TRACES)) {
    if (e.path().extension() == ".gpulb") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The fixtures of recorded(), by role.
inline constexpr const char* kUts = "uts-geometric-d7-work-stealing-h100.gpulb";
inline constexpr const char* kP4Queue = "patterns-P4-task-queue-h100.gpulb";
inline constexpr const char* kConnect4Static = "connect4-4-static-list-h100.gpulb";
inline constexpr const char* kConnect4Stealing = "connect4-4-work-stealing-h100.gpulb";
inline constexpr const char* kP3Paper2Gpu = "patterns-P3-task-queue-paper-2xh200.gpulb";
inline constexpr const char* kP3Modern2Gpu = "patterns-P3-task-queue-modern-2xh200.gpulb";
// A merged trace of 4 MPI ranks (CPU backend), with chunks moved between them.
inline constexpr const char* kUts4Ranks = "uts-d9-work-stealing-4ranks-cpu.gpulb";
// Runs on 4 GPUs: 528 SMs to lay out in one screen.
inline constexpr const char* kMd4Gpu = "md-64k-tq-4xh200.gpulb";
inline constexpr const char* kUts4Gpu = "uts-geometric-d7-work-stealing-4xh200.gpulb";

}  // namespace gpulb::viewer::testing
