// Small helpers for building the model on every core: a parallel loop and a merge of sorted runs.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gpulb::viewer {

// Calls fn(i) for i in [0, n) on up to hardware_concurrency threads; items are taken one at a time
// so a few large tracks do not leave threads idle. If fn throws (a hostile trace's limit, memory),
// the other threads stop taking items and the first exception is rethrown here, as the loop on
// one thread would: an exception leaving a thread's function would end the process.
template <class Fn>
void parallel_for(std::size_t n, Fn&& fn) {
  const std::size_t threads =
      std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_lock;
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        try {
          for (std::size_t i; (i = next.fetch_add(1)) < n;) fn(i);
        } catch (...) {
          const std::lock_guard<std::mutex> hold(error_lock);
          if (!error) error = std::current_exception();
          next.store(n);  // the others stop at their next item
        }
      });
    }
  }  // the jthreads join here
  if (error) std::rethrow_exception(error);
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
  out.insert(out.end(), v.begin(),
             v.begin() + static_cast<std::ptrdiff_t>(bounds.front()));  // outside the runs: kept
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

// A stable sort of v[from, to) by an integer key: least significant digit first, 11 bits a pass,
// as many passes as the keys' range (max - min) needs (a 40 ms run of ns times: 3). Stable, so on
// sorted runs laid end to end it gives what merge_sorted_runs gives (ties: the earlier run
// first), at O(n) a pass instead of O(n log k): a device's 4,224 deques are 12 heap levels.
template <class T, class Key>
void radix_sort_by(std::vector<T>& v, std::size_t from, std::size_t to, Key key) {
  if (to - from < 2) return;
  std::uint64_t lo = key(v[from]), hi = lo;
  for (std::size_t i = from; i < to; ++i) {
    const std::uint64_t k = key(v[i]);
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  if (lo == hi) return;
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  const int passes = (std::bit_width(hi - lo) + kBits - 1) / kBits;
  // Every pass's histogram from one read of the keys.
  std::vector<std::array<std::size_t, kBuckets>> counts(static_cast<std::size_t>(passes));
  for (auto& c : counts) c.fill(0);
  for (std::size_t i = from; i < to; ++i) {
    const std::uint64_t k = key(v[i]) - lo;
    for (int p = 0; p < passes; ++p)
      ++counts[static_cast<std::size_t>(p)][(k >> (p * kBits)) & (kBuckets - 1)];
  }
  std::vector<T> buf(to - from);
  T* src = v.data() + from;
  T* dst = buf.data();
  for (int p = 0; p < passes; ++p) {
    auto& c = counts[static_cast<std::size_t>(p)];
    if (c[(key(src[0]) - lo) >> (p * kBits) & (kBuckets - 1)] == to - from)
      continue;  // one digit: nothing moves
    std::size_t sum = 0;
    for (std::size_t& n : c) sum += std::exchange(n, sum);
    for (std::size_t i = 0; i < to - from; ++i)
      dst[c[((key(src[i]) - lo) >> (p * kBits)) & (kBuckets - 1)]++] = src[i];
    std::swap(src, dst);
  }
  if (src != v.data() + from) std::copy(src, src + (to - from), v.data() + from);
}

// merge_sorted_runs where the order is an integer key's: by radix where the runs are many (a
// heap of k runs costs log2 k comparisons an element), by the heap where they are few.
template <class T, class Key>
void merge_sorted_runs_by_key(std::vector<T>& v, const std::vector<std::size_t>& bounds, Key key) {
  if (bounds.size() <= 2) return;
  if (bounds.size() - 1 >= 16 && bounds.back() - bounds.front() >= 4096) {
    radix_sort_by(v, bounds.front(), bounds.back(), key);
  } else {
    merge_sorted_runs(v, bounds, [&](const T& a, const T& b) { return key(a) < key(b); });
  }
}

}  // namespace gpulb::viewer
