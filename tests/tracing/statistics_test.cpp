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
    std::erase_if(t.tracks[w].events, [](const Event& e) { return e.kind == EventKind::TaskBegin || e.kind == EventKind::TaskEnd; });
  }
  const std::string h = tasks_per_worker_histogram(compute_statistics(t), 8);
  EXPECT_EQ(std::count(h.begin(), h.end(), '\n'), 2) << h;
  EXPECT_NE(h.find("0..0 "), std::string::npos) << h;
  EXPECT_NE(h.find("1..1 "), std::string::npos) << h;
  EXPECT_EQ(h.find("18446744073709551615"), std::string::npos) << h;
}

}  // namespace
}  // namespace gpulb::trace
