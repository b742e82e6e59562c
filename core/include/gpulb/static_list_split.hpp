// The static task list across GPUs (kernels/include/gpulb/kernels/detail/multi_gpu_sl_run.cuh):
// between two generations, where each GPU's share of the next generation comes from. A pure
// function of the counts, so the CPU tests check every layout it can choose.
//
// DEPARTURE: Cederman & Tsigas, and Mohan & Gopalan after them, ran the static list on one GPU.
// Across N GPUs each GPU runs its share of a generation and appends the children to its own output
// array; the next generation is the concatenation of those arrays (GPU 0's first), split into N
// even contiguous shares (the first C mod N GPUs get one task more). A task whose position falls
// in another GPU's share moves there; the others stay where they are.
//
// Where a share goes. GPU g's output array holds its segment [off, off + c) of the concatenation
// at slots [0, c); its share [S, E) keeps [lo, hi) = [S, E) n [off, off + c) at slots [a, b) =
// [lo - off, hi - off). The share is laid out contiguously, because the kernel reads in[0, n):
//  - in place, in the output array from slot a: the kept tasks do not move, and the tasks that
//    arrive fill [b, a + s). Only where those slots are free: nothing of the segment lies beyond b
//    (b == c) or nothing arrives (s == b - a), and a + s <= the array's capacity. Then no slot is written while
//    another GPU may still read it (the slots that leave are [0, a) and [b, c)).
//  - otherwise in the GPU's other array (its input array of the generation that just ended, read
//    by nobody now), from slot 0: the kept tasks are copied there too (on the GPU), then the rest.
//    The caller makes that array hold the share (it may be reallocated: its tasks are spent).
// With two GPUs every share is in place (GPU 0's share starts its segment, GPU 1's ends its
// segment); the second layout arises only for a GPU in the middle of three or more.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace gpulb {

// `count` tasks from GPU `from`'s output array, slots [from_slot, from_slot + count), to the
// receiving GPU's target array at slots [to_slot, to_slot + count).
struct GenerationCopy {
  std::uint32_t from = 0;
  std::uint32_t from_slot = 0;
  std::uint32_t to_slot = 0;
  std::uint32_t count = 0;
  bool operator==(const GenerationCopy&) const = default;
};

// One GPU's share of the next generation.
struct GenerationShare {
  bool in_place = true;     // in the GPU's output array (true), or assembled in its other array
  std::uint32_t first = 0;  // the share's first slot in that array
  std::uint32_t count = 0;  // its tasks
  std::vector<GenerationCopy> copies;  // in order; from == this GPU: a copy on the GPU itself
  std::uint64_t received = 0;          // tasks that come from other GPUs
};

// `produced[g]`: the children in GPU g's output array, of `capacity[g]` slots (each produced <=
// its capacity: a GPU's output array grows before its generation ends). One share per GPU.
inline std::vector<GenerationShare> split_generation(std::span<const std::uint32_t> produced,
                                                     std::span<const std::uint32_t> capacity) {
  const auto gpus = static_cast<std::uint32_t>(produced.size());
  if (capacity.size() != gpus) throw std::logic_error("split_generation: one capacity per GPU");
  std::vector<std::uint64_t> off(gpus + 1, 0);
  for (std::uint32_t g = 0; g < gpus; ++g) {
    if (produced[g] > capacity[g])
      throw std::logic_error("split_generation: a GPU produced more tasks than its array holds");
    off[g + 1] = off[g] + produced[g];
  }
  const std::uint64_t total = off[gpus];
  std::vector<GenerationShare> shares(gpus);
  if (gpus == 0) return shares;
  // Global positions [x, y) of the concatenation to slots from `to` on, split by source GPU.
  auto copy_range = [&](GenerationShare& share, std::uint32_t self, std::uint64_t x,
                        std::uint64_t y, std::uint64_t& to) {
    for (std::uint32_t h = 0; h < gpus && x < y; ++h) {
      const std::uint64_t from = std::max(x, off[h]), until = std::min(y, off[h + 1]);
      if (from >= until) continue;
      share.copies.push_back({h, static_cast<std::uint32_t>(from - off[h]),
                              static_cast<std::uint32_t>(to),
                              static_cast<std::uint32_t>(until - from)});
      if (h != self) share.received += until - from;
      to += until - from;
    }
  };
  std::uint64_t start = 0;
  for (std::uint32_t g = 0; g < gpus; ++g) {
    const std::uint64_t s = total / gpus + (g < total % gpus ? 1 : 0);
    const std::uint64_t end = start + s;
    GenerationShare& share = shares[g];
    share.count = static_cast<std::uint32_t>(s);
    const std::uint64_t lo = std::max(start, off[g]), hi = std::min(end, off[g + 1]);
    const bool kept = lo < hi;
    const std::uint64_t a = kept ? lo - off[g] : 0, b = kept ? hi - off[g] : 0;
    const std::uint64_t c = produced[g];
    share.in_place = s == 0 || (a + s <= capacity[g] && (b == c || s == b - a));
    if (share.in_place) {
      share.first = static_cast<std::uint32_t>(a);
      std::uint64_t to = b;
      if (kept) {
        copy_range(share, g, start, lo, to);
        copy_range(share, g, hi, end, to);
      } else {
        copy_range(share, g, start, end, to);
      }
    } else {
      share.first = 0;
      std::uint64_t to = 0;
      copy_range(share, g, start, end, to);
    }
    start = end;
  }
  return shares;
}

// Every GPU's output array of `capacity` slots.
inline std::vector<GenerationShare> split_generation(std::span<const std::uint32_t> produced,
                                                     std::uint32_t capacity) {
  const std::vector<std::uint32_t> each(produced.size(), capacity);
  return split_generation(produced, each);
}

}  // namespace gpulb
