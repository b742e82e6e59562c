// The host task pool that control threads (one per GPU) draw from (Chen et al. section 6.2).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>

#include "gpulb/task.hpp"

namespace gpulb::kernels::detail {

class HostTaskPool {
 public:
  explicit HostTaskPool(std::span<const Task> tasks) : tasks_(tasks) {}

  struct Take {
    const Task* tasks;
    std::uint32_t n;
    std::uint64_t first;  // index of tasks[0] in the pool
  };
  // Up to `most` tasks, in order; n == 0 once the pool is empty.
  Take take(std::uint32_t most) {
    const std::uint64_t first = next_.fetch_add(most, std::memory_order_relaxed);
    if (first >= tasks_.size()) return {nullptr, 0, first};
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(most, tasks_.size() - first));
    return {tasks_.data() + first, n, first};
  }
  bool empty() const { return next_.load(std::memory_order_relaxed) >= tasks_.size(); }
  std::uint64_t level() const { return tasks_.size() - std::min<std::uint64_t>(next_.load(std::memory_order_relaxed), tasks_.size()); }
  std::uint64_t size() const { return tasks_.size(); }

 private:
  std::span<const Task> tasks_;
  std::atomic<std::uint64_t> next_{0};
};

}  // namespace gpulb::kernels::detail
