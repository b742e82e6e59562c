// The tasks of a host task pool that is open to other ranks (a distributed run of a host-fed
// policy, docs/distributed.md): chunks arrive from other ranks and leave for them while this
// rank's GPU control threads take batches from the front.
//
// Storage: segments, each a run of tasks that never moves once stored (the rank's initial tasks,
// then every chunk received), so that a batch a control thread took stays readable while it copies
// it out, whatever arrives meanwhile. Segments are kept until the run ends: their sum is at most
// the tasks this rank ever held. One mutex: a take is one batch of up to a queue's capacity, and a
// chunk moves between ranks at most every few microseconds.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <vector>

#include "gpulb/task.hpp"

namespace gpulb::kernels::detail {

class OpenTaskStore {
 public:
  explicit OpenTaskStore(std::span<const Task> initial) {
    if (!initial.empty())
      segments_.push_back({std::vector<Task>(initial.begin(), initial.end()), 0, initial.size()});
    held_.store(initial.size(), std::memory_order_relaxed);
  }

  struct Batch {
    const Task* tasks = nullptr;
    std::uint32_t n = 0;
  };
  // Up to `most` tasks from the front, all from one segment; n == 0 where none is held.
  Batch take(std::uint32_t most) {
    std::lock_guard lock(mutex_);
    while (front_ < segments_.size() && segments_[front_].head == segments_[front_].end) ++front_;
    if (front_ == segments_.size()) return {};
    Segment& s = segments_[front_];
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(most, s.end - s.head));
    const Batch b{s.tasks.data() + s.head, n};
    s.head += n;
    held_.fetch_sub(n, std::memory_order_relaxed);
    return b;
  }
  // Tasks from another rank, behind the ones held.
  void add(std::span<const Task> tasks) {
    if (tasks.empty()) return;
    std::lock_guard lock(mutex_);
    segments_.push_back({std::vector<Task>(tasks.begin(), tasks.end()), 0, tasks.size()});
    held_.fetch_add(tasks.size(), std::memory_order_relaxed);
  }
  // For another rank: at most half of what is held (a lender never empties itself, as on the CPU
  // backend), from the back, which this rank's GPUs would reach last.
  std::uint32_t lend(std::span<Task> out) {
    std::lock_guard lock(mutex_);
    std::size_t want = std::min<std::size_t>(out.size(), held_.load(std::memory_order_relaxed) / 2);
    std::uint32_t given = 0;
    for (std::size_t i = segments_.size(); i > front_ && want > 0; --i) {
      Segment& s = segments_[i - 1];
      const std::size_t n = std::min(want, s.end - s.head);
      std::copy(s.tasks.begin() + static_cast<std::ptrdiff_t>(s.end - n),
                s.tasks.begin() + static_cast<std::ptrdiff_t>(s.end), out.begin() + given);
      s.end -= n;
      given += static_cast<std::uint32_t>(n);
      want -= n;
    }
    held_.fetch_sub(given, std::memory_order_relaxed);
    return given;
  }
  std::uint64_t held() const { return held_.load(std::memory_order_relaxed); }

  // No more tasks will arrive (the ranks agreed that every rank is idle) and none is held: the
  // control threads may stop their GPUs.
  void close() { closed_.store(true, std::memory_order_release); }
  bool finished() const { return closed_.load(std::memory_order_acquire) && held() == 0; }

 private:
  struct Segment {
    std::vector<Task> tasks;
    std::size_t head, end;  // [head, end) not yet taken or lent
  };
  std::mutex mutex_;
  std::deque<Segment> segments_;  // push_back keeps every element where it is
  std::size_t front_ = 0;         // segments before it are spent
  std::atomic<std::uint64_t> held_{0};
  std::atomic<bool> closed_{false};
};

}  // namespace gpulb::kernels::detail
