// Queue levels as the model builds them from the shipped task-queue traces: a level is a fact about
// a queue only while something can take from it, and only as late as it was true.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "findings.hpp"
#include "queue_levels.hpp"
#include "run_span.hpp"
#include "shipped_traces.hpp"

namespace gpulb::viewer {
namespace {

const QueueSeries* queue(const TraceModel& m, std::uint32_t device, std::uint32_t id) {
  for (const QueueSeries& q : m.queues()) {
    if (q.source == QueueSeries::Source::Queue && q.device == device && q.queue == id) return &q;
  }
  return nullptr;
}

double last_kernel_end(const TraceModel& m, std::uint32_t device) {
  double end = 0.0;
  for (const Lane& l : m.lanes()) {
    if (l.device != device || l.role != trace::TrackRole::Host) continue;
    for (const Marker& k : l.markers) {
      if (k.kind == trace::EventKind::KernelEnd)
        end = std::max(end, static_cast<double>(k.time_ns));
    }
  }
  return end;
}

// A batch of 3 written by the host at 10, claimed at 20-22; the claim that left 2 recorded late.
TEST(QueueLevels, ABatchsLevelIsTheLowestItsClaimsLeftAndALateHostRecordIsDropped) {
  using W = LevelRecord::Writer;
  const std::vector<LevelRecord> late_host = {{10, 3, W::Enqueue},
                                              {20, 1, W::Worker},
                                              {21, 0, W::Worker},
                                              {22, 2, W::Worker},
                                              {30, 3, W::HostBatch}};
  const StepSeries a(queue_level_points(late_host));
  EXPECT_EQ(a.value_at(20.5), 1);
  EXPECT_EQ(a.value_at(22.5), 0) << "the late record of 2 is not the level: all 3 were claimed";
  EXPECT_EQ(a.value_at(40), 0) << "the host's record came after its batch was gone";
  const std::vector<LevelRecord> early_host = {{10, 3, W::Enqueue},
                                               {10, 3, W::HostBatch},
                                               {20, 2, W::Worker},
                                               {21, 1, W::Worker},
                                               {22, 0, W::Worker}};
  const StepSeries b(queue_level_points(early_host));
  EXPECT_EQ(b.value_at(15), 3) << "written before any claim: the tasks waited in the queue";
  EXPECT_EQ(b.value_at(23), 0);
  // Records that are not one a task (a sharing queue fed and taken in chunks) are kept as they are.
  const std::vector<LevelRecord> chunks = {
      {10, 3, W::Enqueue}, {20, 1, W::Worker}, {22, 2, W::Worker}};
  EXPECT_EQ(StepSeries(queue_level_points(chunks)).value_at(23), 2);
}

// The modern task queue's mapped feed with claims of 8: the host rings a batch of 16 in at 11, a
// block copies it into the queue and records its size at 50, two claims of 8 follow, the one that
// left 8 recorded after the one that left 0.
TEST(QueueLevels, ClaimsOfSeveralEndTheirBatchAtTheClaimThatLeftNothing) {
  using W = LevelRecord::Writer;
  const std::vector<LevelRecord> records = {
      {10, 16, W::Enqueue}, {11, 16, W::HostBatch}, {50, 16, W::Worker},    {52, 0, W::Worker},
      {53, 8, W::Worker},   {60, 16, W::Enqueue},   {61, 16, W::HostBatch}, {100, 16, W::Worker},
      {101, 8, W::Worker},  {102, 0, W::Worker}};
  const StepSeries s(queue_level_points(records));
  EXPECT_EQ(s.value_at(30), 0)
      << "rung in, but in host memory until a block publishes it: nothing to claim";
  EXPECT_EQ(s.value_at(51), 16);
  EXPECT_EQ(s.value_at(55), 0)
      << "the late record of 8 is not the level: the claim that left 0 came first";
  EXPECT_EQ(s.value_at(80), 0);
  EXPECT_EQ(s.value_at(101.5), 8);
  EXPECT_EQ(s.value_at(103), 0);
}

// The copy feed writes batches of any size straight into the queue (no block publishes them): a
// late claim of a batch of 16 that left 8, recorded after the host wrote the next batch of 8, is no
// publish of that batch; the host's record is its level.
TEST(QueueLevels, ALateClaimTheSizeOfTheNextBatchIsNoPublish) {
  using W = LevelRecord::Writer;
  const std::vector<LevelRecord> records = {
      {10, 16, W::Enqueue},  {11, 16, W::HostBatch}, {20, 0, W::Worker}, {30, 8, W::Enqueue},
      {31, 8, W::HostBatch}, {32, 8, W::Worker},     {40, 0, W::Worker}};
  const StepSeries s(queue_level_points(records));
  EXPECT_EQ(s.value_at(25), 0);
  EXPECT_EQ(s.value_at(31.5), 8) << "written into the queue: its host's record is the level";
  EXPECT_EQ(s.value_at(41), 0);
}

// The modern task queue fed through mapped memory (the P3 run on 2 H200s): the host rings a batch
// in only once its queue is empty, and records it before any block can claim from it (a block
// publishes it first). So each batch the host records finds its queue at 0; a level above it there
// was a claim of the batch before, recorded after the claim that emptied it.
TEST(QueueLevels, AModernQueueIsEmptyWhenItsHostRingsTheNextBatchIn) {
  const TraceModel& m = testing::recorded(testing::kP3Modern2Gpu);
  std::size_t publishes = 0;  // a block's record of a whole batch of 1,024: the mapped feed
  for (std::size_t ti = 0; ti < m.header().tracks.size(); ++ti) {
    if (m.header().tracks[ti].role == trace::TrackRole::Host) continue;
    const EventColumns& ev = m.events(ti);
    for (std::size_t i = 0; i < ev.size(); ++i)
      publishes += ev.kind(i) == trace::EventKind::QueueLevel && ev.arg(i) == 1024;
  }
  ASSERT_GT(publishes, 0u) << testing::kP3Modern2Gpu << " is the recording of a mapped feed";
  int checked = 0;
  for (const Lane& l : m.lanes()) {
    if (l.role != trace::TrackRole::Host) continue;
    for (const Marker& k : l.markers) {
      if (k.kind != trace::EventKind::HostEnqueue) continue;
      const QueueSeries* q = queue(m, l.device, k.aux);
      ASSERT_NE(q, nullptr);
      EXPECT_EQ(q->level.value_at(static_cast<double>(k.time_ns) - 1.0), 0)
          << q->label << " at " << k.time_ns - m.begin_ns() << " ns";
      ++checked;
    }
  }
  EXPECT_GT(checked, 1);
}

// md on 2 H200s: GPU 1's kernel took only its HALTs and ended 9.5 ms before the run did. Its
// queues' last recorded levels are not what they held afterwards: nothing was left to take them.
TEST(QueueLevels, ALevelEndsWithItsQueuesKernel) {
  const TraceModel& m = testing::recorded("md-64k-tq-2xh200.gpulb");
  const double end = last_kernel_end(m, 1);
  ASSERT_GT(end, 0.0);
  for (std::uint32_t id : {0u, 1u}) {
    const QueueSeries* q = queue(m, 1, id);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->level.value_at(end + 1.0), 0) << q->label;
    EXPECT_EQ(q->level.value_at(run_span(m).end_ns), 0) << q->label;
  }
  for (const Finding& f : compute_findings(m)) {
    EXPECT_EQ(f.text.find("GPU 1 queue"), std::string::npos) << f.text;
    if (f.kind == FindingKind::QueueWaiting || f.kind == FindingKind::QueueStarved) {
      EXPECT_LE(f.end_ns, last_kernel_end(m, 0)) << f.text;
    }
  }
}

// The model fuzzer's reduced finding: a CPU queue whose levels lie past 2^53 ns (the decoder takes
// times to 2^63 - 1), where doubles are 1024 ns apart. Its level read 9 at its end, from a search
// that compared the times as doubles: 2^62 + 1000 rounded up past the end's offset.
TEST(QueueLevels, ALevelIsZeroFromItsEndPast2To53Ns) {
  using trace::EventKind;
  const std::uint64_t far = std::uint64_t{1} << 62;
  trace::Trace t;
  t.devices.push_back(trace::Device{trace::DeviceKind::Cpu, 0, "CPU", 1, 1});
  trace::Track worker;
  worker.name = "worker 0";
  worker.events = {trace::make_event(far + 1000, EventKind::QueueLevel, 9, 7),
                   trace::make_event(far + 2048, EventKind::WorkerEnd)};
  t.tracks.push_back(worker);
  const TraceModel m(std::move(t));
  const QueueSeries* q = queue(m, 0, 7);
  ASSERT_NE(q, nullptr);
  ASSERT_EQ(q->end_ns, far + 2048);
  EXPECT_EQ(q->level.value_at(static_cast<double>(far + 1024)), 9);
  EXPECT_EQ(q->level.value_at(static_cast<double>(far + 2048)), 0)
      << "2^62 + 2048 is a double: the end itself";
}

// P4 under the paper's task queue: the host records a batch's level after its copy's fence, about
// 4 us after the blocks have claimed the whole batch (every batch of 1,024 went within 2 us). That
// late record is not the queue's level: the queue was empty until the next batch.
TEST(QueueLevels, AHostsRecordOfABatchTheBlocksHadAlreadyTakenIsNotALevel) {
  const TraceModel& m = testing::recorded(testing::kP4Queue);
  const QueueSeries* q = queue(m, 0, 0);
  ASSERT_NE(q, nullptr);
  const double t0 = run_span(m).begin_ns;
  // Between the first batch's claims (0-2 us) and the second's (68-70 us).
  for (double at : {10e3, 30e3, 60e3}) EXPECT_EQ(q->level.value_at(t0 + at), 0) << at;
  // The queues were empty while the blocks waited: the feed, not the queue, held them back.
  const auto fs = compute_findings(m);
  // They held tasks only while a batch was being claimed, a microsecond or two a batch.
  for (const Finding& f : fs) {
    if (f.kind == FindingKind::QueueWaiting) {
      EXPECT_LT(f.share, 0.05) << f.text;
    }
  }
  const auto starved = std::find_if(
      fs.begin(), fs.end(), [](const Finding& f) { return f.kind == FindingKind::QueueStarved; });
  ASSERT_NE(starved, fs.end());
  EXPECT_GT(starved->share, 0.8) << starved->text;
}

}  // namespace
}  // namespace gpulb::viewer
