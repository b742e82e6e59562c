// The "deques (sum)" series is the sum of every deque's level at time t. A
// deque's level is recorded only by its owner's push and pop; a steal takes a task without a level
// event, so summing each owner's last recorded level left uts at ~1,700 after all work had ended.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "run_span.hpp"
#include "shipped_traces.hpp"
#include "trace_model.hpp"

namespace gpulb::viewer {
namespace {

using trace::EventKind;
using trace::make_event;

const QueueSeries* deque_sum(const TraceModel& m) {
  for (const QueueSeries& q : m.queues()) {
    if (q.source == QueueSeries::Source::Deques) return &q;
  }
  return nullptr;
}

// Worker 0 pushes 3 tasks (level 3); worker 1 steals twice from it; worker 0 pops the last one
// (level 0). Then worker 0 pushes 2 more, worker 1 steals both: no level event says so.
std::shared_ptr<const trace::Trace> stealing_trace() {
  auto t = std::make_shared<trace::Trace>();
  t->devices.push_back({trace::DeviceKind::Cpu, 0, "CPU (2 threads)", 2, 2});
  trace::Track w0{trace::TrackRole::Worker, 0, 0, trace::Track::kNoSm, "worker 0", 0, {}};
  w0.events = {make_event(10, EventKind::WorkerStart), make_event(100, EventKind::DequeLevel, 3, 0),
               make_event(400, EventKind::DequeLevel, 0, 0),
               make_event(500, EventKind::DequeLevel, 2, 0), make_event(900, EventKind::WorkerEnd)};
  trace::Track w1{trace::TrackRole::Worker, 0, 1, trace::Track::kNoSm, "worker 1", 0, {}};
  w1.events = {
      make_event(10, EventKind::WorkerStart, 1), make_event(200, EventKind::Steal, 0),
      make_event(300, EventKind::Steal, 0),      make_event(600, EventKind::Steal, 0),
      make_event(700, EventKind::Steal, 0),      make_event(800, EventKind::StealFailed, 0),
      make_event(900, EventKind::WorkerEnd)};
  t->tracks = {w0, w1};
  return t;
}

TEST(DequeSum, IsTheSumOfTheLevelsAtEachInstant) {
  const TraceModel m(stealing_trace());
  const QueueSeries* q = deque_sum(m);
  ASSERT_NE(q, nullptr);
  const std::vector<std::pair<double, std::int64_t>> expected = {
      {150, 3}, {250, 2}, {350, 1}, {450, 0}, {550, 2}, {650, 1}, {750, 0}, {950, 0}};
  for (const auto& [t, level] : expected)
    EXPECT_EQ(q->level.value_at(t), level) << "at " << t << " ns";
  EXPECT_EQ(q->level.max_value(), 3);
  EXPECT_EQ(q->level.min_value(), 0);
}

TEST(DequeSum, UtsDequesAreEmptyWhenTheRunEnds) {
  const TraceModel& m = testing::recorded(testing::kUts);
  const QueueSeries* q = deque_sum(m);
  ASSERT_NE(q, nullptr);
  // Every node of the tree was searched (the run verified): nothing is left in any deque.
  EXPECT_EQ(q->level.value_at(run_span(m).end_ns + 1), 0);
  EXPECT_GE(q->level.min_value(), 0);
  EXPECT_GT(q->level.max_value(), 0);
}

}  // namespace
}  // namespace gpulb::viewer
