// gpulb export --format perfetto: the output decodes with protoc against Perfetto's own schema
// (tests/fixtures/perfetto), and what it holds is counted against the trace: a slice per task, a
// flow per steal whose victim is in the trace, a counter track per queue and host pool.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace_file.hpp"

namespace gpulb::trace {
namespace {

namespace fs = std::filesystem;

struct Decoded {
  int exit_code = -1;
  std::size_t slice_begins = 0, slice_ends = 0, instants = 0, flows_out = 0, flows_in = 0, counter_tracks = 0, counter_values = 0;
  std::set<std::string> strings;  // every name: value of a string field
};

// protoc --decode prints one field a line; counting lines keeps even a large export's text out of memory.
Decoded decode(const fs::path& file) {
  const std::string cmd = std::string("protoc --proto_path=") + GPULB_PERFETTO_SCHEMA_DIR +
                          " --decode=perfetto.protos.Trace perfetto_trace.proto < '" + file.string() + "' 2>&1";
  Decoded d;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return d;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    const std::string l(line);
    if (l.find("type: TYPE_SLICE_BEGIN") != std::string::npos) ++d.slice_begins;
    if (l.find("type: TYPE_SLICE_END") != std::string::npos) ++d.slice_ends;
    if (l.find("type: TYPE_INSTANT") != std::string::npos) ++d.instants;
    if (l.find(" flow_ids:") != std::string::npos && l.find("terminating") == std::string::npos) ++d.flows_out;
    if (l.find("terminating_flow_ids:") != std::string::npos) ++d.flows_in;
    if (l.find("counter {") != std::string::npos) ++d.counter_tracks;
    if (l.find("counter_value:") != std::string::npos) ++d.counter_values;
    if (const auto q = l.find("name: \""); q != std::string::npos && d.strings.size() < 100000) d.strings.insert(l.substr(q + 7, l.rfind('"') - q - 7));
  }
  const int status = ::pclose(p);
  d.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return d;
}

struct Expected {
  std::size_t tasks = 0, steals_with_victim = 0, counter_tracks = 0, counter_values = 0;
};

// What the export of `range` must hold, counted from the trace alone. Counter tracks are made for
// every queue of the trace, whatever the range.
Expected expected_of(const Trace& t, TimeRange range) {
  Expected x;
  std::set<std::pair<std::uint32_t, std::uint32_t>> workers;
  for (const Track& tr : t.tracks) {
    if (tr.role == TrackRole::Worker) workers.insert({tr.device, tr.worker});
  }
  std::set<std::tuple<std::uint32_t, int, std::uint16_t>> counters;
  for (const Track& tr : t.tracks) {
    for (const TaskSpan& s : task_spans(tr)) x.tasks += range.overlaps(s.begin_ns, s.end_ns) ? 1 : 0;
    for (const Event& e : tr.events) {
      if (e.kind == EventKind::QueueLevel) counters.insert({tr.device, 0, e.aux});
      if (e.kind == EventKind::PoolLevel) counters.insert({tr.device, 1, 0});
      if (!range.contains(e.time_ns)) continue;
      if (e.kind == EventKind::Steal && workers.count({steal_victim_device(e, tr.device), e.arg})) ++x.steals_with_victim;
      if (e.kind == EventKind::QueueLevel || e.kind == EventKind::PoolLevel) ++x.counter_values;
    }
  }
  x.counter_tracks = counters.size();
  return x;
}

fs::path export_to_temp(const Trace& t, const std::string& name, TimeRange range = {}) {
  const fs::path out = fs::temp_directory_path() / ("gpulb-perfetto-" + std::to_string(::getpid()) + "-" + name + ".pftrace");
  std::ofstream f(out, std::ios::binary);
  write_perfetto(f, t, range);
  return out;
}

void expect_counts(const Trace& t, const std::string& name, TimeRange range = {}) {
  const fs::path out = export_to_temp(t, name, range);
  const Decoded d = decode(out);
  fs::remove(out);
  ASSERT_EQ(d.exit_code, 0) << name << ": protoc could not decode the export (is protoc installed? scripts/install-deps.sh installs protobuf-compiler)";
  const Expected x = expected_of(t, range);
  EXPECT_EQ(d.slice_begins, x.tasks) << name;
  EXPECT_EQ(d.slice_ends, x.tasks) << name;
  EXPECT_EQ(d.flows_in, x.steals_with_victim) << name;
  EXPECT_EQ(d.flows_out, x.steals_with_victim) << name;
  EXPECT_EQ(d.counter_tracks, x.counter_tracks) << name;
  EXPECT_EQ(d.counter_values, x.counter_values) << name;
}

Trace two_workers_a_steal_and_a_queue() {
  Trace t;
  t.devices.push_back({DeviceKind::Gpu, 0, "Test GPU", 2, 2});
  for (std::uint32_t w = 0; w < 2; ++w) {
    Track tr;
    tr.worker = w;
    tr.sm = w;
    tr.name = "block " + std::to_string(w);
    tr.events = {make_event(0, EventKind::WorkerStart, w, static_cast<std::uint16_t>(w)),
                 make_event(10, EventKind::TaskBegin, 10 + w, 2), make_event(20, EventKind::TaskEnd, 10 + w, 2)};
    if (w == 1) tr.events.push_back(make_event(25, EventKind::Steal, 0, 0));
    tr.events.push_back(make_event(30, EventKind::WorkerEnd, 0));
    t.tracks.push_back(tr);
  }
  Track host;
  host.role = TrackRole::Host;
  host.name = "GPU 0 control thread";
  host.events = {make_event(1, EventKind::HostEnqueue, 2, 0), make_event(1, EventKind::QueueLevel, 2, 0),
                 make_event(2, EventKind::PoolLevel, 5, 0)};
  t.tracks.push_back(host);
  return t;
}

TEST(PerfettoExport, DecodesWithPerfettosSchemaAndHoldsEveryTaskStealAndLevel) {
  const Trace t = two_workers_a_steal_and_a_queue();
  expect_counts(t, "handmade");
  const fs::path out = export_to_temp(t, "names");
  const Decoded d = decode(out);
  fs::remove(out);
  // Tracks nested GPU > SM > block, arguments by name, the slice named by its kind.
  for (const char* name : {"GPU 0: Test GPU", "SM 1", "block 1", "GPU 0 control thread", "queue 0 (tasks)", "host pool (tasks)",
                           "task kind 2", "task_id", "victim_worker", "victim_device", "stolen_from", "tasks"}) {
    EXPECT_TRUE(d.strings.count(name)) << name;
  }
}

TEST(PerfettoExport, ARangeKeepsTheTasksThatOverlapIt) {
  Trace t = two_workers_a_steal_and_a_queue();
  std::ostringstream whole, part;
  write_perfetto(whole, t);
  write_perfetto(part, t, TimeRange{21, 40});  // after both tasks: the steal and nothing else
  EXPECT_LT(part.str().size(), whole.str().size());
  EXPECT_EQ(part.str().find("task kind"), whole.str().find("task kind")) << "names are interned whatever the range";
}

class PerfettoExportOfAShippedTrace : public ::testing::TestWithParam<fs::path> {};

// protoc prints about 1 MB of export a second: a trace of more than 300 KB is checked on the first
// fifth of its run (every event in it counted), which keeps the whole suite near a minute on CI.
TEST_P(PerfettoExportOfAShippedTrace, DecodesAndHoldsEveryTaskStealAndLevel) {
  const Trace t = read_trace(GetParam());
  TimeRange range;
  if (fs::file_size(GetParam()) > 300 * 1024) {
    const TraceStatistics st = compute_statistics(t);
    range = {st.begin_ns, st.begin_ns + (st.end_ns - st.begin_ns) / 5};
  }
  expect_counts(t, GetParam().stem().string(), range);
}

std::vector<fs::path> shipped_traces() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(GPULB_SHIPPED_TRACES)) {
    if (e.path().extension() == ".gpulb") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(ShippedTraces, PerfettoExportOfAShippedTrace, ::testing::ValuesIn(shipped_traces()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string n = info.param.stem().string();
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace gpulb::trace
