// The host task pool that control threads (one per GPU) draw from (Chen et al. section 6.2).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/clock.hpp"
#include "gpulb/cuda/device_health.hpp"
#include "gpulb/kernels/detail/open_task_store.hpp"
#include "gpulb/task.hpp"

namespace gpulb::kernels::detail {

class HostTaskPool {
 public:
  explicit HostTaskPool(std::span<const Task> tasks) : tasks_(tasks) {}
  HostTaskPool(const HostTaskPool&) = delete;
  HostTaskPool& operator=(const HostTaskPool&) = delete;
  // After an abandoned kernel cudaHostUnregister would wait for it forever (as ~DeviceBuffer).
  ~HostTaskPool() {
    if (pinned_ && !cuda::kernel_abandoned()) cudaHostUnregister(const_cast<Task*>(tasks_.data()));
  }

  // A distributed run's pool: tasks arrive from other ranks (add) and leave for them (lend) while
  // the GPUs take, and the pool is finished only once close()d (OpenTaskStore). `run_tasks`: the
  // whole run's tasks over every rank, which sizes the queues and the trace as on one host.
  void open_to_ranks(std::uint64_t run_tasks) {
    open_ = std::make_unique<OpenTaskStore>(tasks_);
    sizing_tasks_ = run_tasks;
  }
  bool open() const { return open_ != nullptr; }
  // The tasks every GPU's queues take at once (each control thread adds its GPU's): an open pool's
  // rank asks other ranks for work while it holds less.
  void add_refill(std::uint64_t n) { refill_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t refill() const { return refill_.load(std::memory_order_relaxed); }
  // Tasks in the GPUs' queues, not yet taken out by every block (each control thread adds the
  // change in its GPU's count; an open pool only): with the pool's own, what the rank still holds.
  void add_queued(std::int64_t change) { queued_.fetch_add(change, std::memory_order_relaxed); }
  std::uint64_t queued() const {
    const std::int64_t q = queued_.load(std::memory_order_relaxed);
    return q > 0 ? static_cast<std::uint64_t>(q) : 0;
  }
  OpenTaskStore& store() { return *open_; }

  // Page-locks the pool so that the copy engine reads batches straight from it (task-queue's copy
  // feed). Returns a note for the run: what it cost, or why the pool stays pageable (the feed then
  // copies each batch through pinned staging memory; nothing else changes).
  std::string pin() {
    if (open_) return "the task pool is open to other ranks: batches go through staging memory";
    if (tasks_.empty() || pinned_) return {};
    const std::uint64_t t0 = host_now_ns();
    const cudaError_t e = cudaHostRegister(const_cast<Task*>(tasks_.data()), tasks_.size_bytes(),
                                           cudaHostRegisterPortable);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: clear it so later calls do not report it
      return std::string("the task pool could not be page-locked (") + cudaGetErrorString(e) +
             "): batches go through staging memory";
    }
    pinned_ = true;
    return "page-locked the task pool (" + std::to_string(tasks_.size_bytes() >> 20) + " MiB) in " +
           std::to_string((host_now_ns() - t0) / 1000) +
           " us before the launch, for the copy engine";
  }
  bool pinned() const { return pinned_; }

  // Finds the runs of at least kMinRun tasks that a range batch can stand for: each task equal to
  // the one before it but for an id one higher. One pass over the pool before the launch; returns
  // a note of what it found and what the pass cost.
  static constexpr std::uint64_t kMinRun = 32;
  std::string index_runs() {
    if (open_) return {};
    const std::uint64_t t0 = host_now_ns();
    runs_.clear();
    std::uint64_t start = 0, in_runs = 0;
    auto close = [&](std::uint64_t end) {
      if (end - start >= kMinRun) {
        runs_.push_back({start, end});
        in_runs += end - start;
      }
    };
    for (std::uint64_t i = 1; i < tasks_.size(); ++i) {
      if (!continues(tasks_[i - 1], tasks_[i])) {
        close(i);
        start = i;
      }
    }
    close(tasks_.size());
    return std::to_string(in_runs) + " of " + std::to_string(tasks_.size()) + " tasks go as " +
           std::to_string(runs_.size()) + " runs of consecutive ids in range batches (found in " +
           std::to_string((host_now_ns() - t0) / 1000) + " us before the launch)";
  }

  struct Take {
    const Task* tasks;
    std::uint32_t n;
    std::uint64_t first;  // index of tasks[0] in the pool
    bool range = false;   // tasks[0] stands for all n (index_runs): the batch is one descriptor
  };
  // Up to `most` tasks, in order; n == 0 once the pool is empty. With `ranges`, a batch inside a
  // run found by index_runs is a range, and no other batch reaches into a run.
  // `taker`: the GPU slot that takes, for the share quota (set_share_quota); kNoTaker: none.
  static constexpr std::uint32_t kNoTaker = ~0u;
  Take take(std::uint32_t most, bool ranges = false, std::uint32_t taker = kNoTaker) {
    const std::uint64_t quota = share_quota_.load(std::memory_order_relaxed);
    if (quota != 0 && taker < taken_.size()) {
      most = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(most, quota - std::min(quota, taken_[taker])));
      if (most == 0) return {nullptr, 0, next_.load(std::memory_order_relaxed)};
      const Take t = take_unlimited(most, ranges);
      taken_[taker] += t.n;
      return t;
    }
    return take_unlimited(most, ranges);
  }
  // A one-wave run (every task can start at once on some GPU's block): each GPU takes at most
  // `quota` tasks, its even share. A dynamic take could then only put a second task behind a busy
  // block of one GPU while a block of another stays idle. 0: no quota (the default).
  void set_share_quota(std::uint64_t quota) {
    share_quota_.store(quota, std::memory_order_relaxed);
  }
  // The taker has taken its whole quota: what is left in the pool is the other GPUs' share.
  bool share_spent(std::uint32_t taker) const {
    const std::uint64_t quota = share_quota_.load(std::memory_order_relaxed);
    return quota != 0 && taker < taken_.size() && taken_[taker] >= quota;
  }

  // The GPUs' control threads meet here once their kernels run, so that the first GPU to launch
  // does not take the pool before the others can ask (with fewer tasks than resident blocks it
  // took up to 40% of it: docs/benchmarks.md, md Figure 10). Returns false where the run aborts
  // meanwhile (a GPU failed before it arrived).
  void expect_starters(std::uint32_t n) {
    starters_ = n;
    unstarted_.store(n, std::memory_order_relaxed);
    taken_.assign(n, 0);
  }
  bool start_together(const std::atomic<bool>& abort_all) {
    unstarted_.fetch_sub(1, std::memory_order_acq_rel);
    while (unstarted_.load(std::memory_order_acquire) > 0) {
      if (abort_all.load(std::memory_order_relaxed)) return false;
      std::this_thread::yield();
    }
    return true;
  }
  // The GPUs launch together: each control thread arrives here right before its launch, once its
  // queues, streams and trace are allocated. In a closed pool the last to arrive lets all launch;
  // an open pool's GPUs launch together with the other ranks' (Distribution::meet), once the
  // calling thread has met them (let_launch). False where the run aborts meanwhile. Without it
  // one GPU's (or rank's) start-up became the idle time of the GPUs that launched first: the
  // run's time starts at the first launch.
  bool ready_to_launch(const std::atomic<bool>& abort_all) {
    const std::uint32_t arrived = ready_.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (!open_ && arrived >= starters_) let_launch();
    while (!launch_.load(std::memory_order_acquire)) {
      if (abort_all.load(std::memory_order_relaxed)) return false;
      std::this_thread::yield();
    }
    return true;
  }
  // The calling thread: whether all `gpus` control threads are ready (false where the run aborted).
  bool wait_until_ready(std::uint32_t gpus, const std::atomic<bool>& abort_all) const {
    while (ready_.load(std::memory_order_acquire) < gpus) {
      if (abort_all.load(std::memory_order_relaxed)) return false;
      std::this_thread::yield();
    }
    return true;
  }
  void let_launch() { launch_.store(true, std::memory_order_release); }

  bool empty() const {
    return open_ ? open_->held() == 0 : next_.load(std::memory_order_relaxed) >= tasks_.size();
  }
  // No task will come any more: empty, and in an open pool also closed.
  bool finished() const { return open_ ? open_->finished() : empty(); }
  std::uint64_t level() const {
    if (open_) return open_->held();
    return tasks_.size() -
           std::min<std::uint64_t>(next_.load(std::memory_order_relaxed), tasks_.size());
  }
  // The tasks the queues and trace are sized for: the pool's, or in an open pool the whole run's.
  std::uint64_t size() const { return open_ ? sizing_tasks_ : tasks_.size(); }

 private:
  // Up to `most` tasks from the shared cursor, as take() without a quota.
  Take take_unlimited(std::uint32_t most, bool ranges) {
    if (open_) {
      const OpenTaskStore::Batch b = open_->take(most);
      return {b.tasks, b.n, 0};
    }
    if (!ranges || runs_.empty()) {
      const std::uint64_t first = next_.fetch_add(most, std::memory_order_relaxed);
      if (first >= tasks_.size()) return {nullptr, 0, first};
      const auto n =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(most, tasks_.size() - first));
      return {tasks_.data() + first, n, first};
    }
    std::uint64_t first = next_.load(std::memory_order_relaxed);
    for (;;) {
      if (first >= tasks_.size()) return {nullptr, 0, first};
      // The first run that ends after `first`: either `first` is inside it, or it bounds this batch.
      const auto run = std::upper_bound(runs_.begin(), runs_.end(), first,
                                        [](std::uint64_t f, const Run& r) { return f < r.end; });
      std::uint64_t end = tasks_.size();
      bool range = false;
      if (run != runs_.end()) {
        range = run->start <= first;
        end = range ? run->end : run->start;
      }
      const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(most, end - first));
      if (next_.compare_exchange_weak(first, first + n, std::memory_order_relaxed))
        return {tasks_.data() + first, n, first, range};
    }
  }
  // b repeats a with the next id (the bytes after `id` equal).
  static bool continues(const Task& a, const Task& b) {
    static_assert(offsetof(Task, id) == 0 && std::has_unique_object_representations_v<Task>,
                  "memcmp compares all of a task but its id");
    return b.id == a.id + 1 && std::memcmp(reinterpret_cast<const char*>(&a) + sizeof a.id,
                                           reinterpret_cast<const char*>(&b) + sizeof b.id,
                                           sizeof(Task) - sizeof a.id) == 0;
  }
  struct Run {
    std::uint64_t start, end;
  };
  std::vector<Run> runs_;
  std::span<const Task> tasks_;
  std::atomic<std::uint64_t> next_{0};
  std::uint32_t starters_ = 0;
  std::atomic<std::uint32_t> unstarted_{0};
  std::atomic<std::uint64_t> share_quota_{0};
  std::vector<std::uint64_t>
      taken_;  // per taker; each element written by its own control thread only
  bool pinned_ = false;
  std::unique_ptr<OpenTaskStore> open_;
  std::atomic<std::uint64_t> refill_{0};
  std::atomic<std::int64_t> queued_{0};
  std::atomic<std::uint32_t> ready_{0};
  std::atomic<bool> launch_{false};
  std::uint64_t sizing_tasks_ = 0;
};

}  // namespace gpulb::kernels::detail
