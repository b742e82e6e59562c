// gpulb export --format perfetto: the output decodes with protoc against Perfetto's own schema
// (tests/fixtures/perfetto), and what it holds is read back the way the trace processor reads it
// (perfetto_decode.hpp: names per sequence, incremental timestamps added up) and counted against
// the trace: a slice per task at its times, a flow per steal whose victim is in the trace, a flow
// from each SpawnBatch to each child it names, a counter track per queue, host pool, device's busy
// workers and device's deques, their values.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpulb/tracing/export.hpp"
#include "gpulb/tracing/export_window.hpp"
#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "perfetto_decode.hpp"

namespace gpulb::trace {
namespace {

namespace fs = std::filesystem;
using gpulb::testing::DecodedEvent;
using gpulb::testing::DecodedTrace;
using gpulb::testing::spawn_links;
using gpulb::testing::SpawnLinks;

fs::path export_to_temp(const Trace& t, const std::string& name, TimeRange range = {}) {
  const fs::path out = fs::temp_directory_path() /
                       ("gpulb-perfetto-" + std::to_string(::getpid()) + "-" + name + ".pftrace");
  std::ofstream f(out, std::ios::binary);
  write_perfetto(f, t, range);
  return out;
}

DecodedTrace decoded(const Trace& t, const std::string& name, TimeRange range = {},
                     std::size_t keep_events = 10000) {
  const fs::path out = export_to_temp(t, name, range);
  DecodedTrace d =
      gpulb::testing::PerfettoReader(keep_events).decode(out, GPULB_PERFETTO_SCHEMA_DIR);
  fs::remove(out);
  return d;
}

struct Expected {
  std::size_t tasks = 0, steals_with_victim = 0, counter_tracks = 0, level_values = 0;
  // children named by a SpawnBatch in the range: a flow starts for each
  std::size_t spawn_flows = 0;
  std::size_t deque_levels = 0;
  // the events that can move a deque sum: levels, steals, idle workers, ends
  std::size_t deque_moves = 0;
};

// What the export of `range` must hold, counted from the trace alone. Counter tracks are made for
// every queue, pool and device of the trace, whatever the range.
Expected expected_of(const Trace& t, TimeRange range) {
  const ExportWindow w = export_window(t, range);
  Expected x;
  std::set<std::pair<std::uint32_t, std::uint32_t>> workers;
  for (const Track& tr : t.tracks) {
    if (tr.role == TrackRole::Worker) workers.insert({tr.device, tr.worker});
  }
  std::set<std::tuple<std::uint32_t, int, std::uint16_t>> counters;
  for (const Track& tr : t.tracks) {
    if (tr.role != TrackRole::Host && !tr.events.empty()) counters.insert({tr.device, 2, 0});
    for (const TaskSpan& s : task_spans(tr))
      x.tasks += w.range.overlaps(s.begin_ns, s.end_ns) ? 1 : 0;
    for (const Event& e : tr.events) {
      if (e.kind == EventKind::QueueLevel) counters.insert({tr.device, 0, e.aux});
      if (e.kind == EventKind::PoolLevel) counters.insert({tr.device, 1, 0});
      if (e.kind == EventKind::DequeLevel) counters.insert({tr.device, 3, 0});
      if (!w.keeps(e.time_ns)) continue;
      if (e.kind == EventKind::Steal && workers.count({steal_victim_device(e, tr.device), e.arg}))
        ++x.steals_with_victim;
      if (spawn_names_children(e)) x.spawn_flows += e.aux;
      if (e.kind == EventKind::QueueLevel || e.kind == EventKind::PoolLevel) ++x.level_values;
      if (e.kind == EventKind::DequeLevel) ++x.deque_levels;
      if (e.kind == EventKind::DequeLevel || e.kind == EventKind::Steal ||
          e.kind == EventKind::StealFailed || e.kind == EventKind::DequeueFailed ||
          e.kind == EventKind::WorkerEnd) {
        ++x.deque_moves;
      }
    }
  }
  x.counter_tracks = counters.size();
  return x;
}

void expect_counts(const Trace& t, const std::string& name, TimeRange range = {}) {
  const DecodedTrace d = decoded(t, name, range, 0);
  ASSERT_EQ(d.exit_code, 0) << name
                            << ": protoc could not decode the export (is protoc installed? "
                               "scripts/install-deps.sh installs protobuf-compiler)";
  const Expected x = expected_of(t, range);
  EXPECT_EQ(d.slice_begins, x.tasks) << name;
  EXPECT_EQ(d.slice_ends, x.tasks) << name;
  // Every flow starts; a spawned child's slice ends its flow only where it follows its parent's batch.
  EXPECT_EQ(d.flows_out, x.steals_with_victim + x.spawn_flows) << name;
  EXPECT_GE(d.flows_in, x.steals_with_victim) << name;
  EXPECT_LE(d.flows_in, x.steals_with_victim + x.spawn_flows) << name;
  EXPECT_EQ(static_cast<std::size_t>(std::count_if(d.tracks.begin(), d.tracks.end(),
                                                   [](const auto& tr) { return tr.counter; })),
            x.counter_tracks)
      << name;
  std::size_t level_values = 0, deque_sums = 0;
  for (const auto& tr : d.tracks) {
    const auto n = d.counter_values_by_track.find(tr.uuid);
    if (n == d.counter_values_by_track.end()) continue;
    (tr.name.rfind("deques", 0) == 0 ? deque_sums : level_values) += n->second;
  }
  EXPECT_EQ(level_values, x.level_values) << name;
  EXPECT_LE(deque_sums, x.deque_moves) << name;
  if (x.deque_levels > 0) {
    EXPECT_GT(deque_sums, 0u) << name;
  }
  // The busy workers ride on the slices, at most one value a slice packet; a run of tasks has some.
  EXPECT_LE(d.extra_counter_values, 2 * x.tasks) << name;
  if (x.tasks > 0) {
    EXPECT_GT(d.extra_counter_values, 0u) << name;
  }
  EXPECT_EQ(d.unresolved_names, 0u) << name;
  EXPECT_EQ(d.names_interned_twice, 0u) << name;
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
                 make_event(10, EventKind::TaskBegin, 10 + w, 2),
                 make_event(20, EventKind::TaskEnd, 10 + w, 2)};
    if (w == 1) tr.events.push_back(make_event(25, EventKind::Steal, 0, 0));
    tr.events.push_back(make_event(30, EventKind::WorkerEnd, 0));
    t.tracks.push_back(tr);
  }
  Track host;
  host.role = TrackRole::Host;
  host.name = "GPU 0 control thread";
  host.events = {make_event(1, EventKind::HostEnqueue, 2, 0),
                 make_event(1, EventKind::QueueLevel, 2, 0),
                 make_event(2, EventKind::PoolLevel, 5, 0)};
  t.tracks.push_back(host);
  return t;
}

TEST(PerfettoExport, DecodesWithPerfettosSchemaAndHoldsEveryTaskStealAndLevel) {
  const Trace t = two_workers_a_steal_and_a_queue();
  expect_counts(t, "handmade");
  const DecodedTrace d = decoded(t, "names");
  std::set<std::string> names;
  for (const auto& tr : d.tracks) names.insert(tr.name);
  for (const DecodedEvent& e : d.events) {
    names.insert(e.name);
    for (const auto& [k, v] : e.annotations) names.insert(k);
  }
  // Tracks nested GPU > SM > block, arguments by name, the slice named by its kind.
  for (const char* name :
       {"GPU 0: Test GPU", "SM 1", "block 1", "GPU 0 control thread", "queue 0 (tasks)",
        "host pool (tasks)", "busy workers", "task kind 2", "task_id", "steal", "victim_worker",
        "victim_device", "stolen_from", "thief_worker", "host_enqueue", "tasks"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  const std::uint64_t gpu = d.uuid_of("GPU 0: Test GPU"), sm1 = d.uuid_of("SM 1");
  for (const auto& tr : d.tracks) {
    if (tr.name == "block 1") {
      EXPECT_EQ(tr.parent, sm1);
    }
    if (tr.name == "SM 1" || tr.name == "busy workers" || tr.name == "GPU 0 control thread") {
      EXPECT_EQ(tr.parent, gpu) << tr.name;
    }
  }
}

// Each slice at its task's begin and end on the export's clock (from the workers' start here),
// read back through the incremental timestamps of its sequence.
TEST(PerfettoExport, SlicesSitAtTheirTasksTimesWithTheirIds) {
  Trace t = two_workers_a_steal_and_a_queue();
  for (Track& tr : t.tracks) {
    for (Event& e : tr.events) e.time_ns += 1'000'000;
  }
  const DecodedTrace d = decoded(t, "times");
  ASSERT_EQ(d.exit_code, 0);
  std::multiset<std::tuple<std::string, std::uint64_t, std::uint64_t>>
      slices;  // (type, time, task id)
  for (const DecodedEvent& e : d.events) {
    if (e.type == "TYPE_SLICE_BEGIN") {
      EXPECT_EQ(e.name, "task kind 2");
      slices.insert({e.type, e.time_ns, e.annotations.at("task_id")});
    }
    if (e.type == "TYPE_SLICE_END") slices.insert({e.type, e.time_ns, 0});
  }
  const std::multiset<std::tuple<std::string, std::uint64_t, std::uint64_t>> want = {
      {"TYPE_SLICE_BEGIN", 10, 10},
      {"TYPE_SLICE_BEGIN", 10, 11},
      {"TYPE_SLICE_END", 20, 0},
      {"TYPE_SLICE_END", 20, 0}};
  EXPECT_EQ(slices, want) << "the window starts at the workers' start, 1 ms into the trace";
}

// A device's busy workers: +1 at each task's begin, -1 at its end, shown where they change.
TEST(PerfettoExport, BusyWorkersCountTheTasksRunningOnTheDevice) {
  Trace t;
  t.devices.push_back({DeviceKind::Cpu, 0, "CPU", 2, 2});
  const std::uint64_t spans[2][2][2] = {{{10, 20}, {40, 50}},
                                        {{15, 30}, {50, 60}}};  // worker, task, edge
  for (std::uint32_t w = 0; w < 2; ++w) {
    Track tr;
    tr.worker = w;
    tr.name = "worker " + std::to_string(w);
    for (std::uint32_t k = 0; k < 2; ++k) {
      tr.events.push_back(make_event(spans[w][k][0], EventKind::TaskBegin, 2 * w + k, 1));
      tr.events.push_back(make_event(spans[w][k][1], EventKind::TaskEnd, 2 * w + k, 1));
    }
    t.tracks.push_back(tr);
  }
  const DecodedTrace d = decoded(t, "busy");
  std::vector<std::pair<std::uint64_t, std::int64_t>> busy;
  for (const DecodedEvent& e : d.events) {
    for (const std::int64_t v : e.extra_counter_values)
      busy.push_back({e.time_ns + 10, v});  // the window starts at 10
  }
  // At 50 worker 0's task ends and worker 1's begins: 0 then 1 at one time, the last one holds.
  const std::vector<std::pair<std::uint64_t, std::int64_t>> want = {
      {10, 1}, {15, 2}, {20, 1}, {30, 0}, {40, 1}, {50, 0}, {50, 1}, {60, 0}};
  EXPECT_EQ(busy, want);
}

// The deques' sum: a DequeLevel sets its owner's level, a steal takes one from the victim's and
// empties the thief's, a failed dequeue empties the worker's own.
TEST(PerfettoExport, DequeSumFollowsLevelsStealsAndIdleWorkers) {
  Trace t;
  t.devices.push_back({DeviceKind::Cpu, 0, "CPU", 2, 2});
  Track w0, w1;
  w0.name = "worker 0";
  w1.worker = 1;
  w1.name = "worker 1";
  w0.events = {make_event(1, EventKind::DequeLevel, 3, 0),
               make_event(6, EventKind::DequeueFailed, 0, 0)};
  w1.events = {make_event(2, EventKind::DequeLevel, 2, 1), make_event(4, EventKind::Steal, 0, 0)};
  t.tracks = {w0, w1};
  const DecodedTrace d = decoded(t, "deques");
  const std::uint64_t deques = d.uuid_of("deques (sum, tasks)");
  ASSERT_NE(deques, 0u);
  std::vector<std::pair<std::uint64_t, std::int64_t>> sum;
  for (const DecodedEvent& e : d.events) {
    if (e.track_uuid == deques) sum.push_back({e.time_ns + 1, *e.counter_value});
  }
  const std::vector<std::pair<std::uint64_t, std::int64_t>> want = {{1, 3}, {2, 5}, {4, 2}, {6, 0}};
  EXPECT_EQ(sum, want);
}

// Names are interned per sequence, once, in the packet that first uses them: every name a
// packet refers to resolves on its sequence, none is interned twice there.
TEST(PerfettoExport, NamesAreInternedOncePerSequence) {
  Trace t = two_workers_a_steal_and_a_queue();
  for (std::uint32_t k = 0; k < 50; ++k) {  // fifty more tasks of two kinds on block 0
    t.tracks[0].events.insert(t.tracks[0].events.end() - 1,
                              {make_event(31 + 2 * k, EventKind::TaskBegin, 100 + k, k % 2),
                               make_event(32 + 2 * k, EventKind::TaskEnd, 100 + k, k % 2)});
  }
  t.tracks[0].events.back().time_ns = 200;
  const DecodedTrace d = decoded(t, "interned");
  ASSERT_EQ(d.exit_code, 0);
  EXPECT_EQ(d.unresolved_names, 0u);
  EXPECT_EQ(d.names_interned_twice, 0u);
  std::set<std::string> kinds;
  for (const DecodedEvent& e : d.events) {
    if (e.type == "TYPE_SLICE_BEGIN") kinds.insert(e.name);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"task kind 0", "task kind 1", "task kind 2"}));
}

TEST(PerfettoExport, ARangeKeepsTheTasksThatOverlapIt) {
  const Trace t = two_workers_a_steal_and_a_queue();
  expect_counts(t, "range", TimeRange{21, 40});  // after both tasks: the steal and nothing else
  const DecodedTrace part = decoded(t, "range-part", TimeRange{21, 40});
  EXPECT_EQ(part.slice_begins, 0u);
  EXPECT_EQ(part.flows_in, 1u);
}

// A host event far from the run is left out and the clock starts at the launch before it; the
// devices' descriptions say how many events were left out.
TEST(PerfettoExport, ALoneHostEventFarBeforeTheRunIsLeftOut) {
  Trace t = two_workers_a_steal_and_a_queue();
  Track& host = t.tracks[2];
  for (Track& tr : t.tracks) {
    for (Event& e : tr.events) e.time_ns += 50'000;
  }
  host.events.insert(host.events.begin() + 1, make_event(49'990, EventKind::KernelLaunch, 2, 0));
  host.events.front().time_ns = 0;  // the enqueue, 50 us before a 30 ns run
  const DecodedTrace d = decoded(t, "lone");
  std::size_t enqueues = 0;
  std::uint64_t launch = 1;
  for (const DecodedEvent& e : d.events) {
    enqueues += e.name == "host_enqueue";
    if (e.name == "kernel_launch") launch = e.time_ns;
  }
  EXPECT_EQ(enqueues, 0u);
  EXPECT_EQ(launch, 0u) << "the export's clock starts at the launch";
  bool noted = false;
  for (const auto& tr : d.tracks) noted |= tr.description.find("1 host event") != std::string::npos;
  EXPECT_TRUE(noted);
}

// --- spawn flows ----------------------------------------------------------------------------------

// Worker 0 runs task 0, which spawns 1..3, then 1 and 3; 3 spawns 4 and 5. Worker 1 runs 5 before
// its parent's batch (a clock skew or a dropped event can place it there), then 2, then 7, which
// no batch names (an initial task), and steals from worker 0.
Trace a_spawn_tree() {
  Trace t;
  t.devices.push_back({DeviceKind::Cpu, 0, "CPU", 2, 2});
  Track w0, w1;
  w0.name = "worker 0";
  w1.worker = 1;
  w1.name = "worker 1";
  const auto task = [](std::vector<Event>& ev, std::uint64_t b, std::uint64_t e, std::uint32_t id) {
    ev.push_back(make_event(b, EventKind::TaskBegin, id, 1));
    ev.push_back(make_event(e, EventKind::TaskEnd, id, 1));
  };
  w0.events.push_back(make_event(0, EventKind::WorkerStart, 0));
  task(w0.events, 10, 20, 0);
  w0.events.push_back(make_event(20, EventKind::SpawnBatch, 1, 3));
  task(w0.events, 30, 40, 1);
  task(w0.events, 45, 50, 3);
  w0.events.push_back(make_event(50, EventKind::SpawnBatch, 4, 2));
  task(w0.events, 60, 70, 4);
  w0.events.push_back(make_event(100, EventKind::WorkerEnd, 0));
  w1.events.push_back(make_event(0, EventKind::WorkerStart, 1));
  task(w1.events, 12, 14, 5);
  w1.events.push_back(make_event(22, EventKind::Steal, 0, 0));
  task(w1.events, 25, 35, 2);
  task(w1.events, 36, 38, 7);
  w1.events.push_back(make_event(100, EventKind::WorkerEnd, 0));
  t.tracks = {w0, w1};
  return t;
}

// Each child's slice ends the flow its parent's batch started for it; a child placed before its
// parent's batch, and a task no batch names, end none; the steal's flow keeps an id of its own.
TEST(PerfettoSpawnFlows, EachChildsSliceEndsTheFlowItsParentsBatchStartedForIt) {
  const Trace t = a_spawn_tree();
  expect_counts(t, "spawn-tree");
  const DecodedTrace d = decoded(t, "spawn-tree-links");
  ASSERT_EQ(d.exit_code, 0);
  const SpawnLinks s = spawn_links(d);
  EXPECT_EQ(s.spawn_starts, 5u);
  EXPECT_EQ(s.batches_past_their_children, 0u);
  EXPECT_EQ(s.started.size(), 6u) << "five children and one steal";
  EXPECT_EQ(std::set<std::uint64_t>(s.started.begin(), s.started.end()).size(), s.started.size())
      << "flow ids are unique";
  std::set<std::uint64_t> ended_tasks;
  for (const auto& [task, ids] : s.ended_by_task) {
    ASSERT_EQ(ids.size(), 1u) << "task " << task;
    ASSERT_TRUE(s.child_of_flow.count(ids[0]))
        << "task " << task << " ends a flow no spawn started";
    EXPECT_EQ(s.child_of_flow.at(ids[0]), task);
    ended_tasks.insert(task);
  }
  EXPECT_EQ(ended_tasks, (std::set<std::uint64_t>{1, 2, 3, 4}));
}

// A range that leaves out the first batch leaves its children's slices without a flow to end.
TEST(PerfettoSpawnFlows, ARangeWithoutTheParentsBatchEndsNoFlowOfItsChildren) {
  const Trace t = a_spawn_tree();
  expect_counts(t, "spawn-range", TimeRange{21, 100});
  const SpawnLinks s = spawn_links(decoded(t, "spawn-range-links", TimeRange{21, 100}));
  EXPECT_EQ(s.spawn_starts, 2u);
  std::set<std::uint64_t> ended_tasks;
  for (const auto& [task, ids] : s.ended_by_task) ended_tasks.insert(task);
  EXPECT_EQ(ended_tasks, std::set<std::uint64_t>{4});
}

// At one time Perfetto reads packets in file order: a child that begins at its parent's batch's
// very time ends its flow where the batch is written first (its track comes first), and none where
// the child's packet comes first.
TEST(PerfettoSpawnFlows, AChildAtItsParentsBatchTimeEndsItsFlowWhereTheBatchIsWrittenFirst) {
  Trace t = a_spawn_tree();
  std::vector<Event>& w1 = t.tracks[1].events;
  for (Event& e : w1) {
    if (e.kind == EventKind::TaskBegin && e.arg == 2)
      e.time_ns = 20;  // its batch's time, on track 0
  }
  std::stable_sort(w1.begin(), w1.end(),
                   [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  w1.insert(w1.end() - 1,
            {make_event(60, EventKind::TaskBegin, 9, 1), make_event(61, EventKind::TaskEnd, 9, 1)});
  Track w2;
  w2.worker = 2;
  w2.name = "worker 2";
  w2.events = {make_event(60, EventKind::SpawnBatch, 9, 1)};  // task 9's batch, on a later track
  t.tracks.push_back(w2);
  const DecodedTrace d = decoded(t, "spawn-tie");
  ASSERT_EQ(d.exit_code, 0);
  const SpawnLinks s = spawn_links(d);
  EXPECT_TRUE(s.ended_by_task.count(2));
  EXPECT_FALSE(s.ended_by_task.count(9));
  EXPECT_EQ(s.spawn_starts, 6u);
}

// A damaged trace that names the same children again and again, with ever more of them, starts
// one flow for each child once: the output does not grow with the names.
TEST(PerfettoSpawnFlows, ChildrenNamedAgainStartNoSecondFlow) {
  Trace t = a_spawn_tree();
  std::vector<Event>& w0 = t.tracks[0].events;
  const auto after_first_batch = w0.begin() + 4;
  std::vector<Event> again;
  for (std::uint64_t k = 0; k < 50; ++k)
    again.push_back(make_event(20, EventKind::SpawnBatch, 1, 0xFFFF));
  w0.insert(after_first_batch, again.begin(), again.end());
  const DecodedTrace d = decoded(t, "spawn-again");
  ASSERT_EQ(d.exit_code, 0);
  const SpawnLinks s = spawn_links(d);
  EXPECT_EQ(s.spawn_starts, 5u) << "the first batch's three and the second's two";
  EXPECT_EQ(std::set<std::uint64_t>(s.started.begin(), s.started.end()).size(), s.started.size());
  EXPECT_EQ(s.ended_by_task.size(), 4u);
}

// A batch whose ids would run past the largest task id names only the ids that exist.
TEST(PerfettoSpawnFlows, ABatchRunningPastTheLastIdStartsFlowsForTheIdsThatExist) {
  Trace t = a_spawn_tree();
  t.tracks[0].events[3] = make_event(20, EventKind::SpawnBatch, 0xFFFFFFFEu, 5);
  const DecodedTrace d = decoded(t, "spawn-wrap");
  ASSERT_EQ(d.exit_code, 0);
  const SpawnLinks s = spawn_links(d);
  std::size_t first_batch = 0;
  for (const auto& [flow, child] : s.child_of_flow) first_batch += child >= 0xFFFFFFFEu;
  EXPECT_EQ(first_batch, 2u);
  EXPECT_FALSE(s.ended_by_task.count(1)) << "no batch names task 1 here";
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

INSTANTIATE_TEST_SUITE_P(ShippedTraces, PerfettoExportOfAShippedTrace,
                         ::testing::ValuesIn(shipped_traces()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string n = info.param.stem().string();
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace gpulb::trace
