// Small helpers for building the model on every core: a parallel loop and a merge of sorted runs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace gpulb::viewer {

// Calls fn(i) for i in [0, n) on up to hardware_concurrency threads; items are taken one at a time
// so a few large tracks do not leave threads idle.
template <class Fn>
void parallel_for(std::size_t n, Fn&& fn) {
  const std::size_t threads = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::jthread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  }
}

// `v` holds sorted runs that start at bounds[0..k) (bounds[k] == v.size()); leaves it all sorted in
// O(n log k) by merging neighbouring runs pairwise.
template <class T, class Less>
void merge_sorted_runs(std::vector<T>& v, std::vector<std::size_t> bounds, Less less) {
  while (bounds.size() > 2) {
    std::vector<std::size_t> next;
    for (std::size_t i = 0; i + 2 < bounds.size(); i += 2) {
      std::inplace_merge(v.begin() + static_cast<std::ptrdiff_t>(bounds[i]),
                         v.begin() + static_cast<std::ptrdiff_t>(bounds[i + 1]),
                         v.begin() + static_cast<std::ptrdiff_t>(bounds[i + 2]), less);
      next.push_back(bounds[i]);
    }
    if (bounds.size() % 2 == 0) next.push_back(bounds[bounds.size() - 2]);
    next.push_back(bounds.back());
    bounds = std::move(next);
  }
}

}  // namespace gpulb::viewer
