#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

nlohmann::json export_json(const Trace& t, TimeRange range = {}) {
  std::ostringstream out;
  write_chrome_json(out, t, range);
  return nlohmann::json::parse(out.str());
}

TEST(ChromeExport, OneNamedThreadPerTrackAndNamedProcesses) {
  const Trace t = gpulb::testing::make_trace(5, 3, 1000);
  const nlohmann::json j = export_json(t);
  std::set<std::string> thread_names;
  std::set<std::string> process_names;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      thread_names.insert(e.at("args").at("name"));
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      process_names.insert(e.at("args").at("name"));
  }
  EXPECT_EQ(thread_names.size(), t.tracks.size());
  for (std::uint32_t w = 0; w < 5; ++w)
    EXPECT_TRUE(thread_names.count("worker " + std::to_string(w)));
  EXPECT_TRUE(thread_names.count("host producer"));
  EXPECT_EQ(process_names, std::set<std::string>{"CPU (test)"});
}

TEST(ChromeExport, TaskDurationsEqualTheTraces) {
  Trace t = gpulb::testing::make_trace(3, 4, 1234, 17);
  t.tracks[1].events[3].time_ns += 1;  // one task 1 ns longer: microsecond output must keep it
  const nlohmann::json j = export_json(t);
  std::map<std::uint32_t, std::uint64_t> exported_ns;  // task id -> duration in ns
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const double dur_us = e.at("dur").get<double>();
    exported_ns[e.at("args").at("task_id").get<std::uint32_t>()] =
        static_cast<std::uint64_t>(dur_us * 1000.0 + 0.5);
  }
  std::size_t tasks = 0;
  for (const Track& tr : t.tracks) {
    for (const TaskSpan& s : task_spans(tr)) {
      ++tasks;
      ASSERT_TRUE(exported_ns.count(s.id)) << "task " << s.id << " missing";
      EXPECT_EQ(exported_ns[s.id], s.end_ns - s.begin_ns) << "task " << s.id;
    }
  }
  EXPECT_EQ(exported_ns.size(), tasks);
}

TEST(ChromeExport, QueueLevelsBecomeCounters) {
  const nlohmann::json j = export_json(gpulb::testing::make_trace(2, 2, 10));
  int counters = 0;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "C") {
      ++counters;
      EXPECT_EQ(e.at("name"), "queue 0");
      EXPECT_TRUE(e.at("args").contains("level"));
    }
  }
  EXPECT_EQ(counters, 4);
}

TEST(ChromeExport, RangeKeepsOnlyOverlappingTasks) {
  const Trace t = gpulb::testing::make_trace(1, 10, 100);  // tasks at [0,100), [100,200), ...
  const nlohmann::json j = export_json(t, TimeRange{250, 450});
  std::set<std::uint32_t> ids;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "X") ids.insert(e.at("args").at("task_id").get<std::uint32_t>());
  }
  EXPECT_EQ(ids, (std::set<std::uint32_t>{2, 3, 4}));
}

// The JSON counts time from the export window's start, and leaves out a host event far before it.
TEST(ChromeExport, TimesCountFromTheWindowsStart) {
  Trace t = gpulb::testing::make_trace(1, 2, 100);
  for (Track& tr : t.tracks) {
    for (Event& e : tr.events) e.time_ns += 9'000'000;
  }
  t.tracks.back().events.front().time_ns = 0;  // the host's enqueue, 9 ms before a 200 ns run
  const nlohmann::json j = export_json(t);
  std::set<std::string> task_ts;
  for (const auto& e : j.at("traceEvents")) {
    EXPECT_NE(e.at("name"), "host_enqueue");
    if (e.at("ph") == "X") task_ts.insert(e.at("ts").dump());
  }
  EXPECT_EQ(task_ts, (std::set<std::string>{"0.0", "0.1"}));
}

}  // namespace
}  // namespace gpulb::trace
