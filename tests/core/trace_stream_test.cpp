// The CPU backend's trace stream (cpu/trace_stream.hpp): 8-byte records, clock
// reads batched over short tasks, and their expansion into the trace's events at the run's end.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "gpulb/builtin/registry.hpp"
#include "gpulb/cpu/trace_stream.hpp"
#include "gpulb/run.hpp"

namespace gpulb {
namespace {

using cpu::BatchClock;
using cpu::StreamCounts;
using cpu::TraceStream;
using trace::Event;
using trace::EventKind;

struct Stream {
  explicit Stream(std::uint32_t capacity) : units(capacity) {}
  TraceStream ref() { return {units.data(), static_cast<std::uint32_t>(units.size()), &counts, 0}; }
  std::vector<Event> expand() const { return cpu::expand_stream_ns(units.data(), counts.used); }
  std::vector<std::uint64_t> units;
  StreamCounts counts;
};

bool interpolated(const Event& e) { return (e.flags & trace::kTimeInterpolated) != 0; }

TEST(TraceStream, AnUntimedBatchSharesItsTimeEvenlyBetweenItsTasks) {
  Stream s(64);
  const TraceStream w = s.ref();
  w.timed(100, EventKind::WorkerStart, 0, trace::kUnknownSm);
  w.timed(200, EventKind::TaskBegin, 1, 7);  // the batch's clock read
  w.untimed(EventKind::TaskEnd, 1, 7);
  w.untimed(EventKind::Spawn, 2, 0);
  w.untimed(EventKind::DequeLevel, 5, 0);
  w.untimed_task(2, 7);
  w.untimed_task(3, 7);
  w.timed(500, EventKind::Steal, 1, 0);  // ends the batch
  const std::vector<Event> ev = s.expand();
  struct Want {
    EventKind kind;
    std::uint32_t arg;
    std::uint64_t time;
    bool placed;
  };
  const std::vector<Want> want = {
      {EventKind::WorkerStart, 0, 100, false}, {EventKind::TaskBegin, 1, 200, false},
      {EventKind::TaskEnd, 1, 300, true},      {EventKind::Spawn, 2, 300, true},
      {EventKind::DequeLevel, 5, 300, true},   {EventKind::TaskBegin, 2, 300, true},
      {EventKind::TaskEnd, 2, 400, true},      {EventKind::TaskBegin, 3, 400, true},
      {EventKind::TaskEnd, 3, 500, true},      {EventKind::Steal, 1, 500, false}};
  ASSERT_EQ(ev.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(ev[i].kind, want[i].kind) << i;
    EXPECT_EQ(ev[i].arg, want[i].arg) << i;
    EXPECT_EQ(ev[i].time_ns, want[i].time) << i;
    EXPECT_EQ(interpolated(ev[i]), want[i].placed) << i;
    if (ev[i].kind == EventKind::TaskBegin || ev[i].kind == EventKind::TaskEnd) {
      EXPECT_EQ(ev[i].aux, 7) << "task kind, event " << i;
    }
  }
}

TEST(TraceStream, AClockMarkPlacesItsBatchAndIsNoEvent) {
  Stream s(64);
  const TraceStream w = s.ref();
  w.timed(1000, EventKind::TaskBegin, 1, 0);
  w.untimed(EventKind::TaskEnd, 1, 0);
  w.untimed_task(2, 0);
  w.timed(1400, EventKind::None, 0, 0);       // the worker waits for the next launch
  w.timed(9000, EventKind::TaskBegin, 3, 0);  // after the wait
  w.untimed(EventKind::TaskEnd, 3, 0);
  w.timed(9100, EventKind::WorkerEnd, 0, 0);
  const std::vector<Event> ev = s.expand();
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev[1].time_ns, 1200u);  // task 1 ends halfway to the mark
  EXPECT_EQ(ev[3].time_ns, 1400u);  // task 2 ends at the mark, not at the next launch
  EXPECT_EQ(ev[4].kind, EventKind::TaskBegin);
  EXPECT_EQ(ev[4].time_ns, 9000u);
  EXPECT_EQ(ev[5].time_ns, 9100u);
  for (const Event& e : ev) EXPECT_NE(e.kind, EventKind::None);
}

TEST(TraceStream, AFullStreamKeepsAPrefixAndCountsWhatItDropped) {
  Stream s(5);
  const TraceStream w = s.ref();
  w.timed(10, EventKind::TaskBegin, 1, 0);  // units 0-1
  w.untimed(EventKind::TaskEnd, 1, 0);      // unit 2
  w.untimed_task(2, 0);                     // unit 3
  w.timed(40, EventKind::TaskBegin, 3, 0);  // needs 2 units, 1 left: dropped, the stream shuts
  w.untimed(EventKind::TaskEnd, 3, 0);      // would fit, but must not outlive the begin it needs
  EXPECT_EQ(s.counts.used, 5u);
  EXPECT_EQ(s.counts.dropped, 2u) << "events: the begin, the end";
  const std::vector<Event> ev = cpu::expand_stream_ns(s.units.data(), 4);
  ASSERT_EQ(ev.size(), 4u);
  for (const Event& e : ev)
    EXPECT_EQ(e.time_ns, 10u) << "no timed record after them: the last read's time";
  // A timed record whose payload unit is missing is left out.
  EXPECT_TRUE(cpu::expand_stream_ns(s.units.data(), 1).empty());
}

// Runs `tasks` tasks through a BatchClock and returns the expanded events.
std::vector<Event> run_tasks(std::uint64_t min_span, std::uint32_t max_batch, std::uint32_t tasks) {
  Stream s(4096);
  BatchClock clock(s.ref(), min_span, max_batch);
  clock.record(EventKind::WorkerStart, 0, trace::kUnknownSm);
  for (std::uint32_t i = 0; i < tasks; ++i) {
    clock.record(EventKind::DequeLevel, i, 0);
    clock.task_begin(i, 1);
    clock.task_end();
    if (i % 3 == 0)
      clock.record(EventKind::SpawnBatch, 1000 + 2 * i, 2);  // as run_spawning_task records it
  }
  clock.record(EventKind::WorkerEnd, 0, 0);
  return s.expand();
}

// `adjacent`: no event between a task's begin and its end.
void expect_every_task_once_in_order(const std::vector<Event>& ev, std::uint32_t tasks,
                                     std::uint32_t spawns_wanted, bool adjacent = true) {
  std::map<std::uint32_t, int> begins, ends;
  std::uint32_t spawns = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (i > 0) {
      EXPECT_LE(ev[i - 1].time_ns, ev[i].time_ns) << "event " << i;
    }
    if (ev[i].kind == EventKind::TaskBegin) ++begins[ev[i].arg];
    if (ev[i].kind == EventKind::TaskEnd) {
      ++ends[ev[i].arg];
      ASSERT_GT(i, 0u);
      if (!adjacent) continue;
      EXPECT_EQ(ev[i - 1].kind, EventKind::TaskBegin);
      EXPECT_EQ(ev[i - 1].arg, ev[i].arg) << "a task's end follows its begin";
    }
    spawns += ev[i].kind == EventKind::SpawnBatch;
  }
  EXPECT_EQ(begins.size(), tasks);
  EXPECT_EQ(ends.size(), tasks);
  for (const auto& [id, n] : begins) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(spawns, spawns_wanted);
}

// A worker's events are sized once at the run's end: growing them past the units' count (an
// untimed task is two events) held the old and the doubled array at once, the peak of a traced
// run (1 timed record and 1000 untimed tasks: 2002 units of room, then 4004, for 2001 events).
TEST(TraceStream, ExpandingAStreamSizesItsEventsOnce) {
  Stream s(1002);
  const TraceStream w = s.ref();
  w.timed(10, EventKind::WorkerStart, 0, trace::kUnknownSm);
  for (std::uint32_t t = 0; t < 1000; ++t) w.untimed_task(t, 0);
  ASSERT_EQ(s.counts.used, 1002u);
  const std::vector<Event> ev = s.expand();
  EXPECT_EQ(ev.size(), 2001u);
  EXPECT_EQ(ev.capacity(), ev.size());
}

TEST(BatchClock, TasksShorterThanTheSpanShareAClockReadPerBatch) {
  // A span no task reaches: after the first task (timed alone), batches of max_batch tasks.
  const std::vector<Event> ev = run_tasks(std::uint64_t{1} << 50, 4, 21);
  expect_every_task_once_in_order(ev, 21, 7);
  std::uint32_t timed_begins = 0, timed_ends = 0;
  for (const Event& e : ev) {
    timed_begins += e.kind == EventKind::TaskBegin && !interpolated(e);
    timed_ends += e.kind == EventKind::TaskEnd && !interpolated(e);
    if (e.kind == EventKind::WorkerStart || e.kind == EventKind::WorkerEnd) {
      EXPECT_FALSE(interpolated(e));
    }
  }
  EXPECT_EQ(timed_begins, 1u + 5u) << "task 0 alone, then one read per 4 tasks (1, 5, 9, 13, 17)";
  EXPECT_EQ(timed_ends, 1u);
}

TEST(BatchClock, TasksLongerThanTheSpanAreTimedAlone) {
  for (const std::uint32_t max_batch : {4096u, 1u}) {
    // Span 0: every task is long enough. max_batch 1 (--param trace_batch=1): always timed alone.
    const std::vector<Event> ev =
        run_tasks(max_batch == 1 ? std::uint64_t{1} << 50 : 0, max_batch, 10);
    expect_every_task_once_in_order(ev, 10, 4);
    for (const Event& e : ev) {
      if (e.kind != EventKind::SpawnBatch) {
        EXPECT_FALSE(interpolated(e)) << event_kind_name(e.kind) << " max_batch " << max_batch;
      }
    }
  }
}

// After WorkerStart, tasks 0..tasks-1 through a clock that batches them by 8 (a span no task
// reaches), task `level_in` recording a queue level inside it (as a task's own code would).
void run_with_a_level_inside(Stream& s, std::uint32_t tasks, std::uint32_t level_in,
                             bool worker_end) {
  BatchClock clock(s.ref(), std::uint64_t{1} << 50, 8);
  clock.record(EventKind::WorkerStart, 0, 0);
  for (std::uint32_t i = 0; i < tasks; ++i) {
    clock.task_begin(i, 0);
    if (i == level_in) clock.record(EventKind::QueueLevel, 9, 1);
    clock.task_end();
  }
  if (worker_end) clock.record(EventKind::WorkerEnd, 0, 0);
}

TEST(BatchClock, AnEventInsideABatchedTaskKeepsItsBegin) {
  Stream s(256);
  run_with_a_level_inside(s, 4, 2, true);
  const std::vector<Event> ev = s.expand();
  expect_every_task_once_in_order(ev, 4, 0, false);
  const auto level = std::find_if(ev.begin(), ev.end(),
                                  [](const Event& e) { return e.kind == EventKind::QueueLevel; });
  ASSERT_NE(level, ev.end());
  ASSERT_NE(level, ev.begin());
  EXPECT_EQ(std::prev(level)->kind, EventKind::TaskBegin);
  EXPECT_EQ(std::prev(level)->arg, 2u);
}

// A batched task is written whole at its begin; an event inside it reopens it (its begin, the
// event, its end), unless the stream shut on the task itself: then its two events, the one
// inside and every later one are counted, and the kept prefix is whole tasks.
TEST(BatchClock, AnEventInsideATaskTheFullStreamDroppedIsCountedOnce) {
  // Units: WorkerStart 0-1; task 0 timed alone (begin 2-3, end 4-5), which opens batches of 8;
  // task 1 the batch's timed first (begin 6-7, end 8); task 2 whole in unit 9; task 3 dropped.
  Stream s(10);
  run_with_a_level_inside(s, 4, 3, true);
  EXPECT_EQ(s.counts.used, 10u);
  EXPECT_EQ(s.counts.dropped, 4u) << "task 3's begin and end, the level inside it, WorkerEnd";
  const std::vector<Event> ev = s.expand();
  expect_every_task_once_in_order(ev, 3, 0);
  EXPECT_EQ(ev.size(), 7u) << "WorkerStart and three tasks";

  // The same task with room for its unit but not for the level: reopened as its begin alone,
  // then the stream shuts; the level and the end are counted.
  Stream t(10);
  run_with_a_level_inside(t, 3, 2, false);
  EXPECT_EQ(t.counts.used, 10u);
  EXPECT_EQ(t.counts.dropped, 2u) << "the level and task 2's end";
  const std::vector<Event> kept = t.expand();
  ASSERT_EQ(kept.size(), 6u);
  EXPECT_EQ(kept.back().kind, EventKind::TaskBegin);
  EXPECT_EQ(kept.back().arg, 2u);
}

// Through gpulb::run: a UTS tree (nodes of about 100 ns) under work-stealing batches its clock
// reads; the trace still has every node once, and its spawns.
TEST(BatchClock, AUtsTraceHasEveryNodeWithBatchedTimes) {
  RunConfig c;
  c.scenario = "uts";
  c.policy = "work-stealing";
  c.backend = Backend::Cpu;
  c.workers = 2;
  c.params = {
      {"tree", "custom"}, {"t", "0"}, {"b", "2000"}, {"q", "0.24"}, {"m", "4"}};  // 40,053 nodes
  for (const char* batch : {"0", "1"}) {
    c.params["trace_batch"] = batch;
    const RunResult r = run(builtin::registry(), c);
    ASSERT_TRUE(r.verified) << r.verification;
    EXPECT_EQ(r.stats.dropped_events, 0u);
    EXPECT_EQ(r.stats.tasks, r.tasks) << "trace_batch=" << batch;
    std::uint64_t spawned = 0, placed = 0;
    for (const trace::WorkerStats& w : r.stats.per_worker) spawned += w.spawned;
    EXPECT_EQ(spawned + 1, r.tasks) << "every node but the root was spawned";
    for (const trace::Track& t : r.trace.tracks) {
      for (const Event& e : t.events)
        placed +=
            interpolated(e) && trace::event_traits(e.kind).category != trace::EventCategory::Spawn;
    }
    if (std::string(batch) == "1") {
      EXPECT_EQ(placed, 0u) << "trace_batch=1 times every task";
    } else {
      EXPECT_GT(placed, r.tasks) << "short tasks share clock reads";
    }
  }
}

}  // namespace
}  // namespace gpulb
