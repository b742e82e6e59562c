// What one combined request moves to the device (Rengasamy & Vadhiyar, section 3.2): the requests
// of one launch, the item bytes to copy and the index buffer their blocks read through.
//   redundant:    every request's items, copied contiguously in its own order (no index buffer;
//                 neighbouring threads read neighbouring addresses, nothing is reused);
//   reuse:        the device keeps a cache of items in slots (DataCacheTable); only the items no
//                 earlier launch left there are copied (then scattered to their slots), plus the
//                 index buffer of every request's slots;
//   reuse-sorted: as reuse, and each request's slots (past its ordered prefix) are sorted, so that
//                 neighbouring threads read neighbouring slots.
// Departure from the paper: G-Charm keeps one sorted index array per combined request, inserting
// each index by binary search as requests arrive. Here a block runs one request, so what decides
// which addresses neighbouring threads read is the order within a request: each request's list
// is sorted once, at the launch (O(n log n) per request, on the host loop's thread).
//
// Pure host logic: assemble() with offsets, then bind() with the addresses of the buffers the
// backend sized from them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/errors.hpp"
#include "gpulb/policy_choices.hpp"
#include "gpulb/gcharm/data_cache.hpp"
#include "gpulb/gcharm/work_group_list.hpp"
#include "gpulb/requests.hpp"

namespace gpulb::gcharm {

// InPlace is not a G-Charm mode: it is how host threads run requests (hybrid's CPU side), reading
// the published table where it lies, through each request's own item list; nothing is copied.
enum class TransferMode : std::uint8_t { Redundant, Reuse, ReuseSorted, InPlace };

inline TransferMode transfer_mode(RequestTransfer t) {
  switch (t) {
    case RequestTransfer::Redundant: return TransferMode::Redundant;
    case RequestTransfer::ReuseSorted: return TransferMode::ReuseSorted;
    case RequestTransfer::Reuse: break;
  }
  return TransferMode::Reuse;
}

// Whether the device keeps a cache of items (a DataCacheTable on the host).
inline bool uses_cache(TransferMode m) {
  return m == TransferMode::Reuse || m == TransferMode::ReuseSorted;
}

inline constexpr std::size_t kOutputAlign = 16;

struct CombinedRequest {
  std::vector<PendingRequest> requests;
  std::vector<Task> tasks;                  // payload[0..3] set by bind()
  std::vector<std::byte> upload_items;      // the item bytes to copy
  std::vector<std::uint32_t> upload_slots;  // reuse: the slot of each copied item
  std::vector<std::uint32_t> slot_lists;    // reuse: every request's slots, one after the other
  std::vector<std::uint64_t>
      first_item;  // per request: its first entry in slot_lists / upload_items
  std::vector<std::uint64_t> output_offset;  // per request, bytes into the output area
  std::uint64_t output_bytes = 0;
  std::uint64_t items_read = 0;  // items the requests read, repeats included
  TransferMode mode = TransferMode::Redundant;
  std::span<const std::byte> table;  // the published item table the requests index

  // The bytes the host sends for this launch: items, index buffer and tasks.
  std::uint64_t bytes_to_device() const {
    return upload_items.size() + upload_slots.size() * 4 + slot_lists.size() * 4 +
           tasks.size() * sizeof(Task);
  }
};

// Sorts slot numbers ascending: an LSD radix sort by 11 bits (three passes) for long lists, as
// the host loop sorts every request of every launch (std::sort was most of the loop's time).
inline void sort_slots(std::uint32_t* first, std::uint32_t* last,
                       std::vector<std::uint32_t>& scratch) {
  const auto n = static_cast<std::size_t>(last - first);
  if (n < 256) {
    std::sort(first, last);
    return;
  }
  scratch.resize(n);
  std::uint32_t* from = first;
  std::uint32_t* to = scratch.data();
  for (int shift = 0; shift < 33; shift += 11) {
    std::size_t count[2049] = {};
    for (std::size_t i = 0; i < n; ++i) ++count[((from[i] >> shift) & 2047u) + 1];
    for (int b = 0; b < 2048; ++b) count[b + 1] += count[b];
    for (std::size_t i = 0; i < n; ++i) to[count[(from[i] >> shift) & 2047u]++] = from[i];
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);  // three passes: the result is in scratch
}

// A combined request of at least this many items is assembled by several threads (assemble's
// `threads`): below it, starting them costs more than they save.
inline constexpr std::uint64_t kParallelAssemblyItems = std::uint64_t{1} << 17;

namespace detail {

// Runs a cache placement; a full cache (DataCacheTable's length_error) becomes the run's error,
// naming the parameter to raise.
template <class Place>
void place_or_fail(Place&& place) {
  try {
    place();
  } catch (const std::length_error& e) {
    throw RunError(std::string(e.what()) + "; raise --param cache_items");
  }
}

// Copies the table's rows of missing[from, to) to their places in c.upload_items (sized already).
inline void copy_missing(CombinedRequest& c, const std::vector<std::uint32_t>& missing,
                         std::uint32_t item_bytes, std::size_t from, std::size_t to) {
  for (std::size_t k = from; k < to; ++k) {
    std::memcpy(c.upload_items.data() + k * item_bytes,
                c.table.data() + std::size_t{missing[k]} * item_bytes, item_bytes);
  }
}

// Runs fn(range, first, last) over [0, n) cut into at most `threads` contiguous ranges of about
// equal weight (weight(i): the cost of index i), range 0 on the calling thread.
template <class Weight, class Fn>
void for_weighted_ranges(std::size_t n, unsigned threads, Weight&& weight, Fn&& fn) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += weight(i);
  std::vector<std::size_t> cut = {0};
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i + 1 < n && cut.size() < threads; ++i) {
    sum += weight(i);
    if (sum * threads >= total * cut.size()) cut.push_back(i + 1);
  }
  cut.push_back(n);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t + 1 < cut.size(); ++t)
    pool.emplace_back([&, t] { fn(t, cut[t], cut[t + 1]); });
  fn(std::size_t{0}, cut[0], cut[1]);
  for (std::thread& t : pool) t.join();
}

// The reuse modes with several threads: every request's hits in parallel, the misses on this
// thread in the requests' order (DataCacheTable::hits_into, place_missed), then the sorts and
// the copies of the missing items in parallel. The same slots and bytes as one thread, except
// where the cache is full (place_missed says how).
inline void assemble_reuse_parallel(CombinedRequest& c, DataCacheTable& cache,
                                    std::uint32_t item_bytes, unsigned threads) {
  const std::size_t n = c.requests.size();
  cache.grow_items(c.table.size() / item_bytes);  // every item indexes the table
  auto weight = [&](std::size_t r) -> std::uint64_t { return c.requests[r].items.size() + 1; };
  std::vector<std::vector<std::uint64_t>> missed(
      threads);  // per range: positions in slot_lists, ascending
  for_weighted_ranges(n, threads, weight,
                      [&](std::size_t range, std::size_t first, std::size_t last) {
                        for (std::size_t r = first; r < last; ++r) {
                          std::uint32_t* slots = c.slot_lists.data() + c.first_item[r];
                          cache.hits_into(c.requests[r].items, slots);
                          for (std::size_t i = 0; i < c.requests[r].items.size(); ++i) {
                            if (slots[i] == DataCacheTable::kMissing)
                              missed[range].push_back(c.first_item[r] + i);
                          }
                        }
                      });
  std::vector<std::uint32_t> missing_items;
  std::size_t r = 0;
  for (const std::vector<std::uint64_t>& positions : missed) {  // the ranges in the requests' order
    for (const std::uint64_t pos : positions) {
      while (c.first_item[r] + c.requests[r].items.size() <= pos) ++r;
      place_or_fail([&] {
        cache.place_missed(c.requests[r].items[pos - c.first_item[r]], c.slot_lists.data() + pos,
                           c.slot_lists.size(), missing_items, c.upload_slots);
      });
    }
  }
  c.upload_items.resize(missing_items.size() * item_bytes);
  const bool sorted = c.mode == TransferMode::ReuseSorted;
  for_weighted_ranges(n, threads, weight, [&](std::size_t, std::size_t first, std::size_t last) {
    std::vector<std::uint32_t> scratch;
    for (std::size_t q = first; q < last && sorted; ++q) {
      std::uint32_t* slots = c.slot_lists.data() + c.first_item[q];
      sort_slots(slots + c.requests[q].ordered_items, slots + c.requests[q].items.size(), scratch);
    }
    // This range's share of the copies: the same fraction of the missing items.
    copy_missing(c, missing_items, item_bytes, missing_items.size() * first / n,
                 missing_items.size() * last / n);
  });
}

}  // namespace detail

// `cache`: the device cache's table under reuse (nullptr for redundant). `threads`: how many
// threads may place the items of a combined request of kParallelAssemblyItems or more (reuse
// modes; the calling thread is one of them). Throws RunError when a combined request needs more
// distinct items than the cache has slots.
inline CombinedRequest assemble(std::vector<PendingRequest> requests, TransferMode mode,
                                DataCacheTable* cache, std::span<const std::byte> table,
                                std::uint32_t item_bytes, unsigned threads = 1) {
  CombinedRequest c;
  c.mode = mode;
  c.requests = std::move(requests);
  c.tasks.reserve(c.requests.size());
  c.first_item.reserve(c.requests.size());
  c.output_offset.reserve(c.requests.size());
  std::uint64_t items = 0;
  for (const PendingRequest& r : c.requests) items += r.items.size();
  c.items_read = items;
  c.table = table;
  if (mode == TransferMode::InPlace) {
    c.slot_lists.reserve(items);
  } else if (mode == TransferMode::Redundant) {
    c.upload_items.resize(items * item_bytes);
  } else {
    c.slot_lists.resize(items);
    cache->begin_request();
  }
  std::uint64_t next_item = 0, next_output = 0;
  for (const PendingRequest& r : c.requests) {
    c.first_item.push_back(next_item);
    if (mode == TransferMode::InPlace) {
      c.slot_lists.insert(c.slot_lists.end(), r.items.begin(), r.items.end());
    } else if (mode == TransferMode::Redundant) {
      for (std::size_t i = 0; i < r.items.size(); ++i) {
        std::memcpy(c.upload_items.data() + (next_item + i) * item_bytes,
                    table.data() + std::size_t{r.items[i]} * item_bytes, item_bytes);
      }
    }
    next_item += r.items.size();
    c.output_offset.push_back(next_output);
    next_output += (r.output.size() + kOutputAlign - 1) / kOutputAlign * kOutputAlign;
    c.tasks.push_back(r.task);
  }
  c.output_bytes = next_output;
  if (!uses_cache(mode)) return c;
  if (threads > 1 && items >= kParallelAssemblyItems) {
    detail::assemble_reuse_parallel(c, *cache, item_bytes, threads);
    return c;
  }
  std::vector<std::uint32_t> missing_items, scratch;
  for (std::size_t q = 0; q < c.requests.size(); ++q) {
    const PendingRequest& r = c.requests[q];
    std::uint32_t* slots = c.slot_lists.data() + c.first_item[q];
    detail::place_or_fail(
        [&] { cache->place_into(r.items, slots, missing_items, c.upload_slots); });
    if (mode == TransferMode::ReuseSorted)
      sort_slots(slots + r.ordered_items, slots + r.items.size(), scratch);
  }
  c.upload_items.resize(missing_items.size() * item_bytes);
  detail::copy_missing(c, missing_items, item_bytes, 0, missing_items.size());
  return c;
}

// Device addresses of the launch's buffers (any address space the body can read: device memory
// on the GPU, host memory on the CPU backend).
struct DeviceAreas {
  std::uintptr_t cache = 0;       // reuse: slot 0 of the cache; in place: the table
  std::uintptr_t items = 0;       // redundant: the copied items
  std::uintptr_t slot_lists = 0;  // reuse: the index buffer
  std::uintptr_t outputs = 0;
};

// Writes payload[0..3] of every task (gpulb/requests.hpp).
inline void bind(CombinedRequest& c, std::uint32_t item_bytes, const DeviceAreas& areas) {
  for (std::size_t i = 0; i < c.tasks.size(); ++i) {
    Task& t = c.tasks[i];
    const std::uint64_t first = c.first_item[i];
    if (c.mode == TransferMode::Redundant) {
      t.payload[0] = 0;
      t.payload[2] = areas.items + first * item_bytes;
    } else {
      t.payload[0] = areas.slot_lists + first * sizeof(std::uint32_t);
      t.payload[2] = areas.cache;
    }
    t.payload[1] = c.requests[i].items.size();
    t.payload[3] = areas.outputs + c.output_offset[i];
  }
}

}  // namespace gpulb::gcharm
