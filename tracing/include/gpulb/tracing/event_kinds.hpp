// What each event kind means to the readers of a trace: one row per kind, so that the exporters,
// the statistics and the viewer classify kinds the same way. A new kind gets its row here and
// nowhere else (the switch has no default, so -Wswitch names a kind without a row).
//
// Includable from CUDA device code like event.hpp: plain constexpr, nothing beyond <cstdint>.
#pragma once

#include <cstdint>

#include "gpulb/tracing/event.hpp"

namespace gpulb::trace {

// What an event is about. Views pick a glyph and exporters a record type by category.
enum class EventCategory : std::uint8_t {
  None,     // EventKind::None, and kinds newer than this build
  Worker,   // a worker's life: start, end
  Task,     // a task zone's edge
  Idle,     // a failed attempt to get work (dequeue or steal): an idle spell starts here
  Steal,    // work taken from another worker
  Spawn,    // tasks created by a running task
  Control,  // the worker was told to stop (HALT)
  Level,    // how many tasks a queue, the deques or the host pool hold
  Host,     // the host feeding or launching a device
};

// Task zones are a TaskBegin/TaskEnd pair with the same task id (statistics' task_spans).
enum class ZoneEdge : std::uint8_t { None, Opens, Closes };

// Idle spells run from a failed attempt to the next event that ends one.
enum class IdleEdge : std::uint8_t { None, Starts, Ends };

// Whose level a Level event's arg is: one queue (aux: queue id), one deque (aux: owner), the pool.
enum class LevelSource : std::uint8_t { None, Queue, Deque, Pool };

struct EventTraits {
  const char* name;  // as written in exports and shown by the viewer
  EventCategory category;
  ZoneEdge zone;
  IdleEdge idle;
  LevelSource level;
  bool marker;  // a point event: a tick in the timeline, an instant in Chrome JSON
};

GPULB_HD constexpr EventTraits event_traits(EventKind k) {
  using C = EventCategory;
  using Z = ZoneEdge;
  using I = IdleEdge;
  using L = LevelSource;
  // A table, a row a kind.
  // clang-format off
  switch (k) {
    //                                 name              category    zone       idle       level     marker
    case EventKind::None:         return {"none",           C::None,    Z::None,   I::None,   L::None,  false};
    case EventKind::WorkerStart:  return {"worker_start",   C::Worker,  Z::None,   I::None,   L::None,  false};
    case EventKind::WorkerEnd:    return {"worker_end",     C::Worker,  Z::None,   I::Ends,   L::None,  false};
    case EventKind::TaskBegin:    return {"task_begin",     C::Task,    Z::Opens,  I::Ends,   L::None,  false};
    case EventKind::TaskEnd:      return {"task_end",       C::Task,    Z::Closes, I::None,   L::None,  false};
    case EventKind::DequeueFailed:return {"dequeue_failed", C::Idle,    Z::None,   I::Starts, L::None,  true};
    case EventKind::Halt:         return {"halt",           C::Control, Z::None,   I::Ends,   L::None,  true};
    case EventKind::QueueLevel:   return {"queue_level",    C::Level,   Z::None,   I::None,   L::Queue, false};
    case EventKind::HostEnqueue:  return {"host_enqueue",   C::Host,    Z::None,   I::None,   L::None,  true};
    case EventKind::Steal:        return {"steal",          C::Steal,   Z::None,   I::None,   L::None,  true};
    case EventKind::StealFailed:  return {"steal_failed",   C::Idle,    Z::None,   I::Starts, L::None,  true};
    case EventKind::Spawn:        return {"spawn",          C::Spawn,   Z::None,   I::None,   L::None,  true};
    case EventKind::KernelLaunch: return {"kernel_launch",  C::Host,    Z::None,   I::None,   L::None,  true};
    case EventKind::KernelEnd:    return {"kernel_end",     C::Host,    Z::None,   I::None,   L::None,  true};
    case EventKind::PoolLevel:    return {"pool_level",     C::Level,   Z::None,   I::None,   L::Pool,  false};
    case EventKind::DequeLevel:   return {"deque_level",    C::Level,   Z::None,   I::None,   L::Deque, false};
    case EventKind::Transfer:     return {"transfer",       C::Host,    Z::None,   I::None,   L::None,  true};
    case EventKind::RequestSplit: return {"request_split",  C::Host,    Z::None,   I::None,   L::None,  true};
    case EventKind::RankSteal:    return {"rank_steal",     C::Steal,   Z::None,   I::None,   L::None,  true};
    case EventKind::RankLend:     return {"rank_lend",      C::Host,    Z::None,   I::None,   L::None,  true};
    case EventKind::SpawnBatch:   return {"spawn_batch",    C::Spawn,   Z::None,   I::None,   L::None,  true};
    case EventKind::Count: break;
  }
  // clang-format on
  // Kinds newer than this build (a trace from a later gpulb): readers skip them.
  return {"unknown", C::None, Z::None, I::None, L::None, false};
}

GPULB_HD constexpr const char* event_kind_name(EventKind k) { return event_traits(k).name; }
// What an event's two payload fields mean, by name, for the exports' arguments ("" where the kind
// leaves the field unused). Steal and StealFailed keep the victim's device in aux as
// steal_aux_for_device encodes it; exporters write steal_victim_device's decoded value.
struct EventArgNames {
  const char* arg;
  const char* aux;
};
GPULB_HD constexpr EventArgNames event_arg_names(EventKind k) {
  // A table, a row a kind.
  // clang-format off
  switch (k) {
    case EventKind::WorkerStart:  return {"worker", "sm"};
    case EventKind::WorkerEnd:    return {"failed_dequeues", ""};
    case EventKind::TaskBegin:
    case EventKind::TaskEnd:      return {"task_id", "kind"};
    case EventKind::DequeueFailed:return {"", "queue"};
    case EventKind::QueueLevel:   return {"tasks_left", "queue"};
    case EventKind::HostEnqueue:  return {"tasks", "queue"};
    case EventKind::Steal:
    case EventKind::StealFailed:  return {"victim_worker", "victim_device"};
    case EventKind::Spawn:        return {"children", ""};
    case EventKind::KernelLaunch:
    case EventKind::KernelEnd:    return {"blocks", "reason"};
    case EventKind::PoolLevel:    return {"tasks_left", ""};
    case EventKind::DequeLevel:   return {"tasks", "owner"};
    case EventKind::Transfer:     return {"bytes", "to_host"};
    case EventKind::RequestSplit: return {"cpu_requests", "cpu_share_permille"};
    case EventKind::RankSteal:    return {"victim_rank", "tasks"};
    case EventKind::RankLend:     return {"thief_rank", "tasks"};
    case EventKind::SpawnBatch:   return {"first_child", "children"};
    case EventKind::None:
    case EventKind::Halt:
    case EventKind::Count: break;
  }
  // clang-format on
  return {"", ""};
}

// The children a spawn event counts (Spawn: arg, SpawnBatch: aux); 0 for any other kind.
GPULB_HD constexpr std::uint32_t spawn_children(const Event& e) {
  if (e.kind == EventKind::Spawn) return e.arg;
  if (e.kind == EventKind::SpawnBatch) return e.aux;
  return 0;
}
// Whether a spawn event names its children: a SpawnBatch's are the ids arg .. arg + aux - 1.
GPULB_HD constexpr bool spawn_names_children(const Event& e) {
  return e.kind == EventKind::SpawnBatch && e.aux > 0;
}

namespace detail {
GPULB_HD constexpr bool every_kind_has_a_row() {
  for (int k = 1; k < static_cast<int>(EventKind::Count); ++k) {
    if (event_traits(static_cast<EventKind>(k)).category == EventCategory::None) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::every_kind_has_a_row(),
              "every EventKind below Count needs its row in event_traits");

}  // namespace gpulb::trace
