// What the command line tests share (cli_*_test.cpp): a folder per test, a hand-made trace.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include "cli_process.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace_file.hpp"

namespace gpulb::testing {

// A small hand-made trace: two workers, one task each, with the given result.
inline gpulb::trace::Trace small_trace(const std::string& result_json) {
  using namespace gpulb::trace;
  Trace t;
  t.meta.scenario = "handmade";
  t.meta.policy = "task-queue";
  t.meta.backend = "cpu";
  t.meta.workers = 2;
  t.meta.verified = true;
  t.meta.result_json = result_json;
  t.devices.push_back({DeviceKind::Cpu, 0, "CPU (test)", 2, 2});
  for (std::uint32_t w = 0; w < 2; ++w) {
    Track tr;
    tr.worker = w;
    tr.name = "worker " + std::to_string(w);
    tr.events = {
        make_event(0, EventKind::WorkerStart, w), make_event(10, EventKind::TaskBegin, w, 1),
        make_event(1000, EventKind::TaskEnd, w, 1), make_event(1010, EventKind::WorkerEnd)};
    t.tracks.push_back(std::move(tr));
  }
  return t;
}

inline std::string file_text(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpulb-cli-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

}  // namespace gpulb::testing
