// The machinery the CPU policies share: worker threads, their trace segments, progress counters,
// the watchdog, and the assembly of the trace at the end. Policy templates (execute.hpp) build on it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/atomic.hpp"
#include "gpulb/clock.hpp"
#include "gpulb/cpu/event_clock.hpp"
#include "gpulb/errors.hpp"
#include "gpulb/exec_plan.hpp"
#include "gpulb/cpu/trace_stream.hpp"
#include "gpulb/tracing/segment.hpp"

namespace gpulb::cpu {

// Per-worker state that other threads read: padded so workers do not share lines.
struct alignas(kHotLine) WorkerSlot {
  std::atomic<std::uint64_t> tasks_done{0};
  std::atomic<std::uint64_t> tasks_spawned{0};  // children this worker's tasks created
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  // the worker thread's CPU time (what a shared machine's load disturbs least)
  std::uint64_t cpu_ns = 0;
  std::uint64_t wall_ns = 0;  // the worker thread's wall time over the same span
  std::uint64_t minor_faults =
      0;               // page faults the worker thread took over that span (fresh memory it wrote)
  StreamCounts trace;  // the worker's trace stream: units used, records dropped
};

class Runtime {
 public:
  // `events_hint`: the events the run's workers write if each is timed (sizes the segments when
  // trace_capacity is 0). A worker's segment is a TraceStream of that many 16-byte slots' bytes,
  // of which its share of short tasks' records (trace_stream.hpp) is faulted in before the run.
  // `trace_batch`: the policy's choice for --param trace_batch=0 (trace_stream.hpp).
  Runtime(const ExecPlan& plan, std::uint64_t events_hint, std::uint32_t trace_batch = kMaxBatch);

  std::uint32_t workers() const { return workers_; }
  const PolicyDescriptor& policy() const { return *plan_.policy; }
  std::uint64_t origin_ns() const { return origin_ns_; }
  TraceStream worker_segment(std::uint32_t w);
  trace::TraceSegment host_segment();
  std::uint32_t stream_units() const;  // a worker stream's 8-byte units
  WorkerSlot& slot(std::uint32_t w) { return slots_[w]; }
  std::uint64_t now_ns() const { return host_now_ns() - origin_ns_; }
  void host_record(trace::EventKind kind, std::uint32_t arg = 0, std::uint16_t aux = 0);

  // Start one thread per worker running fn(rank); join() waits for all of them.
  void start(const std::function<void(std::uint32_t)>& fn);
  void join();
  // Waits until every worker's fn has returned, ticking the watchdog (tick(state)) meanwhile:
  // the host's wait at the end of a run, so that a task that never ends still trips the watchdog.
  void wait_workers(const std::function<std::string()>& state);

  // Set by the watchdog; workers poll it in their idle loops.
  bool stop_requested() const { return stop_.load(std::memory_order_relaxed); }
  const std::atomic<bool>* stop_flag() const { return &stop_; }

  // Called by the host loop while it waits: reports progress and fires the watchdog (stops the
  // workers, joins them and throws RunError with `state()` in its message) when nothing moved
  // for watchdog_ms.
  void tick(const std::function<std::string()>& state);

  // The watchdog of a host thread that balances a distributed run (Distribution::balance, through
  // HostInserter::check). A rank legitimately finishes nothing while it has no work and waits for
  // a chunk from another rank, so the time without progress counts only while `busy` (a task of
  // this rank queued or running). Fires as tick() does, but does not join the workers: the task
  // that stopped the progress may never return, and the caller ends the job instead. Throws
  // RunError; the workers are asked to stop.
  void watch(bool busy, const std::function<std::string()>& state);

  std::uint64_t tasks_done() const;

  // A worker hit an error it cannot continue from (a full deque, too many children): the first
  // message is kept, every worker is asked to stop, and the host's next tick() or finish() throws
  // RunError with it. Safe from any thread.
  void fail(const std::string& message);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Throws RunError if a worker failed (after joining the workers).
  void rethrow_failure();

  // Joins the workers and assembles the trace, devices and makespan.
  ExecOutput finish(const std::string& host_track_name, std::uint64_t tasks_run);

 private:
  void add_worker_metrics(ExecOutput& out) const;  // finish(): load, CPU time, faults
  void add_tracks(ExecOutput& out,
                  const std::string& host_track_name);  // finish(): the streams as tracks
  const ExecPlan& plan_;
  std::uint32_t workers_;
  std::uint64_t origin_ns_;
  TickScale ticks_;  // events carry raw ticks; finish() maps them to ns since origin_ns_
  std::uint32_t trace_batch_;
  std::uint32_t capacity_ = 0;  // events of the host segment; a worker's stream has their bytes
  std::string trace_note_;      // where the memory budget cut the segments
  std::vector<WorkerSlot> slots_;
  std::vector<std::unique_ptr<std::uint64_t[]>> units_;  // a stream per worker
  std::unique_ptr<trace::Event[]> host_events_;
  std::uint32_t host_count_ = 0;
  std::vector<std::thread> threads_;
  std::atomic<std::uint32_t> finished_workers_{0};
  std::mutex finished_mutex_;  // with finished_cv_: wait_workers sleeps until the last one is done
  std::condition_variable finished_cv_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::mutex failure_mutex_;
  std::string failure_;
  std::uint64_t last_progress_ = ~std::uint64_t{0};
  std::uint64_t last_progress_ns_ = 0;
  std::uint64_t last_report_ns_ = 0;
  std::uint64_t last_watch_ns_ = 0;
};

// The default worker count: the host's hardware threads.
std::uint32_t default_workers();
// Workers above both the run's tasks and this many per hardware thread are refused (ConfigError).
inline constexpr std::uint32_t kWorkersPerHardwareThread = 16;

}  // namespace gpulb::cpu
