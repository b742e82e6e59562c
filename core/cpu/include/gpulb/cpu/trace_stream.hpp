// What a CPU worker writes while it runs, and how the run turns it into trace::Event tracks (the
// file format and every reader are unchanged), at most 2% of the run's time.
//
// Two costs dominated (docs/benchmarks.md, "Tracing overhead"): a clock read for every event
// (6-10 ns on bare metal, 38-45 ns on the 2-core CI VM, whose hypervisor traps rdtsc) and the
// bytes (16 an event, two or three events a UTS node of about 100 ns, every 4 KiB page faulted
// in while the run goes on). So:
//   - records are 8-byte units. A timed record is two: its ticks since the run's origin (below
//     2^56, so the top byte is 0) and {arg, aux, kind, 0}. An untimed record is one unit whose
//     top byte is a code: kUntimedEvent {arg, aux, kind} or kUntimedTask {task id, task kind}, a
//     whole task (begin and end) in 8 bytes;
//   - BatchClock reads the clock once per batch of short tasks. A task that takes at least
//     min_span ticks (kSpanPerRead clock reads) is timed at its begin and its end; shorter
//     ones run in batches of about min_span, each batch timed at its first task's begin, and
//     expand_stream shares a batch's time evenly between its tasks (Event::flags says so,
//     trace::kTimeInterpolated). Idle spells, steals, a worker's start and end are always timed
//     and end a batch, as a wait for the next launch does (pause), so no task's interpolated
//     time covers one of them. The time between a batch's tasks (a dequeue) is shared into them.
// The segments are faulted in before the run (Runtime), not by the workers while they run.
#pragma once

#include <cstdint>
#include <vector>

#include "gpulb/cpu/event_clock.hpp"
#include "gpulb/tracing/event.hpp"

#if defined(__GNUC__)
#define GPULB_TRACE_INLINE [[gnu::always_inline]] inline
#define GPULB_TRACE_NOINLINE [[gnu::noinline]]
#else
#define GPULB_TRACE_INLINE inline
#define GPULB_TRACE_NOINLINE
#endif

namespace gpulb::cpu {

// Codes in the top byte of a one-unit record (0 there: the first unit of a timed record).
inline constexpr std::uint8_t kUntimedEvent = 0x81;
inline constexpr std::uint8_t kUntimedTask = 0x82;
inline constexpr std::uint64_t kTickMask = (std::uint64_t{1} << 56) - 1;

constexpr std::uint64_t pack_unit(std::uint32_t arg, std::uint16_t aux, std::uint8_t kind,
                                  std::uint8_t code) {
  return std::uint64_t{arg} | (std::uint64_t{aux} << 32) | (std::uint64_t{kind} << 48) |
         (std::uint64_t{code} << 56);
}

// Clock reads a batch of short tasks spans at least (see the top). A task timed alone takes two
// reads (three with a level event after it) and is at least half the span: at most 1.2% of it.
inline constexpr std::uint64_t kSpanPerRead = 512;
// The most tasks one clock read covers (by default; --param trace_batch).
inline constexpr std::uint32_t kMaxBatch = 4096;

// A worker's used units and dropped events: written by that worker only, read after the run.
struct StreamCounts {
  std::uint32_t used = 0;
  // events that did not fit (the first record that did not ends the stream)
  std::uint64_t dropped = 0;
};

// One worker's private slice of the trace memory, by value (as trace::TraceSegment on the GPU).
struct TraceStream {
  std::uint64_t* units = nullptr;  // capacity units; nullptr when tracing is off
  std::uint32_t capacity = 0;
  StreamCounts* counts = nullptr;
  std::uint64_t origin_tick = 0;  // the run's origin on the event clock
  // the most tasks one clock read may cover (--param trace_batch)
  std::uint32_t max_batch = kMaxBatch;

  bool enabled() const { return units != nullptr; }

  void timed(std::uint64_t tick, trace::EventKind kind, std::uint32_t arg,
             std::uint16_t aux) const {
    const std::uint32_t n = counts->used;
    if (capacity - n < 2) [[unlikely]]
      return full(kind == trace::EventKind::None ? 0 : 1);  // a clock mark is no event
    units[n] = (tick > origin_tick ? tick - origin_tick : 0) & kTickMask;
    units[n + 1] = pack_unit(arg, aux, static_cast<std::uint8_t>(kind), 0);
    counts->used = n + 2;
  }
  void untimed(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) const {
    put(pack_unit(arg, aux, static_cast<std::uint8_t>(kind), kUntimedEvent), 1);
  }
  void untimed_task(std::uint32_t id, std::uint16_t kind) const {
    put(pack_unit(id, kind, 0, kUntimedTask), 2);
  }

  // The untimed task that the last unit holds (untimed_task, the stream's last record) becomes its
  // begin alone (an untimed TaskBegin), its end to follow; false where that record was dropped
  // (the stream is shut: every record since the first drop was dropped).
  bool reopen_last_task(std::uint32_t& id, std::uint16_t& kind) const {
    if (counts->dropped != 0) return false;
    std::uint64_t& unit = units[counts->used - 1];
    id = static_cast<std::uint32_t>(unit);
    kind = static_cast<std::uint16_t>(unit >> 32);
    unit =
        pack_unit(id, kind, static_cast<std::uint8_t>(trace::EventKind::TaskBegin), kUntimedEvent);
    return true;
  }

 private:
  void put(std::uint64_t unit, std::uint32_t events) const {
    const std::uint32_t n = counts->used;
    if (n >= capacity) [[unlikely]]
      return full(events);
    units[n] = unit;
    counts->used = n + 1;
  }
  // Once a record is dropped the stream stays shut, so that what is kept is a prefix: an untimed
  // record must not lose the timed one after it that places it. Out of line: it is off the
  // workers' inline paths.
  GPULB_TRACE_NOINLINE void full(std::uint32_t events) const {
    counts->used = capacity;
    counts->dropped += events;
  }
};

// How long a clock read takes, in its own ticks (the median of back-to-back reads; measured once).
std::uint64_t measure_clock_read_ticks();
inline std::uint64_t clock_read_ticks() {
  static const std::uint64_t ticks = measure_clock_read_ticks();
  return ticks;
}

// A worker's tracing: which records are timed (see the top). Single-threaded, like its stream.
class BatchClock {
 public:
  BatchClock() = default;
  // `max_batch` 1: every task timed at its begin and its end (no interpolated times).
  BatchClock(TraceStream stream, std::uint64_t min_span, std::uint32_t max_batch = kMaxBatch)
      : s_(stream), min_span_(min_span), max_batch_(max_batch < 1 ? 1 : max_batch) {}

  bool enabled() const { return s_.enabled(); }

  // Any event but a task's edges. A spawn (it follows its task's end), and a queue or deque level
  // inside an open batch, take no clock read; every other event is timed and ends the batch.
  // The paths without a clock read are forced inline, the clock's paths are calls: perf on UTS
  // (1 worker) showed task_begin, task_end and record as calls, about 3% of the worker's time.
  GPULB_TRACE_INLINE void record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) {
    if (!s_.enabled()) return;
    flush_pending_begin();
    const bool level = kind == trace::EventKind::DequeLevel || kind == trace::EventKind::QueueLevel;
    if (kind == trace::EventKind::Spawn || kind == trace::EventKind::SpawnBatch || (open_ && level))
      return s_.untimed(kind, arg, aux);
    record_timed(kind, arg, aux);
  }

  // An event that takes the time of the record before it, with no clock read of its own (flagged
  // interpolated): a queue level written right after a timed task edge.
  GPULB_TRACE_INLINE void record_untimed(trace::EventKind kind, std::uint32_t arg,
                                         std::uint16_t aux) {
    if (!s_.enabled()) return;
    flush_pending_begin();
    s_.untimed(kind, arg, aux);
  }

  // A task of an open batch is written whole at its begin, as one untimed unit (its id and kind
  // are at hand there): its end then only closes it. Written at the end, from fields task_begin
  // had stored after three tests of the batch's state, the path took 37.2 instructions a UTS T1
  // node; this way 27.8 (callgrind, one worker; docs/benchmarks.md).
  GPULB_TRACE_INLINE void task_begin(std::uint32_t id, std::uint16_t kind) {
    if (!s_.enabled()) return;
    if (batch_left_ != 0) {
      --batch_left_;
      s_.untimed_task(id, kind);
      pending_ = true;
      return;
    }
    id_ = id;
    kind_ = kind;
    timed_begin();
  }

  // The worker is about to wait where nothing is traced (a launch barrier, the next generation):
  // an open batch ends here with a clock mark (a timed record of kind None, which places the
  // batch and is left out of the track), so that no task's time stretches over the wait.
  void pause() {
    if (!s_.enabled()) return;
    flush_pending_begin();
    if (!open_) return;
    s_.timed(event_ticks(), trace::EventKind::None, 0, 0);
    close_batch();
  }

  GPULB_TRACE_INLINE void task_end() {
    if (!s_.enabled()) return;
    if (pending_) {  // written whole at its begin
      pending_ = false;
      return;
    }
    if (batch_ == 1) return timed_end();
    s_.untimed(trace::EventKind::TaskEnd, id_,
               kind_);  // the batch's timed first task, or one reopened
  }

  std::uint32_t batch() const { return batch_; }
  std::uint64_t min_span() const { return min_span_; }

 private:
  GPULB_TRACE_NOINLINE void record_timed(trace::EventKind kind, std::uint32_t arg,
                                         std::uint16_t aux) {
    s_.timed(event_ticks(), kind, arg, aux);
    close_batch();
  }
  GPULB_TRACE_NOINLINE void timed_begin() {
    const std::uint64_t t = event_ticks();
    if (open_) adapt_batch(t);  // the batch ends here: size the next from its tasks' mean
    s_.timed(t, trace::EventKind::TaskBegin, id_, kind_);
    begin_tick_ = t;
    batch_left_ = batch_ - 1;  // this task is the batch's first
    open_ = batch_left_ != 0;
  }
  void close_batch() {
    open_ = false;
    batch_left_ = 0;
  }
  GPULB_TRACE_NOINLINE void timed_end() {
    const std::uint64_t t = event_ticks();
    s_.timed(t, trace::EventKind::TaskEnd, id_, kind_);
    // A task well under the span starts batching (half: no flapping at the border).
    if (max_batch_ > 1 && t - begin_tick_ < min_span_ / 2) batch_ = batch_for(t - begin_tick_, 1);
  }
  // An event inside a task written whole at its begin (an AtBegin hook's, a body's): the task
  // is reopened, its begin alone before the event and its end at task_end. Where its unit was
  // dropped, it stays as it is (its two events counted as dropped) and task_end writes nothing.
  void flush_pending_begin() {
    if (pending_ && s_.reopen_last_task(id_, kind_)) pending_ = false;
  }
  std::uint32_t batch_for(std::uint64_t span, std::uint32_t tasks) const {
    if (span == 0) return max_batch_;
    const std::uint64_t b = (min_span_ * tasks + span - 1) / span;
    return static_cast<std::uint32_t>(b < 1 ? 1 : (b > max_batch_ ? max_batch_ : b));
  }
  void adapt_batch(std::uint64_t now) {
    const std::uint64_t span = now - begin_tick_;
    // it ran them all: a batch cut short (a timed event) is not open
    const std::uint32_t tasks = batch_;
    // Back to timing each task once they take the whole span on their own.
    batch_ = span / tasks >= min_span_ ? 1 : batch_for(span, tasks);
  }

  TraceStream s_{};
  std::uint64_t min_span_ = 0;
  std::uint32_t max_batch_ = kMaxBatch;
  std::uint32_t batch_ = 1;  // tasks a clock read covers; 1: each task timed at begin and end
  // tasks the open batch still takes untimed (0 when none is open, or all taken)
  std::uint32_t batch_left_ = 0;
  bool open_ = false;     // a batch is open: its untimed records are placed by its timed ends
  bool pending_ = false;  // the running task was written whole at its begin
  std::uint64_t begin_tick_ = 0;  // the last timed TaskBegin
  std::uint32_t id_ = 0;
  std::uint16_t kind_ = 0;
};

// A worker's units as events in stream order, times in ns since the origin (`ns_of(ticks since the
// origin)`); untimed ones placed between the timed ones around them and flagged kTimeInterpolated:
// a run of untimed records between timed times ta and tb shares [ta, tb] evenly among the task
// ends in it (task i of n ends at ta + (tb - ta) * i / n; a begin or a level sits at the end
// before it); with no task end in the run, or no timed record after it, they take ta.
template <class NsOf>
std::vector<trace::Event> expand_stream(const std::uint64_t* units, std::uint32_t count,
                                        NsOf ns_of);

// The same without the clock mapping: ticks are ns (tests; the steady_clock fallback).
std::vector<trace::Event> expand_stream_ns(const std::uint64_t* units, std::uint32_t count);

namespace detail {
// Parses units into events (timed ones with ticks in time_ns, untimed ones flagged); a timed
// record cut short (its time word the stream's last unit) is left out.
void parse_units(const std::uint64_t* units, std::uint32_t count, std::vector<trace::Event>& out);
// Places the untimed events of `ev` (times of timed ones already in ns).
void place_untimed(std::vector<trace::Event>& ev);
}  // namespace detail

template <class NsOf>
std::vector<trace::Event> expand_stream(const std::uint64_t* units, std::uint32_t count,
                                        NsOf ns_of) {
  std::vector<trace::Event> ev;
  detail::parse_units(units, count, ev);
  for (trace::Event& e : ev) {
    if ((e.flags & trace::kTimeInterpolated) == 0) e.time_ns = ns_of(e.time_ns);
  }
  detail::place_untimed(ev);
  return ev;
}

}  // namespace gpulb::cpu
