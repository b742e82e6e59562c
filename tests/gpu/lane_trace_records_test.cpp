// The compact trace record of work-stealing's task_per=lane (kernels/lane_trace_records.hpp): the
// host's expansion turns a batch header and its packed task records back into the TaskBegin/TaskEnd
// pairs the readers know, placed across the batch's span, copies every other event, and stops where
// the device marked its segment full; a range (consecutive ids, one kind) in two slots the same
// way. Host code only: runs without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpulb/kernels/lane_trace_records.hpp"

namespace gpulb::kernels {
namespace {

using trace::Event;
using trace::EventKind;

// The slots a block's segment holds after the device wrote `events`, then a batch of `ids` (kind
// 7) from `begin` to `end`, as record_lane_task and end_lane_batch lay them out.
void append_batch(std::vector<Event>& slots, std::uint64_t begin, std::uint64_t end,
                  const std::vector<std::uint32_t>& ids) {
  const auto k = static_cast<std::uint32_t>(ids.size());
  slots.push_back(lane_batch_header(begin, end, k));
  std::vector<LaneTaskRecord> records;
  for (std::uint32_t id : ids) records.push_back({id, 7, 0});
  records.resize(2 * (lane_batch_slots(k) - 1),
                 LaneTaskRecord{0xDEADBEEF, 0xFFFF, 0xFFFF});  // the odd slot's unused half
  std::vector<Event> packed(lane_batch_slots(k) - 1);
  std::memcpy(packed.data(), records.data(), packed.size() * sizeof(Event));
  slots.insert(slots.end(), packed.begin(), packed.end());
}

std::vector<Event> expand(const std::vector<Event>& slots) {
  std::vector<Event> out;
  expand_lane_records(
      slots.data(), slots.size(), [](std::uint64_t t) { return t - 1000; }, out);
  return out;
}

TEST(LaneTraceRecords, ABatchBecomesItsTaskPairsAcrossItsSpan) {
  std::vector<Event> slots = {trace::make_event(1000, EventKind::WorkerStart, 4, 12)};
  append_batch(slots, 1100, 1400, {10, 11, 12});
  slots.push_back(trace::make_event(1500, EventKind::SpawnBatch, 13, 9));
  EXPECT_EQ(slots.size(), 1u + 3u + 1u);  // a header and two slots for three tasks
  const std::vector<Event> out = expand(slots);
  ASSERT_EQ(out.size(), 1u + 6u + 1u);
  EXPECT_EQ(out[0].kind, EventKind::WorkerStart);
  EXPECT_EQ(out[0].time_ns, 0u);  // through to_origin
  EXPECT_EQ(out[0].aux, 12u);
  const std::uint64_t edges[] = {100, 200, 300, 400};  // 1100..1400 less the origin, in thirds
  for (std::uint32_t t = 0; t < 3; ++t) {
    const Event& b = out[1 + 2 * t];
    const Event& e = out[2 + 2 * t];
    EXPECT_EQ(b.kind, EventKind::TaskBegin);
    EXPECT_EQ(e.kind, EventKind::TaskEnd);
    EXPECT_EQ(b.arg, 10 + t);
    EXPECT_EQ(e.arg, 10 + t);
    EXPECT_EQ(b.aux, 7u);
    EXPECT_EQ(b.time_ns, edges[t]);
    EXPECT_EQ(e.time_ns, edges[t + 1]);
    // The batch's own begin and end were read from the clock; the edges between were placed.
    EXPECT_EQ(b.flags, t == 0 ? 0 : trace::kTimeInterpolated);
    EXPECT_EQ(e.flags, t == 2 ? 0 : trace::kTimeInterpolated);
  }
  EXPECT_EQ(out[7].kind, EventKind::SpawnBatch);
  EXPECT_EQ(out[7].time_ns, 500u);
  EXPECT_EQ(out[7].arg, 13u);  // copied as the device wrote it: the first child's id and the count
  EXPECT_EQ(out[7].aux, 9u);
}

TEST(LaneTraceRecords, AnEvenBatchAndAOneTaskBatchTakeTheirSlotsExactly) {
  std::vector<Event> slots;
  append_batch(slots, 2000, 2000, {1, 2, 3, 4});
  append_batch(slots, 2100, 2164, {5});
  EXPECT_EQ(slots.size(), 3u + 2u);
  const std::vector<Event> out = expand(slots);
  ASSERT_EQ(out.size(), 10u);
  for (std::uint32_t t = 0; t < 5; ++t) EXPECT_EQ(out[2 * t].arg, t + 1);
  EXPECT_EQ(out[8].time_ns, 1100u);
  EXPECT_EQ(out[9].time_ns, 1164u);
  EXPECT_EQ(out[8].flags, 0);  // a batch of one: both edges read from the clock
  EXPECT_EQ(out[9].flags, 0);
}

TEST(LaneTraceRecords, TheExpansionStopsWhereTheSegmentFilled) {
  std::vector<Event> slots;
  append_batch(slots, 1000, 1100, {1, 2});
  slots.push_back(lane_batch_header(0, 0, 0));                         // the next batch did not fit
  slots.push_back(trace::make_event(1200, EventKind::TaskBegin, 99));  // never written: not read
  EXPECT_EQ(expand(slots).size(), 4u);
  // A header whose records lie past the slots the host kept is not read either.
  std::vector<Event> cut;
  append_batch(cut, 1000, 1100, {1, 2, 3, 4, 5});
  cut.pop_back();
  EXPECT_TRUE(expand(cut).empty());
}

// A range, as end_lane_batch writes one: `k` tasks with ids from `first`, one kind, two slots.
void append_range(std::vector<Event>& slots, std::uint64_t begin, std::uint64_t end,
                  std::uint32_t first, std::uint32_t k, std::uint16_t kind) {
  slots.push_back(lane_batch_header(begin, end, k, kLaneRange));
  slots.push_back(lane_range_ids(first, kind));
}

TEST(LaneTraceRecords, ARangeBecomesItsConsecutiveTaskPairsFromTwoSlots) {
  std::vector<Event> slots = {trace::make_event(1000, EventKind::WorkerStart, 4, 12)};
  append_range(slots, 1100, 1500, 0xFFFFFFFEu, 4,
               3);  // ids wrap as the device's do: ...FE, ...FF, 0, 1
  append_batch(slots, 1500, 1600, {20, 21});
  slots.push_back(trace::make_event(1700, EventKind::SpawnBatch, 22, 9));
  EXPECT_EQ(slots.size(), 1u + 2u + 2u + 1u);  // the range's two slots hold its four tasks
  const std::vector<Event> out = expand(slots);
  ASSERT_EQ(out.size(), 1u + 8u + 4u + 1u);
  const std::uint32_t ids[] = {0xFFFFFFFEu, 0xFFFFFFFFu, 0, 1};
  for (std::uint32_t t = 0; t < 4; ++t) {
    const Event& b = out[1 + 2 * t];
    const Event& e = out[2 + 2 * t];
    EXPECT_EQ(b.kind, EventKind::TaskBegin);
    EXPECT_EQ(e.kind, EventKind::TaskEnd);
    EXPECT_EQ(b.arg, ids[t]);
    EXPECT_EQ(e.arg, ids[t]);
    EXPECT_EQ(b.aux, 3u);
    EXPECT_EQ(b.time_ns, 100u + 100u * t);  // 1100..1500 less the origin, in quarters
    EXPECT_EQ(e.time_ns, 200u + 100u * t);
    EXPECT_EQ(b.flags, t == 0 ? 0 : trace::kTimeInterpolated);
    EXPECT_EQ(e.flags, t == 3 ? 0 : trace::kTimeInterpolated);
  }
  EXPECT_EQ(out[9].arg, 20u);  // the batch after it, read from its own records
  EXPECT_EQ(out[11].arg, 21u);
  EXPECT_EQ(out[13].kind, EventKind::SpawnBatch);
  EXPECT_EQ(out[13].arg, 22u);
}

TEST(LaneTraceRecords, ARangeCutByTheSlotsKeptIsNotRead) {
  std::vector<Event> slots;
  append_range(slots, 1000, 1100, 5, 3, 1);
  append_range(slots, 1100, 1200, 8, 3, 1);
  slots.pop_back();  // the second range's ids slot lies past what the host kept
  EXPECT_EQ(expand(slots).size(), 6u);
}

TEST(LaneTraceRecords, ASpanPastTheArgumentsRangeIsSaturatedNotWrapped) {
  const Event h = lane_batch_header(0, std::uint64_t{1} << 40, 3);
  EXPECT_EQ(h.arg, 0xFFFFFFFFu);
  EXPECT_EQ(lane_batch_header(500, 400, 3).arg, 0u);  // an end before the begin: no span
}

}  // namespace
}  // namespace gpulb::kernels
