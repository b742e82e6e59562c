#include <gtest/gtest.h>

#include "gpulb/tracing/statistics.hpp"
#include "trace_fixtures.hpp"

namespace gpulb::trace {
namespace {

TEST(Statistics, BalancedRunIsFullyEfficient) {
  const TraceStatistics st = compute_statistics(gpulb::testing::make_trace(4, 10, 100));
  EXPECT_EQ(st.workers, 4u);
  EXPECT_EQ(st.tasks, 40u);
  EXPECT_EQ(st.makespan_ns, 1000u);
  EXPECT_DOUBLE_EQ(st.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(st.load.imbalance, 1.0);
  EXPECT_DOUBLE_EQ(st.lower_bound_ns, 1000.0);
  EXPECT_EQ(st.failed_dequeues, 4u * 7u);  // WorkerEnd carries each worker's failed attempts
}

TEST(Statistics, StaggeredStartLowersEfficiencyNotImbalance) {
  // Worker w starts at w*500: makespan 1000 + 3*500, busy 1000 each.
  const TraceStatistics st = compute_statistics(gpulb::testing::make_trace(4, 10, 100, 500));
  EXPECT_EQ(st.makespan_ns, 2500u);
  EXPECT_DOUBLE_EQ(st.efficiency, 4000.0 / (4 * 2500.0));
  EXPECT_DOUBLE_EQ(st.load.imbalance, 1.0);
}

TEST(Statistics, ImbalanceIsMaxOverMeanBusy) {
  Trace t = gpulb::testing::make_trace(2, 1, 100);
  // Stretch worker 1's task to 300 ns: busy 100 and 300, mean 200, max/mean 1.5.
  t.tracks[1].events[3].time_ns = 300;
  t.tracks[1].events[4].time_ns = 300;
  const TraceStatistics st = compute_statistics(t);
  EXPECT_DOUBLE_EQ(st.load.imbalance, 1.5);
  EXPECT_EQ(st.load.min_busy_ns, 100u);
  EXPECT_EQ(st.load.max_busy_ns, 300u);
}

TEST(Statistics, DroppedEventsAreCounted) {
  Trace t = gpulb::testing::make_trace(2, 1, 100);
  t.tracks[0].dropped = 5;
  t.tracks[2].dropped = 1;
  EXPECT_EQ(compute_statistics(t).dropped_events, 6u);
}

TEST(Statistics, TaskBeginWithoutEndIsNotATask) {
  Track tr;
  tr.events = {make_event(0, EventKind::TaskBegin, 1), make_event(5, EventKind::TaskBegin, 2),
               make_event(9, EventKind::TaskEnd, 2)};
  const auto spans = task_spans(tr);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].id, 2u);
  EXPECT_EQ(spans[0].end_ns - spans[0].begin_ns, 4u);
}

// A tree 3 levels deep on 8 workers: the work spread evenly would take 400 ns, but a chain of 4
// tasks must run one after the other, each parent at least 300 ns and the leaf 100 ns. Each spawn
// is a count-only Spawn, or with `batches` on the odd workers a SpawnBatch naming its children.
Trace three_levels_deep(bool batches = false) {
  Trace t = gpulb::testing::make_trace(8, 4, 100);
  t.meta.result_json = R"({"nodes":32,"max_depth":3})";
  for (Track& tr : t.tracks) {
    if (tr.role == TrackRole::Host) continue;
    // The first task of each worker spawned two children and lasted 300 ns.
    tr.events[3].time_ns += 200;
    const bool batch = batches && tr.worker % 2 == 1;
    tr.events.insert(
        tr.events.begin() + 4,
        batch ? make_event(tr.events[3].time_ns, EventKind::SpawnBatch, 100 + 2 * tr.worker, 2)
              : make_event(tr.events[3].time_ns, EventKind::Spawn, 2));
    for (std::size_t i = 5; i < tr.events.size(); ++i) tr.events[i].time_ns += 200;
  }
  return t;
}

TEST(Statistics, TheLowerBoundOfATreeIsItsChainOfTasksWhereThatIsLonger) {
  const TraceStatistics st = compute_statistics(three_levels_deep());
  EXPECT_DOUBLE_EQ(st.balance_bound_ns, 600.0);  // 3 x 100 + 300 ns a worker
  EXPECT_EQ(st.critical_path.depth, 3u);
  EXPECT_EQ(st.critical_path.shortest_parent_ns, 300u);
  EXPECT_EQ(st.critical_path.shortest_task_ns, 100u);
  EXPECT_DOUBLE_EQ(st.critical_path.bound_ns, 3 * 300.0 + 100.0);
  EXPECT_DOUBLE_EQ(st.lower_bound_ns, 1000.0);
  EXPECT_EQ(st.lower_bound, LowerBound::CriticalPath);
}

// A SpawnBatch counts its children once (aux; its arg is the first child's id) and marks a parent
// for the critical path as a Spawn does.
TEST(Statistics, SpawnBatchesCountTheirChildrenOnceAndMarkParents) {
  const TraceStatistics counted = compute_statistics(three_levels_deep(false));
  EXPECT_EQ(counted.spawned, 16u);
  EXPECT_EQ(counted.spawned_named, 0u);
  const TraceStatistics st = compute_statistics(three_levels_deep(true));
  EXPECT_EQ(st.spawned, 16u);
  EXPECT_EQ(st.spawned_named, 8u);
  std::uint64_t per_worker = 0;
  for (const WorkerStats& w : st.per_worker) per_worker += w.spawned;
  EXPECT_EQ(per_worker, 16u);
  EXPECT_EQ(st.critical_path.shortest_parent_ns, 300u);
  EXPECT_DOUBLE_EQ(st.critical_path.bound_ns, counted.critical_path.bound_ns);
}

TEST(Statistics, WithoutATreeDepthOrWithPlacedTimesTheBoundIsTheBalance) {
  Trace no_depth = three_levels_deep();
  no_depth.meta.result_json = R"({"nodes":32})";
  EXPECT_EQ(compute_statistics(no_depth).lower_bound, LowerBound::Balance);
  EXPECT_DOUBLE_EQ(compute_statistics(no_depth).lower_bound_ns, 600.0);
  // Times shared out over a batch's span say nothing of one task's length.
  Trace placed = three_levels_deep();
  placed.tracks[0].events[3].flags = kTimeInterpolated;
  EXPECT_DOUBLE_EQ(compute_statistics(placed).critical_path.bound_ns, 0.0);
  EXPECT_EQ(compute_statistics(placed).lower_bound, LowerBound::Balance);
}

TEST(Statistics, StealsFromAnotherDeviceAreCountedApart) {
  Trace t = gpulb::testing::make_trace(2, 1, 100);
  t.devices.push_back(t.devices[0]);
  t.tracks[1].device = 1;
  t.tracks[0].events.insert(t.tracks[0].events.begin() + 1,
                            make_event(0, EventKind::Steal, 0, steal_aux_for_device(1)));
  t.tracks[1].events.insert(t.tracks[1].events.begin() + 1, make_event(0, EventKind::Steal, 0, 0));
  const TraceStatistics st = compute_statistics(t);
  EXPECT_EQ(st.steals, 2u);
  EXPECT_EQ(st.steals_across_devices, 1u);
}

TEST(Statistics, HistogramHasOneLinePerBinAndCountsEveryWorker) {
  Trace t = gpulb::testing::make_trace(6, 3, 10);
  const std::string h = tasks_per_worker_histogram(compute_statistics(t), 4);
  EXPECT_EQ(std::count(h.begin(), h.end(), '\n'), 1);  // all workers ran 3 tasks: one bin
  EXPECT_NE(h.find("    6 |"), std::string::npos) << h;
}

TEST(Statistics, HistogramOfFewerTaskCountsThanBinsHasOneLineEachWithItsOwnRange) {
  // Two idle workers and four of one task (a one-wave run): 0 and 1 tasks, 8 bins asked.
  Trace t = gpulb::testing::make_trace(6, 1, 10);
  for (int w : {0, 1}) {
    std::erase_if(t.tracks[w].events, [](const Event& e) {
      return e.kind == EventKind::TaskBegin || e.kind == EventKind::TaskEnd;
    });
  }
  const std::string h = tasks_per_worker_histogram(compute_statistics(t), 8);
  EXPECT_EQ(std::count(h.begin(), h.end(), '\n'), 2) << h;
  EXPECT_NE(h.find("0..0 "), std::string::npos) << h;
  EXPECT_NE(h.find("1..1 "), std::string::npos) << h;
  EXPECT_EQ(h.find("18446744073709551615"), std::string::npos) << h;
}

}  // namespace
}  // namespace gpulb::trace
