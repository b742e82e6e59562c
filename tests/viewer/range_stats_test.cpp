// Statistics of a selected range: over the whole run they are the summary's;
// split in two, the halves add up; per GPU and per SM rows sum to the total.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "range_stats.hpp"
#include "run_span.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

TEST(RangeStats, OverTheWholeRunTheyAreTheSummarys) {
  for (const char* file : {testing::kUts, testing::kP3Paper2Gpu, testing::kP4Queue}) {
    const TraceModel& m = testing::recorded(file);
    const RangeStats s =
        range_stats(m, static_cast<double>(m.begin_ns()), static_cast<double>(m.end_ns()) + 1);
    EXPECT_EQ(s.all.tasks, m.stats().tasks) << file;
    EXPECT_EQ(s.all.steals, m.stats().steals) << file;
    // DequeueFailed is written once an idle spell (the summary's idle polls count every attempt).
    std::uint64_t failed = 0;
    for (std::size_t i = 0; i < m.header().tracks.size(); ++i) {
      if (m.header().tracks[i].role == trace::TrackRole::Host) continue;
      for (const trace::Event e : m.events(i)) failed += e.kind == trace::EventKind::DequeueFailed;
    }
    EXPECT_EQ(s.all.failed_dequeues, failed) << file;
    EXPECT_LE(s.all.failed_dequeues, m.stats().failed_dequeues) << file;
    EXPECT_EQ(s.all.workers, m.stats().workers) << file;
    EXPECT_NEAR(s.all.busy_ns, m.stats().balance_bound_ns * m.stats().workers,
                1e-6 * s.all.busy_ns + 1)
        << file;
    EXPECT_GT(s.all.busy_pct(), 0.0);
    EXPECT_LE(s.all.busy_pct() + s.all.idle_pct(), 100.0 + 1e-9)
        << file << ": busy and idle never overlap";
  }
}

TEST(RangeStats, TwoHalvesAddUpToTheWhole) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const TimeSpan run = run_span(m);
  const double a = run.begin_ns + 100e3, b = run.begin_ns + 400e3, mid = run.begin_ns + 237'123.5;
  const RangeStats whole = range_stats(m, a, b), left = range_stats(m, a, mid),
                   right = range_stats(m, mid, b);
  EXPECT_EQ(left.all.tasks + right.all.tasks, whole.all.tasks);
  EXPECT_EQ(left.all.steals + right.all.steals, whole.all.steals);
  EXPECT_EQ(left.all.failed_dequeues + right.all.failed_dequeues, whole.all.failed_dequeues);
  EXPECT_NEAR(left.all.busy_ns + right.all.busy_ns, whole.all.busy_ns, 1.0);
  EXPECT_NEAR(left.all.idle_ns + right.all.idle_ns, whole.all.idle_ns, 1.0);
  EXPECT_LT(whole.all.tasks, m.stats().tasks) << "a part of the run holds a part of the tasks";
}

TEST(RangeStats, PerGpuAndPerSmRowsSumToTheTotal) {
  const TraceModel& m = testing::recorded(testing::kP3Modern2Gpu);
  const TimeSpan run = run_span(m);
  const RangeStats s = range_stats(m, run.begin_ns + 200e3, run.begin_ns + 600e3);
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[0].label, "GPU 0");
  EXPECT_EQ(s.groups.size(), 2u * 132u) << "a row per SM of each GPU";
  std::uint64_t tasks = 0;
  double busy = 0;
  for (const RangeRow& r : s.groups) {
    tasks += r.tasks;
    busy += r.busy_ns;
  }
  EXPECT_EQ(tasks, s.all.tasks);
  EXPECT_NEAR(busy, s.all.busy_ns, 1.0);
  EXPECT_EQ(s.groups[132].label, "GPU 1 SM 0");
}

TEST(RangeStats, TheTableHasAHeaderAndALinePerRow) {
  const TraceModel& m = testing::recorded(testing::kP3Modern2Gpu);
  const RangeStats s =
      range_stats(m, static_cast<double>(m.begin_ns()), static_cast<double>(m.end_ns()));
  const std::string t = range_stats_table(s, static_cast<double>(m.begin_ns()));
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'),
            static_cast<long>(2 + 1 + s.devices.size() + s.groups.size()));
  EXPECT_NE(t.find("where\tworkers\tbusy %\tidle %\ttasks\tsteals"), std::string::npos);
  EXPECT_NE(t.find("\nGPU 1 SM 131\t16\t"), std::string::npos) << t.substr(0, 400);
}

TEST(RangeStats, RowsSortByAnyColumn) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const RangeStats s =
      range_stats(m, static_cast<double>(m.begin_ns()), static_cast<double>(m.end_ns()) + 1);
  const std::vector<std::size_t> by_busy = range_order(s.groups, RangeColumn::Busy, true);
  ASSERT_EQ(by_busy.size(), s.groups.size());
  for (std::size_t i = 1; i < by_busy.size(); ++i) {
    EXPECT_LE(s.groups[by_busy[i - 1]].busy_pct(), s.groups[by_busy[i]].busy_pct());
  }
  const std::vector<std::size_t> by_steals = range_order(s.groups, RangeColumn::Steals, false);
  for (std::size_t i = 1; i < by_steals.size(); ++i)
    EXPECT_GE(s.groups[by_steals[i - 1]].steals, s.groups[by_steals[i]].steals);
  const std::vector<std::size_t> where = range_order(s.groups, RangeColumn::Where, true);
  for (std::size_t i = 0; i < where.size(); ++i)
    EXPECT_EQ(where[i], i) << "the SMs in their own order";
}

}  // namespace
}  // namespace gpulb::viewer
