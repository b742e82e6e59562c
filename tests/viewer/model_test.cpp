// The viewer's trace model, without a window: level of detail, visible range, time <-> pixel,
// replay state, series and histogram bins.
#include <gtest/gtest.h>

#include <memory>

#include "gpulb/tracing/statistics.hpp"
#include "gpulb/tracing/trace_file.hpp"
#include "histogram.hpp"
#include "lod.hpp"
#include "replay.hpp"
#include "synthetic.hpp"
#include "time_axis.hpp"
#include "time_format.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;
using trace::make_event;

// One CPU device, two workers and a host: worker 0 runs tasks 1 [100,200) and 2 [300,600) with an
// idle spell from 200; worker 1 runs task 3 [150,450) and steals from worker 0.
std::shared_ptr<const trace::Trace> small_trace() {
  auto t = std::make_shared<trace::Trace>();
  t->devices.push_back({trace::DeviceKind::Cpu, 0, "CPU (2 threads)", 2, 2});
  trace::Track w0{trace::TrackRole::Worker, 0, 0, trace::Track::kNoSm, "worker 0", 0, {}};
  w0.events = {
      make_event(50, EventKind::WorkerStart),      make_event(100, EventKind::TaskBegin, 1, 0),
      make_event(200, EventKind::TaskEnd, 1, 0),   make_event(200, EventKind::DequeueFailed),
      make_event(300, EventKind::TaskBegin, 2, 1), make_event(600, EventKind::TaskEnd, 2, 1),
      make_event(700, EventKind::WorkerEnd, 3)};
  trace::Track w1{trace::TrackRole::Worker, 0, 1, trace::Track::kNoSm, "worker 1", 0, {}};
  w1.events = {
      make_event(60, EventKind::WorkerStart, 1),    make_event(140, EventKind::Steal, 0),
      make_event(140, EventKind::QueueLevel, 4, 0), make_event(150, EventKind::TaskBegin, 3, 0),
      make_event(450, EventKind::TaskEnd, 3, 0),    make_event(650, EventKind::WorkerEnd)};
  trace::Track host{trace::TrackRole::Host, 0, 0, trace::Track::kNoSm, "host producer", 0, {}};
  host.events = {make_event(10, EventKind::HostEnqueue, 5, 0),
                 make_event(10, EventKind::QueueLevel, 5, 0),
                 make_event(500, EventKind::QueueLevel, 2, 0)};
  t->tracks = {w1, host, w0};  // out of display order on purpose
  return t;
}

TEST(TimeAxis, PixelAndTimeRoundTrip) {
  const TimeAxis a = TimeAxis::fit(1000, 2000, 100, 500);  // 2 ns a pixel
  EXPECT_DOUBLE_EQ(a.x(1000), 100);
  EXPECT_DOUBLE_EQ(a.x(2000), 600);
  EXPECT_DOUBLE_EQ(a.time_at(350), 1500);
  EXPECT_DOUBLE_EQ(a.time_at(a.x(1234.5)), 1234.5);
}

TEST(TimeAxis, ZoomKeepsTheTimeUnderTheCursor) {
  TimeAxis a = TimeAxis::fit(0, 1e6, 0, 1000);
  const double under = a.time_at(250);
  a.zoom_at(250, 4.0);
  EXPECT_DOUBLE_EQ(a.time_at(250), under);
  EXPECT_DOUBLE_EQ(a.ns_per_px, 250.0);
  a.pan(100);  // dragging right shows earlier time
  EXPECT_DOUBLE_EQ(a.time_at(350), under);
}

struct Iv {
  std::uint64_t begin_ns, end_ns;
};

TEST(Lod, VisibleRangeIsFoundByBinarySearch) {
  std::vector<Iv> v;
  for (std::uint64_t i = 0; i < 1000; ++i) v.push_back({i * 10, i * 10 + 5});
  const std::span<const Iv> s(v);
  EXPECT_EQ(first_ending_at_or_after(s, 0.0), 0u);
  EXPECT_EQ(first_ending_at_or_after(s, 5.0), 0u);  // [0,5] still touches t = 5
  EXPECT_EQ(first_ending_at_or_after(s, 5.5), 1u);
  EXPECT_EQ(first_ending_at_or_after(s, 9999.0), 1000u);
  EXPECT_EQ(first_beginning_at_or_after(s, 0, 4005.0), 401u);
}

TEST(Lod, WideZonesAreDrawnOneByOne) {
  std::vector<Iv> v = {{0, 100}, {200, 300}, {400, 500}};
  std::vector<DrawRun> runs;
  lod_runs<Iv>(v, TimeAxis::fit(0, 500, 0, 500), 0, 500, 3.0, runs);  // 1 ns a pixel
  ASSERT_EQ(runs.size(), 3u);
  for (const DrawRun& r : runs) EXPECT_EQ(r.count, 1u);
  EXPECT_DOUBLE_EQ(runs[1].x0, 200);
  EXPECT_DOUBLE_EQ(runs[1].x1, 300);
}

TEST(Lod, ZonesUnderThreePixelsMergeIntoOneRun) {
  // 10,000 zones of 1 ns, 1 ns apart, over 20,000 ns on 1,000 px: 20 ns a pixel.
  std::vector<Iv> v;
  for (std::uint64_t i = 0; i < 10000; ++i) v.push_back({2 * i, 2 * i + 1});
  std::vector<DrawRun> runs;
  lod_runs<Iv>(v, TimeAxis::fit(0, 20000, 0, 1000), 0, 1000, 3.0, runs);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].count, 10000u);
  EXPECT_NEAR(runs[0].x1, 1000.0, 0.1);
}

TEST(Lod, AMergedRunStopsAtAWideZone) {
  // Tiny zones, then a wide one right after them, then tiny ones again.
  std::vector<Iv> v = {{0, 1}, {2, 3}, {4, 5}, {6, 500}, {501, 502}, {503, 504}};
  std::vector<DrawRun> runs;
  lod_runs<Iv>(v, TimeAxis::fit(0, 1000, 0, 1000), 0, 1000, 3.0, runs);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].count, 3u);
  EXPECT_EQ(runs[1].first, 3u);
  EXPECT_EQ(runs[1].count, 1u);
  EXPECT_EQ(runs[2].count, 2u);
}

TEST(Lod, OffScreenZonesAreNotDrawn) {
  std::vector<Iv> v;
  for (std::uint64_t i = 0; i < 100; ++i) v.push_back({i * 100, i * 100 + 50});
  std::vector<DrawRun> runs;
  // Show [1000, 2000) only: zones 10..19 plus the one starting exactly at the right edge.
  lod_runs<Iv>(v, TimeAxis::fit(1000, 2000, 0, 1000), 0, 1000, 3.0, runs);
  ASSERT_EQ(runs.size(), 11u);
  EXPECT_EQ(runs.front().first, 10u);
}

TEST(Lod, TenMillionZonesCostOnlyThePixels) {
  std::vector<Iv> v(10'000'000);
  for (std::uint64_t i = 0; i < v.size(); ++i) v[i] = {i * 10, i * 10 + 7};
  std::vector<DrawRun> runs;
  lod_runs<Iv>(v, TimeAxis::fit(0, 1e8, 0, 1500), 0, 1500, 3.0, runs);
  EXPECT_LE(runs.size(), 1500u / 3 + 1);
  std::uint64_t covered = 0;
  for (const DrawRun& r : runs) covered += r.count;
  EXPECT_EQ(covered, v.size());
}

TEST(TraceModel, GroupsLanesByDeviceWithHostLanesFirst) {
  const TraceModel m(small_trace());
  ASSERT_EQ(m.devices().size(), 1u);
  const DeviceGroup& d = m.devices()[0];
  ASSERT_EQ(d.host_lanes.size(), 1u);
  EXPECT_EQ(m.lanes()[d.host_lanes[0]].label, "host producer");
  ASSERT_EQ(d.groups.size(), 1u);  // no SM ids: one "workers" group
  ASSERT_EQ(d.groups[0].lanes.size(), 2u);
  EXPECT_EQ(m.lanes()[d.groups[0].lanes[0]].label, "worker 0");
  EXPECT_EQ(m.worker_lane(0, 1), static_cast<int>(d.groups[0].lanes[1]));
  EXPECT_EQ(m.begin_ns(), 10u);
  EXPECT_EQ(m.end_ns(), 700u);
  EXPECT_EQ(m.task_count(), 3u);
  EXPECT_EQ(m.min_task_ns(), 100u);
  EXPECT_EQ(m.max_task_ns(), 300u);
  EXPECT_EQ(m.kinds(), (std::vector<std::uint16_t>{0, 1}));
}

TEST(TraceModel, IdleSpellsRunFromAFailedDequeueToTheNextTask) {
  const TraceModel m(small_trace());
  const Lane& w0 = m.lanes()[m.worker_lane(0, 0)];
  ASSERT_EQ(w0.idle.size(), 1u);
  EXPECT_EQ(w0.idle[0].begin_ns, 200u);
  EXPECT_EQ(w0.idle[0].end_ns, 300u);
  EXPECT_EQ(w0.zones.busy_ns(), 400u);
}

TEST(TraceModel, BusyWorkersOverTime) {
  const TraceModel m(small_trace());
  const StepSeries& busy = *m.devices()[0].busy;
  EXPECT_EQ(busy.value_at(120), 1);
  EXPECT_EQ(busy.value_at(160), 2);
  EXPECT_EQ(busy.value_at(250), 1);  // worker 0 idle, worker 1 busy
  EXPECT_EQ(busy.value_at(650), 0);
  EXPECT_EQ(busy.max_value(), 2);
  EXPECT_DOUBLE_EQ(busy.integral(0, 1000), 700.0);  // all the tasks' time
}

TEST(TraceModel, QueueLevelsMergeWritersInTimeOrder) {
  const TraceModel m(small_trace());
  ASSERT_EQ(m.queues().size(), 1u);
  const StepSeries& q = m.queues()[0].level;
  EXPECT_EQ(m.queues()[0].label, "CPU queue 0");
  EXPECT_EQ(q.value_at(5), 0);
  EXPECT_EQ(q.value_at(100), 5);  // the host wrote 5
  EXPECT_EQ(q.value_at(140), 4);  // worker 1 took one
  EXPECT_EQ(q.value_at(650), 2);
  // The device's workers ended by 700: nothing takes from the queue after, so it holds no level.
  EXPECT_EQ(q.value_at(10000), 0);
}

// One event of every kind on one worker: the lane keeps exactly the kinds the table calls markers,
// its idle spell follows the table's edges, and each level source gets its own series.
TEST(TraceModel, MarkersIdleAndLevelsFollowTheEventKindTable) {
  auto t = std::make_shared<trace::Trace>();
  t->devices.push_back({trace::DeviceKind::Cpu, 0, "CPU", 1, 1});
  trace::Track w{trace::TrackRole::Worker, 0, 0, trace::Track::kNoSm, "worker 0", 0, {}};
  std::uint64_t now = 0;
  for (int k = 1; k < static_cast<int>(EventKind::Count); ++k) {
    w.events.push_back(make_event(now += 10, static_cast<EventKind>(k), 1, 0));
  }
  t->tracks = {w};
  const TraceModel m(t);
  const Lane& lane = m.lanes()[0];
  std::vector<EventKind> markers, expected;
  for (const Marker& mk : lane.markers) markers.push_back(mk.kind);
  for (const trace::Event& e : w.events) {
    if (trace::event_traits(e.kind).marker) expected.push_back(e.kind);
  }
  EXPECT_EQ(markers, expected);
  // DequeueFailed (kind 5, at 50) starts the spell and Halt (kind 6, at 60) ends it.
  ASSERT_EQ(lane.idle.size(), 2u);
  EXPECT_EQ(lane.idle[0].begin_ns, 50u);
  EXPECT_EQ(lane.idle[0].end_ns, 60u);
  // StealFailed (at 100) starts the second, which runs to the worker's last event.
  EXPECT_EQ(lane.idle[1].begin_ns, 100u);
  EXPECT_EQ(lane.idle[1].end_ns, lane.end_ns);
  std::vector<std::string> labels;
  for (const QueueSeries& q : m.queues()) labels.push_back(q.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"CPU queue 0", "CPU deques (sum)", "CPU host pool"}));
}

TEST(Replay, StateAtThePlayhead) {
  const TraceModel m(small_trace());
  const int w0 = m.worker_lane(0, 0), w1 = m.worker_lane(0, 1);
  const ReplayState r = replay_state_at(m, 350);
  EXPECT_EQ(r.lanes[w0].tasks_done, 1u);
  EXPECT_EQ(r.lanes[w0].running, 1);           // task 2 is running
  EXPECT_EQ(r.lanes[w0].busy_ns, 100u + 50u);  // task 1 and half... 50 ns of task 2
  EXPECT_EQ(r.lanes[w1].tasks_done, 0u);
  EXPECT_EQ(r.lanes[w1].busy_ns, 200u);
  EXPECT_EQ(r.running, 2u);
  EXPECT_EQ(r.tasks_done, 1u);
  ASSERT_EQ(r.queue_levels.size(), 1u);
  EXPECT_EQ(r.queue_levels[0], 4);
  // At the end, replay agrees with the shared statistics.
  const ReplayState end = replay_state_at(m, 1e9);
  EXPECT_EQ(end.tasks_done, m.stats().tasks);
  EXPECT_EQ(end.lanes[w0].busy_ns + end.lanes[w1].busy_ns, m.stats().load.busy_ns);
}

TEST(StepSeries, ColumnsSummariseEachPixel) {
  StepSeries s({{0, 1}, {10, 5}, {15, 2}, {40, 0}});
  const auto cols = s.columns(0, 20, 2);  // [0,20) and [20,40)
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_DOUBLE_EQ(cols[0].mean, (10 * 1 + 5 * 5 + 5 * 2) / 20.0);
  EXPECT_EQ(cols[0].min, 1);
  EXPECT_EQ(cols[0].max, 5);
  EXPECT_EQ(cols[1].min, 2);
  EXPECT_EQ(cols[1].max, 2);
}

TEST(StepSeries, BlockMinMaxMatchesAScan) {
  std::vector<StepSeries::Point> p;
  for (std::uint64_t i = 0; i < 1000; ++i)
    p.push_back({i, static_cast<std::int64_t>((i * 7919) % 1000)});
  const StepSeries s(p);
  const auto cols = s.columns(0, 333, 3);
  for (int c = 0; c < 3; ++c) {
    std::int64_t lo = 1 << 30, hi = -1;
    for (std::uint64_t i = static_cast<std::uint64_t>(c) * 333;
         i < std::min<std::uint64_t>(1000, (c + 1) * 333); ++i) {
      lo = std::min(lo, p[i].value);
      hi = std::max(hi, p[i].value);
    }
    EXPECT_EQ(cols[c].min, lo) << c;
    EXPECT_EQ(cols[c].max, hi) << c;
  }
}

TEST(StepSeries, ColumnSweepAgreesWithPointQueries) {
  // Irregular steps, some columns with many points, some with none.
  std::vector<StepSeries::Point> p;
  std::uint64_t t = 5;
  for (int i = 0; i < 5000; ++i) {
    t += (i % 97 == 0) ? 3000 : 1 + (i * 37) % 13;
    p.push_back({t, (i * 7919) % 50});
  }
  const StepSeries s(p);
  const double t0 = 0, col = 173.0;
  const int n = static_cast<int>(static_cast<double>(t) / col) + 3;
  const auto cols = s.columns(t0, col, n);
  for (int c = 0; c < n; ++c) {
    const double a = t0 + c * col, b = a + col;
    EXPECT_NEAR(cols[c].mean, s.integral(a, b) / col, 1e-6) << c;
    std::int64_t lo = s.value_at(a), hi = lo;
    for (const auto& q : p) {
      if (static_cast<double>(q.time_ns) > a && static_cast<double>(q.time_ns) < b) {
        lo = std::min(lo, q.value);
        hi = std::max(hi, q.value);
      }
    }
    ASSERT_EQ(cols[c].min, lo) << c;
    ASSERT_EQ(cols[c].max, hi) << c;
  }
}

TEST(Histogram, LinearBinsPutTheMaximumInTheLastBin) {
  const std::vector<double> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10};
  const Histogram h = linear_histogram(v, 5);  // [0,2) [2,4) [4,6) [6,8) [8,10]
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{2, 2, 2, 2, 2}));
  EXPECT_EQ(bin_of(h, 10.0), 4);
  EXPECT_EQ(h.peak(), 2u);
}

TEST(Histogram, LogBinsSpreadDecadesEvenly) {
  const std::vector<double> v = {10, 20, 100, 150, 1000, 5000, 10000};
  const Histogram h = log_histogram(v, 3);  // [10,100) [100,1000) [1000,10000]
  EXPECT_TRUE(h.log_scale);
  EXPECT_NEAR(h.edges[1], 100.0, 1e-9);
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{2, 2, 3}));
}

TEST(TimeFormat, ParsesUnitsAndRanges) {
  EXPECT_DOUBLE_EQ(*parse_time_ns("1500"), 1500.0);
  EXPECT_DOUBLE_EQ(*parse_time_ns("2.5us"), 2500.0);
  EXPECT_DOUBLE_EQ(*parse_time_ns("3ms"), 3e6);
  EXPECT_FALSE(parse_time_ns("3 parsecs"));
  const auto r = parse_time_span("1ms:2ms");
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->end_ns - r->begin_ns, 1e6);
  EXPECT_FALSE(parse_time_span("2ms:1ms"));
  EXPECT_EQ(format_time(1.2e6), "1.2 ms");
}

TEST(Synthetic, GivesTheEventsAskedForAndSurvivesTheFileFormat) {
  SyntheticSpec spec;
  spec.sms = 4;
  spec.workers_per_sm = 2;
  spec.events = 20000;
  const trace::Trace t = make_synthetic_trace(spec);
  EXPECT_NEAR(static_cast<double>(t.event_count()), 20000.0, 20000.0 * 0.05);
  const trace::Trace back = trace::decode_trace(trace::encode_trace(t));
  EXPECT_TRUE(back == t);
  const TraceModel m(std::make_shared<const trace::Trace>(back));
  EXPECT_EQ(m.devices()[0].groups.size(), 4u);  // one group per SM
  EXPECT_TRUE(m.devices()[0].has_sms);
  EXPECT_EQ(m.task_count(), m.stats().tasks);
}

// Typed times (--range, --playhead) are exactly what they look like.
TEST(TimeFormat, TimesAreDecimalsWithAUnitAndNothingElse) {
  EXPECT_DOUBLE_EQ(*parse_time_ns("1.5ms"), 1.5e6);
  EXPECT_DOUBLE_EQ(*parse_time_ns(".5us"), 500.0);
  for (const char* bad :
       {"", " 1", "1 ", "+1", "-0", "0x10", "1e3", "1e400", "1..2", ".", "1msx", "nan", "inf"}) {
    EXPECT_FALSE(parse_time_ns(bad)) << "'" << bad << "'";
  }
  EXPECT_FALSE(parse_time_ns(std::string(400, '9'))) << "past what a double holds";
  EXPECT_FALSE(parse_time_ns("1" + std::string(300, '0') + "s"))
      << "finite, but not in nanoseconds";
}

TEST(TimeFormat, ARangeIsExactlyStartColonEnd) {
  ASSERT_TRUE(parse_time_span("1ms:2.5ms"));
  for (const char* bad :
       {"1:2:3", "1ms", ":1ms", "1ms:", "2ms:1ms", "1ms:1ms", "1ms::2ms", "0x1:0x2"}) {
    EXPECT_FALSE(parse_time_span(bad)) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace gpulb::viewer
