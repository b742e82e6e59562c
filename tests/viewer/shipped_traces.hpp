// The real GPU traces shipped in scenarios/traces (H100 and 2xH200 runs), loaded once per test
// binary: the viewer's defects of issue 13 showed on them, so their tests read them.
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

inline const TraceModel& shipped(const std::string& file) {
  static std::map<std::string, std::unique_ptr<TraceModel>> cache;
  auto& m = cache[file];
  if (!m) {
    auto t = std::make_shared<const trace::Trace>(trace::read_trace(std::string(GPULB_SHIPPED_TRACES) + "/" + file));
    m = std::make_unique<TraceModel>(std::move(t));
  }
  return *m;
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

inline constexpr const char* kUts = "uts-geometric-d7-work-stealing-h100.gpulb";
inline constexpr const char* kP4Queue = "patterns-P4-task-queue-h100.gpulb";
inline constexpr const char* kConnect4Static = "connect4-4-static-list-h100.gpulb";
inline constexpr const char* kConnect4Stealing = "connect4-4-work-stealing-h100.gpulb";
inline constexpr const char* kP3Paper2Gpu = "patterns-P3-task-queue-paper-2xh200.gpulb";
inline constexpr const char* kP3Modern2Gpu = "patterns-P3-task-queue-modern-2xh200.gpulb";
// Issue 15: a merged trace of 4 MPI ranks (CPU backend), with chunks moved between them.
inline constexpr const char* kUts4Ranks = "uts-d9-work-stealing-4ranks-cpu.gpulb";
// Runs on 4 GPUs: 528 SMs to lay out in one screen.
inline constexpr const char* kMd4Gpu = "md-64k-tq-4xh200.gpulb";
inline constexpr const char* kUts4Gpu = "uts-geometric-d7-work-stealing-4xh200.gpulb";

}  // namespace gpulb::viewer::testing
