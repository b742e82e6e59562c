// Clicking a task and searching for one: where a task came from, as its
// worker recorded it, and finding tasks by id and kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <string>

#include "compare_span.hpp"
#include "shipped_traces.hpp"
#include "task_details.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::viewer {
namespace {

TEST(TaskDetails, StolenTasksNameTheirVictim) {
  const TraceModel& m = testing::recorded(testing::kUts);
  std::uint64_t stolen = 0, tasks = 0;
  for (std::uint32_t l = 0; l < m.lanes().size(); ++l) {
    for (std::uint32_t z = 0; z < m.lanes()[l].zones.size(); ++z) {
      const TaskDetails d = task_details(m, {l, z});
      ++tasks;
      if (!d.stolen_from) continue;
      ++stolen;
      EXPECT_GE(m.worker_lane(m.lanes()[l].device, *d.stolen_from), 0)
          << "the victim is a worker of the trace";
      EXPECT_EQ(d.source, "stolen from worker " + std::to_string(*d.stolen_from));
    }
  }
  EXPECT_EQ(tasks, m.stats().tasks);
  // Every successful steal hands its thief the next task it runs.
  EXPECT_EQ(stolen, m.stats().steals);
}

// Work-stealing across GPUs: GPU 1's block 0 steals worker 2 of GPU 0's deque (aux 1 +
// the victim's device); GPU 0's worker 1 steals locally (aux 0, as every older trace).
std::shared_ptr<const trace::Trace> two_gpu_steals() {
  using trace::EventKind;
  using trace::make_event;
  auto t = std::make_shared<trace::Trace>();
  t->devices.push_back({trace::DeviceKind::Gpu, 0, "GPU 0", 132, 3});
  t->devices.push_back({trace::DeviceKind::Gpu, 1, "GPU 1", 132, 1});
  auto worker = [](std::uint32_t device, std::uint32_t rank) {
    return trace::Track{trace::TrackRole::Worker,
                        device,
                        rank,
                        0,
                        "GPU " + std::to_string(device) + " block " + std::to_string(rank),
                        0,
                        {}};
  };
  trace::Track a = worker(0, 1), b = worker(0, 2), c = worker(1, 0);
  b.events = {make_event(10, EventKind::WorkerStart, 2), make_event(20, EventKind::TaskBegin, 5),
              make_event(40, EventKind::TaskEnd, 5), make_event(90, EventKind::WorkerEnd)};
  a.events = {make_event(10, EventKind::WorkerStart, 1), make_event(30, EventKind::Steal, 2),
              make_event(31, EventKind::TaskBegin, 6), make_event(50, EventKind::TaskEnd, 6),
              make_event(90, EventKind::WorkerEnd)};
  c.events = {make_event(10, EventKind::WorkerStart, 0),
              make_event(30, EventKind::Steal, 2, trace::steal_aux_for_device(0)),
              make_event(32, EventKind::TaskBegin, 7), make_event(60, EventKind::TaskEnd, 7),
              make_event(90, EventKind::WorkerEnd)};
  t->tracks = {a, b, c};
  return t;
}

TEST(TaskDetails, AStealAcrossGpusNamesTheVictimsDevice) {
  const TraceModel m(two_gpu_steals());
  std::map<std::uint32_t, std::string> source;  // task id -> where it came from
  for (std::uint32_t l = 0; l < m.lanes().size(); ++l) {
    for (std::uint32_t z = 0; z < m.lanes()[l].zones.size(); ++z) {
      const TaskDetails d = task_details(m, {l, z});
      source[m.lanes()[l].zones[z].id] = d.source;
      if (m.lanes()[l].zones[z].id == 7) {
        ASSERT_TRUE(d.stolen_from);
        EXPECT_EQ(d.stolen_from_device, 0u);
        EXPECT_GE(m.worker_lane(d.stolen_from_device, *d.stolen_from), 0)
            << "the victim is GPU 0's block 2";
      }
    }
  }
  EXPECT_EQ(source[7], "stolen from worker 2 of device 0 (across GPUs)");
  EXPECT_EQ(source[6], "stolen from worker 2");
  EXPECT_EQ(m.stats().steals, 2u);
}

TEST(TaskDetails, QueueTasksNameTheirQueue) {
  const TraceModel& m = testing::recorded(testing::kP4Queue);
  std::uint64_t from_queue = 0, tasks = 0;
  for (std::uint32_t l = 0; l < m.lanes().size(); ++l) {
    for (std::uint32_t z = 0; z < m.lanes()[l].zones.size(); ++z, ++tasks) {
      const TaskDetails d = task_details(m, {l, z});
      from_queue += d.queue.has_value();
      if (d.queue) {
        EXPECT_GE(*d.queue_left, 0);
      }
    }
  }
  EXPECT_GT(from_queue, tasks * 9 / 10) << "task-queue workers record each dequeue's queue";
}

TEST(TaskDetails, SpawningTasksCountTheirChildren) {
  const TraceModel& m = testing::recorded(testing::kUts);
  std::uint64_t children = 0;
  for (std::uint32_t l = 0; l < m.lanes().size(); ++l) {
    for (std::uint32_t z = 0; z < m.lanes()[l].zones.size(); ++z)
      children += task_details(m, {l, z}).spawned;
  }
  // Every node but the root was spawned by another.
  EXPECT_EQ(children + 1, m.stats().tasks);
}

// A SpawnBatch after a task gives its children's count and their ids; a count-only Spawn the count.
TEST(TaskDetails, ASpawnBatchNamesTheChildrensIds) {
  auto t = std::make_shared<trace::Trace>(gpulb::testing::make_trace(1, 3, 100));
  std::vector<trace::Event>& ev = t->tracks[0].events;
  const auto end_of = [&](std::uint32_t id) {
    return std::find_if(ev.begin(), ev.end(), [&](const trace::Event& e) {
      return e.kind == trace::EventKind::TaskEnd && e.arg == id;
    });
  };
  const std::uint64_t end0 = end_of(0)->time_ns;
  ev.insert(end_of(0) + 1, trace::make_event(end0, trace::EventKind::SpawnBatch, 40, 3));
  const std::uint64_t end1 = end_of(1)->time_ns;
  ev.insert(end_of(1) + 1, trace::make_event(end1, trace::EventKind::Spawn, 2));
  const TraceModel m(t);
  const auto lane = static_cast<std::uint32_t>(m.worker_lane(0, 0));
  const TaskDetails batch = task_details(m, {lane, 0});
  EXPECT_EQ(batch.spawned, 3u);
  EXPECT_EQ(batch.first_child, std::optional<std::uint32_t>(40));
  const TaskDetails count_only = task_details(m, {lane, 1});
  EXPECT_EQ(count_only.spawned, 2u);
  EXPECT_FALSE(count_only.first_child);
  EXPECT_EQ(task_details(m, {lane, 2}).spawned, 0u);
}

TEST(TaskSearch, FindsATaskByIdAndTasksByKind) {
  const TraceModel& m = testing::recorded(testing::kP4Queue);
  const Lane& some = m.lanes()[m.lanes().size() / 2];
  ASSERT_FALSE(some.zones.empty());
  const Zone& z = some.zones[some.zones.size() / 2];
  const std::vector<TaskRef> found = find_tasks(m, z.id, std::nullopt);
  ASSERT_EQ(found.size(), 1u) << "task ids are unique in a run";
  EXPECT_EQ(&m.lanes()[found[0].lane], &some);
  EXPECT_EQ(found[0].zone, some.zones.size() / 2) << "the very task";
  EXPECT_EQ(task_details(m, found[0]).id, z.id);
  const std::vector<TaskRef> by_kind = find_tasks(m, std::nullopt, z.kind, 50);
  EXPECT_EQ(by_kind.size(), 50u) << "capped";
  for (const TaskRef& r : by_kind) EXPECT_EQ(m.lanes()[r.lane].zones[r.zone].kind, z.kind);
  EXPECT_TRUE(find_tasks(m, 0xFFFFFFF0u, std::nullopt).empty());
  EXPECT_TRUE(find_tasks(m, std::nullopt, std::nullopt).empty());
}

// The CPU backend times runs of short tasks once a batch (cpu/trace_stream.hpp) and flags the
// times it placed: the details say so, for those tasks only.
TEST(TaskDetails, InterpolatedTimesAreSaidSo) {
  auto t = std::make_shared<trace::Trace>(gpulb::testing::make_trace(1, 3, 100));
  for (trace::Event& e : t->tracks[0].events) {
    const bool second =
        (e.kind == trace::EventKind::TaskBegin || e.kind == trace::EventKind::TaskEnd) &&
        e.arg == 1;
    if (second) e.flags = trace::kTimeInterpolated;
  }
  const TraceModel m(t);
  const int l = m.worker_lane(0, 0);
  ASSERT_GE(l, 0);
  const auto lane = static_cast<std::uint32_t>(l);
  ASSERT_EQ(m.lanes()[lane].zones.size(), 3u);
  EXPECT_FALSE(task_details(m, {lane, 0}).interpolated);
  EXPECT_TRUE(task_details(m, {lane, 1}).interpolated);
  EXPECT_FALSE(task_details(m, {lane, 2}).interpolated);
}

TEST(TaskSearch, TheTaskUnderTheCursor) {
  const TraceModel& m = testing::recorded(testing::kP4Queue);
  const std::uint32_t l = static_cast<std::uint32_t>(m.lanes().size() / 2);
  const Zone& z = m.lanes()[l].zones[3];
  const double mid = (static_cast<double>(z.begin_ns) + static_cast<double>(z.end_ns)) / 2;
  EXPECT_EQ(task_at(m, l, mid, 1.0), (TaskRef{l, 3}));
  EXPECT_FALSE(task_at(m, l, static_cast<double>(m.end_ns()) + 1e6, 1.0).has_value());
}

}  // namespace
}  // namespace gpulb::viewer

namespace gpulb::viewer {
namespace {

TEST(TaskSearch, QueriesReadAnIdAKindOrBoth) {
  EXPECT_EQ(parse_task_query("1234")->id, 1234u);
  EXPECT_FALSE(parse_task_query("1234")->kind);
  EXPECT_EQ(parse_task_query("#77")->id, 77u);
  EXPECT_EQ(parse_task_query("k2")->kind, 2);
  EXPECT_EQ(parse_task_query("kind 3")->kind, 3);
  EXPECT_EQ(parse_task_query(" kind:4 ")->kind, 4);
  const auto both = parse_task_query("12 k1");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->id, 12u);
  EXPECT_EQ(both->kind, 1);
  for (const char* bad :
       {"", "  ", "abc", "k", "12 13", "k1 k2", "99999999999", "kind 70000", "12x"}) {
    EXPECT_FALSE(parse_task_query(bad)) << "\"" << bad << "\"";
  }
}

}  // namespace
}  // namespace gpulb::viewer

// Compare: the search looked in trace A only, and tasks could not be clicked
// in either panel. Both runs are searched, each match names its run, and a click on either
// panel picks the task of that panel's trace at that panel's time.
namespace gpulb::viewer {
namespace {

// A task id that one run has and the other has not.
std::optional<std::uint32_t> id_only_in(const TraceModel& has, const TraceModel& lacks) {
  for (const Lane& lane : has.lanes()) {
    for (std::size_t z = 0; z < lane.zones.size(); ++z) {
      if (find_tasks(lacks, lane.zones.id(z), std::nullopt, 1).empty()) return lane.zones.id(z);
    }
  }
  return std::nullopt;
}

TEST(CompareSearch, SearchesBothRunsAndSaysWhichRunEachMatchIsIn) {
  const TraceModel& a = testing::recorded(testing::kConnect4Static);
  const TraceModel& b = testing::recorded(testing::kP4Queue);
  const std::optional<std::uint32_t> only_b = id_only_in(b, a);
  ASSERT_TRUE(only_b) << "P4 has a task id connect4's static list has not";
  const std::vector<RunTask> found =
      find_tasks_in_runs(a, &b, TaskQuery{only_b, std::nullopt}, 100);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].run, 1) << "found in B";
  EXPECT_EQ(task_details(b, found[0].task).id, *only_b) << "and its ref names B's lanes";
  EXPECT_EQ(found_note(found, 0, true, false), "1 of 1 (A 0, B 1): in B");
  EXPECT_TRUE(find_tasks_in_runs(a, nullptr, TaskQuery{only_b, std::nullopt}, 100).empty())
      << "A alone has no such task";
}

TEST(CompareSearch, AKindInBothRunsListsAsMatchesFirstThenBs) {
  const TraceModel& a = testing::recorded(testing::kConnect4Static);
  const TraceModel& b = testing::recorded(testing::kConnect4Stealing);
  const std::uint16_t kind = a.kinds().front();
  const std::vector<std::uint16_t> b_kinds = b.kinds();
  ASSERT_NE(std::find(b_kinds.begin(), b_kinds.end(), kind), b_kinds.end());
  const std::vector<RunTask> both = find_tasks_in_runs(a, &b, TaskQuery{std::nullopt, kind}, 40);
  ASSERT_EQ(both.size(), 80u) << "at most 40 of each run";
  EXPECT_TRUE(
      std::is_partitioned(both.begin(), both.end(), [](const RunTask& t) { return t.run == 0; }));
  for (const RunTask& t : both) {
    const TraceModel& m = t.run == 0 ? a : b;
    ASSERT_LT(t.task.lane, m.lanes().size());
    ASSERT_LT(t.task.zone, m.lanes()[t.task.lane].zones.size());
    EXPECT_EQ(m.lanes()[t.task.lane].zones.kind(t.task.zone), kind);
  }
  EXPECT_EQ(found_note(both, 45, true, true), "46 of 80+ (A 40, B 40): in B");
  EXPECT_EQ(found_note(both, 2, false, false), "3 of 80");
}

// A click at a task's x in either compare panel (each panel's axis is the shared one, counting from
// its own run's first launch, shifted to its trace's clock) picks that task of that run.
TEST(CompareSearch, AClickInEitherPanelPicksThatRunsTask) {
  const TraceModel& a = testing::recorded(testing::kConnect4Static);
  const TraceModel& b = testing::recorded(testing::kConnect4Stealing);
  const CompareSpan c = compare_span(a, b);
  const double left = 200.0, right = 1700.0;
  const TimeAxis shared = TimeAxis::fit(c.shown.begin_ns, c.shown.end_ns, left, right - left);
  for (const auto& [m, origin, run] :
       {std::tuple{&a, c.origin_a, 0}, std::tuple{&b, c.origin_b, 1}}) {
    const TimeAxis axis = panel_axis(shared, origin);
    int picked = 0;
    for (std::uint32_t l = 0; l < m->lanes().size(); ++l) {
      const ZoneList& zones = m->lanes()[l].zones;
      for (std::uint32_t z = 0; z < zones.size(); ++z) {
        const double x0 = axis.x(static_cast<double>(zones.begin_ns(z))),
                     x1 = axis.x(static_cast<double>(zones.end_ns(z)));
        if (x1 - x0 < 6) continue;  // wide enough on screen to click alone
        const std::optional<RunTask> hit = pick_task(*m, run, l, axis, (x0 + x1) / 2);
        ASSERT_TRUE(hit) << "run " << run << " lane " << l;
        EXPECT_EQ(*hit, (RunTask{run, {l, z}}));
        EXPECT_GE(x0, left - 1) << "inside the panel";
        EXPECT_LE(x1, right + 1);
        if (++picked == 20) break;
      }
      if (picked == 20) break;
    }
    EXPECT_EQ(picked, 20) << "run " << run << ": tasks wide enough to click";
  }
  // B's clock is not A's: B's task, clicked through A's axis, is not where A's panel puts it.
  const TimeAxis axis_b = panel_axis(shared, c.origin_b);
  EXPECT_NE(c.origin_a, c.origin_b);
  EXPECT_NE(axis_b.t0_ns, panel_axis(shared, c.origin_a).t0_ns);
}

}  // namespace
}  // namespace gpulb::viewer
