// The trace event schema, shared by device writers, the CPU backend, the file format and the viewer.
//
// Rule (as Tracy's QueueType): EventKind only grows at its end. A value, once given, keeps its
// meaning forever; the file format version changes only when the layout of Event changes.
// What each kind means to readers (name, category, zone and idle edges) is event_kinds.hpp.
// This header must stay includable from CUDA device code: no standard library beyond <cstdint>.
#pragma once

#include <cstdint>

#include "gpulb/hd.hpp"

namespace gpulb::trace {

enum class EventKind : std::uint8_t {
  None = 0,
  WorkerStart = 1,    // aux: SM id (0xFFFF where unknown), arg: worker rank / block id
  WorkerEnd = 2,      // arg: failed dequeue attempts during the run (saturating)
  TaskBegin = 3,      // aux: task kind, arg: task id
  TaskEnd = 4,        // aux: task kind, arg: task id
  DequeueFailed = 5,  // aux: queue id; written once at the start of each idle spell
  Halt = 6,           // the worker took a HALT task
  QueueLevel = 7,     // aux: queue id, arg: tasks left in that queue after the operation
  HostEnqueue = 8,    // aux: queue id, arg: tasks written in this batch (host tracks)
  Steal = 9,          // arg: victim worker; aux: where the victim is (steal_victim_device)
  StealFailed = 10,   // arg: victim worker; aux: as Steal
  Spawn = 11,         // arg: number of tasks created by one task (ids unknown; see SpawnBatch)
  KernelLaunch =
      12,  // arg: blocks in the launch; aux: why (combining's LaunchReason, else 0) (host tracks)
  KernelEnd = 13,   // arg: blocks in the launch; aux: as its launch (host tracks)
  PoolLevel = 14,   // arg: tasks left in the host task pool (host tracks)
  DequeLevel = 15,  // aux: owner worker (low 16 bits), arg: tasks in the deque after the push/pop
  Transfer = 16,    // aux: 0 to the device, 1 to the host; arg: bytes (saturating) (host tracks)
  RequestSplit =
      17,  // hybrid: arg: requests of the batch sent to the CPU; aux: the CPU's share of its items, per mille
  RankSteal =
      18,  // distributed: a chunk of tasks arrived from another rank; arg: victim rank, aux: tasks (saturating) (host tracks)
  RankLend =
      19,  // distributed: a chunk of tasks left for another rank; arg: thief rank, aux: tasks (saturating) (host tracks)
  SpawnBatch =
      20,  // arg: the first child's task id, aux: children; their ids are arg .. arg + aux - 1 (spawn_event)
  Count  // keep last: the number of kinds this build knows
};

// 16 bytes: a timestamp and a fixed-width payload. Kinds give aux/arg their meaning (see above).
struct Event {
  std::uint64_t time_ns;  // ns since the run's origin (host steady clock; GPU clocks aligned to it)
  std::uint32_t arg;
  std::uint16_t aux;
  EventKind kind;
  std::uint8_t flags;  // bits below (kTimeInterpolated); 0 where a writer sets none
};
static_assert(sizeof(Event) == 16, "trace events are 16 bytes on every writer");

inline constexpr std::uint16_t kUnknownSm = 0xFFFF;

// Steal / StealFailed aux: 0 for a victim on the thief's own device (every trace written before
// work-stealing ran across GPUs has 0 there), else 1 + the victim's device index: a steal across GPUs.
GPULB_HD constexpr std::uint16_t steal_aux_for_device(std::uint32_t victim_device) {
  return static_cast<std::uint16_t>(victim_device + 1);
}
// The victim's device of a Steal / StealFailed event (its aux) recorded on a track of `thief_device`.
GPULB_HD constexpr std::uint32_t steal_victim_device(std::uint16_t aux,
                                                     std::uint32_t thief_device) {
  return aux == 0 ? thief_device : aux - 1u;
}
GPULB_HD constexpr std::uint32_t steal_victim_device(const Event& e, std::uint32_t thief_device) {
  return steal_victim_device(e.aux, thief_device);
}
GPULB_HD constexpr bool steal_crosses_devices(const Event& e, std::uint32_t thief_device) {
  return steal_victim_device(e, thief_device) != thief_device;
}

// Event::flags bits. Readers that predate a bit ignore it (the file stores flags as they are).
// kTimeInterpolated: the writer read no clock for this event; its time was placed between the
// nearest events of its track that did (the CPU backend times runs of short tasks once a batch,
// core/cpu/include/gpulb/cpu/trace_stream.hpp): order and counts are exact, the time is an estimate.
inline constexpr std::uint8_t kTimeInterpolated = 1;

GPULB_HD constexpr Event make_event(std::uint64_t time_ns, EventKind kind, std::uint32_t arg = 0,
                                    std::uint16_t aux = 0) {
  return Event{time_ns, arg, aux, kind, 0};
}

// An event before its time is read: what a step that records it later hands on.
struct EventPayload {
  EventKind kind = EventKind::None;
  std::uint32_t arg = 0;
  std::uint16_t aux = 0;
};

// The one event a task that spawned records: SpawnBatch where its children's ids are consecutive
// (one fetch-and-add gave them, spawn.hpp) and their count fits aux, so that readers can link each
// child to its parent; else Spawn with the count alone. Never both: one 16-byte event per spawning
// task keeps the trace's size and the device's stores what a count-only Spawn costs, and a reader
// that counts children (spawn_children, event_kinds.hpp) counts each batch once.
GPULB_HD constexpr EventPayload spawn_event(std::uint32_t first_child, std::uint32_t children,
                                            bool consecutive_ids = true) {
  if (consecutive_ids && children <= 0xFFFFu)
    return {EventKind::SpawnBatch, first_child, static_cast<std::uint16_t>(children)};
  return {EventKind::Spawn, children, 0};
}

}  // namespace gpulb::trace
