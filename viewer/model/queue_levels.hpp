// A queue's level over time from the records of everyone who wrote it, less the records that were
// not the level when they were made, and ended where the queue stopped being used.
//
// Two kinds of writer record a queue's level. Its workers record what a claim left (exact, at
// the claim). A host that writes a batch into an empty queue records the batch's size, but only
// after its copy's fence: by then the workers may have claimed the whole batch (patterns P4 under
// the paper's task queue on an H100: every batch of 1,024 was gone within 2 us, 4 us before the
// host's record), and that late record carried 1,024 "queued" tasks across the 60 us in which the
// queue was in truth empty and the blocks waited for the next batch.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "series.hpp"

namespace gpulb::viewer {

struct LevelRecord {
  // Enqueue: a host wrote a batch of `value` tasks (HostEnqueue), not a level itself.
  // HostBatch: the host's level record of the batch it just wrote; Host: another host record.
  enum class Writer : std::uint8_t { Worker, Host, Enqueue, HostBatch };
  std::uint64_t time_ns = 0;
  std::int64_t value = 0;
  Writer writer = Writer::Worker;
};

// The records as points, in time order. Where the workers recorded exactly one level per task the
// hosts enqueued (Chen's Algorithm 3: a batch of n tasks is n claims of one task, each leaving one
// of n - 1, ..., 0; the host writes a queue only once it is empty), the records are read batch by
// batch, and two of them are not levels:
//   - a host's record of a batch whose claims came first (P4: 4 us after the batch was gone);
//   - a claim recorded late: a block's record can trail the claims of others by microseconds (P4:
//     "5 left" stamped 6 us after the claim that left 0), so a batch's level is the lowest any of
//     its claims left so far, and 0 once all n were recorded.
// Otherwise (work stealing's sharing queue, a run that dropped events) the points are the records.
std::vector<StepSeries::Point> queue_level_points(std::span<const LevelRecord> records);

// A level says nothing once nobody can take from the queue: from `end_ns` (its device's last
// kernel end or last worker event) the level is 0. Points after it are dropped.
void end_level_at(std::vector<StepSeries::Point>& points, std::uint64_t end_ns);

}  // namespace gpulb::viewer
