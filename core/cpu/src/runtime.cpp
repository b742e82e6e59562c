#include "gpulb/cpu/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <new>

#include <sys/resource.h>
#include <time.h>

#include "gpulb/trace_budget.hpp"

namespace gpulb::cpu {

std::uint32_t default_workers() { return std::max(1u, std::thread::hardware_concurrency()); }

namespace {
// Workers poll the watchdog and report progress this often (host clock).
constexpr std::uint64_t kReportEveryNs = 50'000'000;
// A distributed run's host thread looks at the watchdog this often (Runtime::watch).
constexpr std::uint64_t kWatchEveryNs = 5'000'000;

// Events a worker's segment should hold (before the memory budget has its say).
std::uint64_t segment_estimate(const ExecPlan& plan, std::uint32_t workers, std::uint64_t hint) {
  // A spawning run whose scenario cannot tell its size (expected_tasks 0): the hint counts only the
  // initial tasks, so give every worker the room a small run would get.
  if (plan.expected_tasks == 0) hint = std::max<std::uint64_t>(hint, std::uint64_t{1} << 18);
  // A worker may run far more than its share (that is what imbalance looks like, and what an
  // unlucky schedule does): small runs give every worker room for every event of the run; large
  // ones 8 x the even share, at least 256 Ki events, at most 4 Mi (64 MiB) a worker.
  constexpr std::uint64_t kAlwaysRoom = std::uint64_t{1} << 18, kMost = std::uint64_t{1} << 22;
  const std::uint64_t share = hint / std::max(1u, workers);
  const std::uint64_t cap = hint <= kAlwaysRoom
                                ? hint + 64
                                : std::max(kAlwaysRoom, std::min(hint + 64, 8 * share + 4096));
  return std::min(cap, kMost);
}

// A worker is a thread: past the run's tasks and many times the hardware threads, more of them
// only cost memory and switches (2000 threads for 64 tasks ended in std::bad_alloc).
std::uint32_t checked_workers(const ExecPlan& plan) {
  const std::uint32_t workers = plan.workers ? plan.workers : default_workers();
  const std::uint64_t tasks = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  const std::uint64_t threads_bound = std::uint64_t{kWorkersPerHardwareThread} * default_workers();
  if (workers <= tasks || workers <= threads_bound) return workers;
  throw ConfigError("--workers " + std::to_string(workers) +
                    ": the cpu backend runs a thread per worker, and " + std::to_string(workers) +
                    " is more than both the run's " + std::to_string(tasks) + " tasks and " +
                    std::to_string(kWorkersPerHardwareThread) + " x the " +
                    std::to_string(default_workers()) + " hardware threads here; use at most " +
                    std::to_string(std::max(tasks, threads_bound)));
}

template <class T>
std::unique_ptr<T[]> allocate_segment(std::uint64_t capacity, std::uint32_t segments) {
  try {
    // Left uninitialised: a page costs memory only once it is written.
    return std::make_unique_for_overwrite<T[]>(capacity);
  } catch (const std::bad_alloc&) {
    throw RunError(
        "could not allocate " + std::to_string(segments) + " trace segments of " +
        std::to_string(capacity) +
        " events; lower --trace-memory or --param trace_capacity, or run with --no-trace");
  }
}
// Writes one word a page of the first `units` units, so that the worker does not take those page
// faults while it runs: on the 2-core CI VM a fault cost 3.3-7.3 us (14-31 ns a 16-byte event
// written to fresh memory against 1.2-2.5 ns), more than the records themselves. Outside the
// makespan, and only the share a worker's short tasks need (trace_stream.hpp: about one unit a
// task; two are faulted in); a worker that writes more faults the rest in as it goes.
void prefault(std::uint64_t* units, std::uint64_t count) {
  constexpr std::uint64_t kUnitsPerPage = 4096 / sizeof(std::uint64_t);
  for (std::uint64_t i = 0; i < count; i += kUnitsPerPage) units[i] = 0;
}
std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000u + std::uint64_t(ts.tv_nsec);
}
std::uint64_t thread_minor_faults() {
  rusage ru{};
  return getrusage(RUSAGE_THREAD, &ru) == 0 ? static_cast<std::uint64_t>(ru.ru_minflt) : 0;
}
}  // namespace

Runtime::Runtime(const ExecPlan& plan, std::uint64_t events_hint, std::uint32_t trace_batch)
    : plan_(plan),
      workers_(checked_workers(plan)),
      origin_ns_(host_now_ns()),
      ticks_(kEventTicksAreTsc, event_ticks()),
      trace_batch_(plan.run_options.trace_batch ? plan.run_options.trace_batch : trace_batch),
      slots_(workers_) {
  if (plan.trace) {
    // A segment per worker and one for the host track.
    const TraceFit fit =
        fit_trace_segments(plan, workers_ + 1, segment_estimate(plan, workers_, events_hint));
    capacity_ = fit.capacity;
    trace_note_ = fit.note;
    const std::uint64_t units = stream_units();
    const std::uint64_t tasks = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
    const std::uint64_t share = std::min<std::uint64_t>(units, 2 * (tasks / workers_) + 4096);
    units_.reserve(workers_);
    for (std::uint32_t i = 0; i < workers_; ++i) {
      units_.push_back(allocate_segment<std::uint64_t>(units, workers_ + 1));
      prefault(units_.back().get(), share);
    }
    host_events_ = allocate_segment<trace::Event>(capacity_, workers_ + 1);
  }
  last_progress_ns_ = origin_ns_;
}

std::uint32_t Runtime::stream_units() const {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(std::uint64_t{capacity_} * 2, 0xFFFFFFFFu));
}

TraceStream Runtime::worker_segment(std::uint32_t w) {
  if (!plan_.trace) return {};
  return {units_[w].get(), stream_units(), &slots_[w].trace, ticks_.origin_tick(), trace_batch_};
}

trace::TraceSegment Runtime::host_segment() {
  if (!plan_.trace) return {};
  return {host_events_.get(), capacity_, &host_count_};
}

void Runtime::host_record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) {
  if (plan_.trace) host_segment().record(trace::make_event(event_ticks(), kind, arg, aux));
}

void Runtime::start(const std::function<void(std::uint32_t)>& fn) {
  threads_.reserve(workers_);
  for (std::uint32_t w = 0; w < workers_; ++w) {
    threads_.emplace_back([this, fn, w] {
      const auto wall0 = std::chrono::steady_clock::now();
      const std::uint64_t cpu0 = thread_cpu_ns(), faults0 = thread_minor_faults();
      fn(w);
      slots_[w].cpu_ns = thread_cpu_ns() - cpu0;
      slots_[w].minor_faults = thread_minor_faults() - faults0;
      slots_[w].wall_ns =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - wall0)
                                         .count());
      if (finished_workers_.fetch_add(1, std::memory_order_acq_rel) + 1 == workers_) {
        std::lock_guard<std::mutex> lock(finished_mutex_);  // so the waiter cannot miss the notify
        finished_cv_.notify_all();
      }
    });
  }
}

void Runtime::wait_workers(const std::function<std::string()>& state) {
  // Asleep until the last worker is done, waking every few ms for the watchdog: a host thread
  // that polled every 100 us cost the workers about 5% in context switches (perf, UTS, 1 thread).
  const auto all_done = [this] {
    return finished_workers_.load(std::memory_order_acquire) >= workers_;
  };
  while (!all_done()) {
    {
      std::unique_lock<std::mutex> lock(finished_mutex_);
      finished_cv_.wait_for(lock, std::chrono::milliseconds(5), all_done);
    }
    tick(state);
  }
}

void Runtime::join() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

std::uint64_t Runtime::tasks_done() const {
  std::uint64_t n = 0;
  for (const WorkerSlot& s : slots_) n += s.tasks_done.load(std::memory_order_relaxed);
  return n;
}

void Runtime::fail(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    if (failed_.load(std::memory_order_relaxed)) return;
    failure_ = message;
    failed_.store(true, std::memory_order_release);
  }
  stop_.store(true, std::memory_order_relaxed);
}

void Runtime::rethrow_failure() {
  if (!failed()) return;
  join();
  std::lock_guard<std::mutex> lock(failure_mutex_);
  throw RunError(failure_);
}

void Runtime::tick(const std::function<std::string()>& state) {
  rethrow_failure();
  const std::uint64_t now = host_now_ns();
  if (now - last_report_ns_ < kReportEveryNs) return;
  last_report_ns_ = now;
  const std::uint64_t done = tasks_done();
  if (plan_.progress)
    plan_.progress(done, plan_.expected_tasks ? plan_.expected_tasks : plan_.tasks.size());
  if (done != last_progress_) {
    last_progress_ = done;
    last_progress_ns_ = now;
    return;
  }
  if (now - last_progress_ns_ > std::uint64_t{plan_.run_options.watchdog_ms} * 1'000'000) {
    stop_.store(true, std::memory_order_relaxed);
    join();
    throw RunError("watchdog: policy '" + std::string(plan_.policy->name) +
                   "' on the cpu backend made no progress for " +
                   std::to_string(plan_.run_options.watchdog_ms) + " ms (" + std::to_string(done) +
                   " tasks done; " + state() +
                   "); raise --param watchdog_ms if the tasks are this long");
  }
}

void Runtime::watch(bool busy, const std::function<std::string()>& state) {
  const std::uint64_t now = host_now_ns();
  // Every few ms: the workers' counters are hot lines, and the balancer calls this between messages.
  if (now - last_watch_ns_ < kWatchEveryNs) return;
  last_watch_ns_ = now;
  const std::uint64_t done = tasks_done();
  if (!busy || done != last_progress_) {
    last_progress_ = done;
    last_progress_ns_ = now;
    return;
  }
  if (now - last_progress_ns_ > std::uint64_t{plan_.run_options.watchdog_ms} * 1'000'000) {
    stop_.store(true, std::memory_order_relaxed);
    throw RunError("watchdog: policy '" + std::string(plan_.policy->name) +
                   "' on the cpu backend made no progress for " +
                   std::to_string(plan_.run_options.watchdog_ms) +
                   " ms while this rank had tasks queued or running (" + std::to_string(done) +
                   " tasks done on this rank; " + state() +
                   "); raise --param watchdog_ms if the tasks are this long");
  }
}

ExecOutput Runtime::finish(const std::string& host_track_name, std::uint64_t tasks_run) {
  join();
  rethrow_failure();
  ExecOutput out;
  out.workers = workers_;
  out.tasks_run = tasks_run;
  std::uint64_t first = ~std::uint64_t{0}, last = 0;
  for (const WorkerSlot& s : slots_) {
    first = std::min(first, s.start_ns);
    last = std::max(last, s.end_ns);
  }
  out.makespan_ns = last > first ? last - first : 0;
  out.origin_ns = origin_ns_;
  out.first_start_ns = workers_ > 0 ? first : 0;
  add_worker_metrics(out);
  trace::Device cpu;
  cpu.kind = trace::DeviceKind::Cpu;
  cpu.name = "CPU (" + std::to_string(workers_) + " threads)";
  cpu.sm_count = std::thread::hardware_concurrency();
  cpu.workers = workers_;
  out.trace.devices.push_back(cpu);
  if (!trace_note_.empty()) out.notes.push_back(trace_note_);
  out.trace_cut_to_budget = !trace_note_.empty();
  if (!plan_.trace) return out;
  ticks_.calibrate();
  add_tracks(out, host_track_name);
  return out;
}

void Runtime::add_worker_metrics(ExecOutput& out) const {
  // Load balance: the busiest and the idlest worker's task counts (a CPU worker is its own "SM").
  std::uint64_t most = 0, least = ~std::uint64_t{0};
  for (const WorkerSlot& s : slots_) {
    const std::uint64_t n = s.tasks_done.load(std::memory_order_relaxed);
    most = std::max(most, n);
    least = std::min(least, n);
  }
  out.metrics["tasks_per_worker_max"] = most;
  out.metrics["tasks_per_worker_min"] = workers_ > 0 ? least : 0;
  // The workers' CPU time, summed: on a shared machine a steadier measure of their work than the
  // makespan (scripts/trace-overhead-ab.py). Idle polling counts too.
  std::uint64_t cpu_ns = 0;
  for (const WorkerSlot& s : slots_) cpu_ns += s.cpu_ns;
  out.metrics["worker_cpu_us"] = cpu_ns / 1000;
  // Page faults the workers took while they ran (the trace's segments are faulted in before the
  // run, Runtime(): a fault on the run's path costs more than the records it makes room for).
  std::uint64_t faults = 0;
  for (const WorkerSlot& s : slots_) faults += s.minor_faults;
  out.metrics["worker_minor_faults"] = faults;
  // Whether the workers ran at one speed (the CPU load's max/min): each worker thread's
  // share of its wall time on a CPU (per mille; under 1000 where the OS or a hypervisor ran
  // something else on its core), and its tasks per second of its own CPU time. A spread in
  // tasks per worker with even rates is the machine's (CPU time taken away); with even shares
  // and uneven rates, the cores ran at different speeds (a busy hyperthread sibling); with both
  // even, the scheduler's. Idle polling counts as CPU time and a yield gives the core away: read
  // them where workers seldom idle (UTS's large trees).
  std::uint64_t share_min = ~std::uint64_t{0}, share_max = 0, rate_min = ~std::uint64_t{0},
                rate_max = 0;
  for (const WorkerSlot& s : slots_) {
    const std::uint64_t share =
        s.wall_ns ? std::min<std::uint64_t>(1000, s.cpu_ns * 1000 / s.wall_ns) : 0;
    const std::uint64_t n = s.tasks_done.load(std::memory_order_relaxed);
    const std::uint64_t rate = s.cpu_ns ? static_cast<std::uint64_t>(static_cast<double>(n) * 1e9 /
                                                                     static_cast<double>(s.cpu_ns))
                                        : 0;
    share_min = std::min(share_min, share), share_max = std::max(share_max, share);
    rate_min = std::min(rate_min, rate), rate_max = std::max(rate_max, rate);
  }
  if (workers_ > 0) {
    out.metrics["worker_cpu_share_min_pm"] = share_min;
    out.metrics["worker_cpu_share_max_pm"] = share_max;
    out.metrics["tasks_per_cpu_s_min"] = rate_min;
    out.metrics["tasks_per_cpu_s_max"] = rate_max;
  }
}

// Each worker's stream expanded into its track, and the host's track.
void Runtime::add_tracks(ExecOutput& out, const std::string& host_track_name) {
  // Events are written in time order by one thread; keep the invariant explicit for readers.
  const auto by_time = [](trace::Track& tr) {
    const auto earlier = [](const trace::Event& a, const trace::Event& b) {
      return a.time_ns < b.time_ns;
    };
    if (!std::is_sorted(tr.events.begin(), tr.events.end(), earlier))
      std::stable_sort(tr.events.begin(), tr.events.end(), earlier);
  };
  std::uint64_t interpolated = 0;
  for (std::uint32_t w = 0; w < workers_; ++w) {
    trace::Track tr;
    tr.role = trace::TrackRole::Worker;
    tr.worker = w;
    tr.name = "worker " + std::to_string(w);
    const StreamCounts& c = slots_[w].trace;
    tr.dropped = c.dropped;
    const std::uint64_t origin = ticks_.origin_tick();
    tr.events = expand_stream(units_[w].get(), c.used,
                              [&](std::uint64_t t) { return ticks_.to_origin_ns(origin + t); });
    units_[w].reset();  // the track holds them now: give the memory back before the next copy
    for (const trace::Event& e : tr.events)
      interpolated += (e.flags & trace::kTimeInterpolated) != 0;
    by_time(tr);
    out.trace.tracks.push_back(std::move(tr));
  }
  if (interpolated > 0) {
    // Said where the trace goes (gpulb info, the viewer's summary), not as a note of every run.
    out.trace.meta.clock_source = "steady_clock; short tasks timed once a batch of up to " +
                                  std::to_string(trace_batch_) + ", " +
                                  std::to_string(interpolated) +
                                  " event times interpolated (--param trace_batch=1 times each)";
  }
  trace::Track host;
  host.role = trace::TrackRole::Host;
  host.name = host_track_name;
  const std::uint32_t kept = std::min(host_count_, capacity_);
  host.dropped = host_count_ - kept;
  host.events.assign(host_events_.get(), host_events_.get() + kept);
  for (trace::Event& e : host.events) e.time_ns = ticks_.to_origin_ns(e.time_ns);
  by_time(host);
  out.trace.tracks.push_back(std::move(host));
}

}  // namespace gpulb::cpu
