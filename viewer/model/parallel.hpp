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

// `v` holds sorted runs that start at bounds[0..k) (bounds[k] == v.size()); leaves it all sorted,
// stable (on ties, the earlier run first). One pass through a heap of the k runs' heads: merging
// neighbouring runs pairwise took log2(k) passes over the data, 12 for a device's 4,224 deques,
// and was a seventh of loading a 10 M-event trace.
template <class T, class Less>
void merge_sorted_runs(std::vector<T>& v, const std::vector<std::size_t>& bounds, Less less) {
  if (bounds.size() <= 2) return;
  // Each head carries its run's next element, so comparing heads touches the heap only.
  struct Head {
    T value;
    std::size_t at, end, run;
  };
  auto before = [&](const Head& a, const Head& b) {
    if (less(a.value, b.value)) return true;
    if (less(b.value, a.value)) return false;
    return a.run < b.run;
  };
  std::vector<Head> heap;
  heap.reserve(bounds.size() - 1);
  for (std::size_t r = 0; r + 1 < bounds.size(); ++r) {
    if (bounds[r] < bounds[r + 1]) heap.push_back({v[bounds[r]], bounds[r], bounds[r + 1], r});
  }
  // A min-heap by `before`, kept by hand: the top is replaced and sifted down once per element.
  auto sift_down = [&](std::size_t i) {
    const std::size_t n = heap.size();
    Head h = heap[i];
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && before(heap[c + 1], heap[c])) ++c;
      if (!before(heap[c], h)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = h;
  };
  for (std::size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
  std::vector<T> out;
  out.reserve(v.size());
  out.insert(out.end(), v.begin(), v.begin() + static_cast<std::ptrdiff_t>(bounds.front()));  // outside the runs: kept
  while (!heap.empty()) {
    Head& top = heap.front();
    out.push_back(top.value);
    if (++top.at < top.end) {
      top.value = v[top.at];
    } else {
      top = heap.back();
      heap.pop_back();
      if (heap.empty()) break;
    }
    sift_down(0);
  }
  out.insert(out.end(), v.begin() + static_cast<std::ptrdiff_t>(bounds.back()), v.end());
  v.swap(out);
}

}  // namespace gpulb::viewer
