#include "gpulb/cpu/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <new>

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
  const std::uint64_t cap = hint <= kAlwaysRoom ? hint + 64 : std::max(kAlwaysRoom, std::min(hint + 64, 8 * share + 4096));
  return std::min(cap, kMost);
}

// A worker is a thread: past the run's tasks and many times the hardware threads, more of them
// only cost memory and switches (2000 threads for 64 tasks ended in std::bad_alloc).
std::uint32_t checked_workers(const ExecPlan& plan) {
  const std::uint32_t workers = plan.workers ? plan.workers : default_workers();
  const std::uint64_t tasks = std::max<std::uint64_t>(plan.expected_tasks, plan.tasks.size());
  const std::uint64_t threads_bound = std::uint64_t{kWorkersPerHardwareThread} * default_workers();
  if (workers <= tasks || workers <= threads_bound) return workers;
  throw ConfigError("--workers " + std::to_string(workers) + ": the cpu backend runs a thread per worker, and " +
                    std::to_string(workers) + " is more than both the run's " + std::to_string(tasks) + " tasks and " +
                    std::to_string(kWorkersPerHardwareThread) + " x the " + std::to_string(default_workers()) +
                    " hardware threads here; use at most " + std::to_string(std::max(tasks, threads_bound)));
}

std::unique_ptr<trace::Event[]> allocate_segment(std::uint32_t capacity, std::uint32_t segments) {
  try {
    // Left uninitialised: a page costs memory only once a worker writes an event into it.
    return std::make_unique_for_overwrite<trace::Event[]>(capacity);
  } catch (const std::bad_alloc&) {
    throw RunError("could not allocate " + std::to_string(segments) + " trace segments of " + std::to_string(capacity) +
                   " events; lower --trace-memory or --param trace_capacity, or run with --no-trace");
  }
}
}  // namespace

Runtime::Runtime(const ExecPlan& plan, std::uint64_t events_hint)
    : plan_(plan), workers_(checked_workers(plan)), origin_ns_(host_now_ns()), ticks_(kEventTicksAreTsc, event_ticks()), slots_(workers_) {
  if (plan.trace) {
    // A segment per worker and one for the host track.
    const TraceFit fit = fit_trace_segments(plan, workers_ + 1, segment_estimate(plan, workers_, events_hint));
    capacity_ = fit.capacity;
    trace_note_ = fit.note;
    events_.reserve(workers_ + 1);
    for (std::uint32_t i = 0; i <= workers_; ++i) events_.push_back(allocate_segment(capacity_, workers_ + 1));
  }
  last_progress_ns_ = origin_ns_;
}

trace::TraceSegment Runtime::worker_segment(std::uint32_t w) {
  if (!plan_.trace) return {};
  return {events_[w].get(), capacity_, &slots_[w].trace_count};
}

trace::TraceSegment Runtime::host_segment() {
  if (!plan_.trace) return {};
  return {events_[workers_].get(), capacity_, &host_count_};
}

void Runtime::host_record(trace::EventKind kind, std::uint32_t arg, std::uint16_t aux) {
  if (plan_.trace) host_segment().record(trace::make_event(event_ticks(), kind, arg, aux));
}

void Runtime::start(const std::function<void(std::uint32_t)>& fn) {
  threads_.reserve(workers_);
  for (std::uint32_t w = 0; w < workers_; ++w) {
    threads_.emplace_back([this, fn, w] {
      fn(w);
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
  const auto all_done = [this] { return finished_workers_.load(std::memory_order_acquire) >= workers_; };
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
  if (plan_.progress) plan_.progress(done, plan_.expected_tasks ? plan_.expected_tasks : plan_.tasks.size());
  if (done != last_progress_) {
    last_progress_ = done;
    last_progress_ns_ = now;
    return;
  }
  if (now - last_progress_ns_ > std::uint64_t{plan_.options.watchdog_ms} * 1'000'000) {
    stop_.store(true, std::memory_order_relaxed);
    join();
    throw RunError("watchdog: policy '" + std::string(plan_.policy->name) + "' on the cpu backend made no progress for " +
                   std::to_string(plan_.options.watchdog_ms) + " ms (" + std::to_string(done) +
                   " tasks done; " + state() + "); raise --param watchdog_ms if the tasks are this long");
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
  if (now - last_progress_ns_ > std::uint64_t{plan_.options.watchdog_ms} * 1'000'000) {
    stop_.store(true, std::memory_order_relaxed);
    throw RunError("watchdog: policy '" + std::string(plan_.policy->name) + "' on the cpu backend made no progress for " +
                   std::to_string(plan_.options.watchdog_ms) + " ms while this rank had tasks queued or running (" +
                   std::to_string(done) + " tasks done on this rank; " + state() +
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
  // Load balance: the busiest and the idlest worker's task counts (a CPU worker is its own "SM").
  std::uint64_t most = 0, least = ~std::uint64_t{0};
  for (const WorkerSlot& s : slots_) {
    const std::uint64_t n = s.tasks_done.load(std::memory_order_relaxed);
    most = std::max(most, n);
    least = std::min(least, n);
  }
  out.metrics["tasks_per_worker_max"] = most;
  out.metrics["tasks_per_worker_min"] = workers_ > 0 ? least : 0;

  trace::Device cpu;
  cpu.kind = trace::DeviceKind::Cpu;
  cpu.name = "CPU (" + std::to_string(workers_) + " threads)";
  cpu.sm_count = std::thread::hardware_concurrency();
  cpu.workers = workers_;
  out.trace.devices.push_back(cpu);
  if (!trace_note_.empty()) out.notes.push_back(trace_note_);
  if (!plan_.trace) return out;
  ticks_.calibrate();

  auto make_track = [&](std::uint32_t index, std::uint32_t count, trace::TrackRole role, std::string name) {
    trace::Track tr;
    tr.role = role;
    tr.device = 0;
    tr.worker = index;
    tr.name = std::move(name);
    const std::uint32_t kept = std::min(count, capacity_);
    tr.dropped = count - kept;
    tr.events.assign(events_[index].get(), events_[index].get() + kept);
    for (trace::Event& e : tr.events) e.time_ns = ticks_.to_origin_ns(e.time_ns);
    // Events are written in time order by one thread; keep the invariant explicit for readers.
    std::stable_sort(tr.events.begin(), tr.events.end(),
                     [](const trace::Event& a, const trace::Event& b) { return a.time_ns < b.time_ns; });
    return tr;
  };
  for (std::uint32_t w = 0; w < workers_; ++w) {
    out.trace.tracks.push_back(make_track(w, slots_[w].trace_count, trace::TrackRole::Worker, "worker " + std::to_string(w)));
  }
  trace::Track host = make_track(workers_, host_count_, trace::TrackRole::Host, host_track_name);
  host.worker = 0;
  out.trace.tracks.push_back(std::move(host));
  return out;
}

}  // namespace gpulb::cpu
