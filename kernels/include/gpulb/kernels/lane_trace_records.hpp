// The compact trace record of a batch of tasks that ran one a thread (work-stealing's
// task_per=lane, work_stealing_lanes.cuh): what the device writes instead of each task's
// TaskBegin/TaskEnd pair, and how the host expands it back into those pairs when it drains the
// segments (GpuSession::download_segments). It never reaches a file: readers, exporters and the
// viewer see the same event kinds as for any other run.
//
// Why: at 5.2 G tasks/s (UTS T1L on an H100) two 16-byte events a task were 32 bytes a task and
// a barrier a batch to share the batch's end time, and tracing cost 4.5-7.3% (docs/benchmarks.md,
// trace overhead). The task zones inside a batch carry no clock reading of their own anyway: they
// are laid end to end across the batch's span (BlockContext::end_lane_batch). So the device
// writes one header a batch (its begin, span and size, by thread 0) and 8 bytes a task (id and
// kind, by the task's thread), and the host places the zones.
//
// Layout, in a block's segment: a header slot, then ceil(k / 2) slots of two LaneTaskRecord each.
//   header: time_ns = the batch's begin (raw device clock), arg = its span in ns (saturated at
//           2^32 - 1), aux = k (tasks; 0 marks the rest of the segment unused), kind = kLaneBatch.
// A batch whose tasks have consecutive ids and one kind (a batch of the children of one batch, as
// a block that keeps its children runs next, and most pops) needs no record a task: a range, two
// slots whatever k is.
//   header: as above, kind = kLaneRange;  then: arg = the first task's id, aux = the tasks' kind,
//           kind = kLaneRange.
// Pure C++ (no CUDA): the host test of the expansion builds without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpulb/hd.hpp"
#include "gpulb/tracing/event.hpp"

namespace gpulb::kernels {

// A kind no file holds (every file kind is below trace::EventKind::Count): a device-only record.
inline constexpr trace::EventKind kLaneBatch = static_cast<trace::EventKind>(0xF0);
static_assert(static_cast<unsigned>(kLaneBatch) > static_cast<unsigned>(trace::EventKind::Count));

inline constexpr trace::EventKind kLaneRange = static_cast<trace::EventKind>(0xF1);
static_assert(static_cast<unsigned>(kLaneRange) > static_cast<unsigned>(trace::EventKind::Count));
inline constexpr std::uint32_t kLaneRangeSlots = 2;

struct LaneTaskRecord {
  std::uint32_t id;
  std::uint16_t kind;
  std::uint16_t unused;
};
static_assert(2 * sizeof(LaneTaskRecord) == sizeof(trace::Event));

// Slots a batch of k tasks takes: its header and its records, two a slot.
GPULB_HD constexpr std::uint32_t lane_batch_slots(std::uint32_t k) { return 1 + (k + 1) / 2; }

GPULB_HD constexpr trace::Event lane_batch_header(std::uint64_t begin_ns, std::uint64_t end_ns,
                                                  std::uint32_t k,
                                                  trace::EventKind marker = kLaneBatch) {
  const std::uint64_t span = end_ns > begin_ns ? end_ns - begin_ns : 0;
  return trace::Event{begin_ns,
                      span > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<std::uint32_t>(span),
                      static_cast<std::uint16_t>(k), marker, 0};
}
// The second slot of a range: the first task's id and the tasks' kind.
GPULB_HD constexpr trace::Event lane_range_ids(std::uint32_t first_id, std::uint16_t kind) {
  return trace::Event{0, first_id, kind, kLaneRange, 0};
}

// Appends the events of `n` raw slots of one segment to `out`, each time through `to_origin`
// (the device clock to the run's origin): a batch becomes its k TaskBegin/TaskEnd pairs, thread
// i's in the i-th k-th of the span, every edge but the batch's first and last flagged
// trace::kTimeInterpolated; any other event is copied. Stops at a header of k = 0 (the device
// wrote no batch past it: the segment filled) or one whose records do not all lie in the n slots.
template <class ToOrigin>
void expand_lane_records(const trace::Event* raw, std::size_t n, ToOrigin&& to_origin,
                         std::vector<trace::Event>& out) {
  for (std::size_t i = 0; i < n;) {
    const trace::Event& e = raw[i];
    if (e.kind != kLaneBatch && e.kind != kLaneRange) {
      trace::Event copy = e;
      copy.time_ns = to_origin(e.time_ns);
      out.push_back(copy);
      ++i;
      continue;
    }
    const bool range = e.kind == kLaneRange;
    const std::uint32_t k = e.aux;
    const std::uint32_t slots = range ? kLaneRangeSlots : lane_batch_slots(k);
    if (k == 0 || n - i < slots) return;
    const auto* records = reinterpret_cast<const unsigned char*>(raw + i + 1);
    const std::uint64_t begin = to_origin(e.time_ns), span = e.arg;
    for (std::uint32_t t = 0; t < k; ++t) {
      LaneTaskRecord r;
      if (range)
        r = LaneTaskRecord{raw[i + 1].arg + t, raw[i + 1].aux, 0};
      else
        std::memcpy(&r, records + t * sizeof r, sizeof r);
      trace::Event b =
          trace::make_event(begin + span * t / k, trace::EventKind::TaskBegin, r.id, r.kind);
      trace::Event f =
          trace::make_event(begin + span * (t + 1) / k, trace::EventKind::TaskEnd, r.id, r.kind);
      if (t > 0) b.flags = trace::kTimeInterpolated;
      if (t + 1 < k) f.flags = trace::kTimeInterpolated;
      out.push_back(b);
      out.push_back(f);
    }
    i += slots;
  }
}

}  // namespace gpulb::kernels
