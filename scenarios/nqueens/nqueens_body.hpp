// N-Queens as in the Barcelona OpenMP Tasks Suite (BOTS, Duran et al. 2009; the version Grossman
// ran on his GPU work-stealing runtime): a task per partial placement down to a cutoff depth,
// each spawning one child per column where its row's queen can go; below the cutoff the placement
// is completed sequentially. Written once for the device and the host.
//
// A placement of the first `row` queens is three bit masks over the columns: taken columns, and
// the squares of the next row attacked along each diagonal (the bitboard form of BOTS's ok()).
// Task layout: depth = row (queens placed; the runtime sets depth = parent's + 1),
// payload[0] = columns, payload[1] = left diagonals, payload[2] = right diagonals.
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb::scenarios::nqueens {

inline constexpr std::uint16_t kNQueensTaskKind = 2;
inline constexpr int kMaxN = 20;

struct Placement {
  std::uint32_t cols = 0, left = 0, right = 0;

  GPULB_HD bool free(std::uint32_t c) const { return ((cols | left | right) >> c & 1u) == 0; }
  GPULB_HD Placement place(std::uint32_t c, std::uint32_t full) const {
    const std::uint32_t bit = 1u << c;
    return {cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1};
  }
};

// Solutions that complete `p` (rows `row`..n-1), sequentially; recursion depth at most n.
GPULB_HD inline std::uint64_t count_completions(const Placement& p, int row, int n) {
  if (row == n) return 1;
  const std::uint32_t full = (1u << n) - 1;
  std::uint64_t total = 0;
  std::uint32_t avail = ~(p.cols | p.left | p.right) & full;
  while (avail != 0) {
    const std::uint32_t bit = avail & (0u - avail);
    avail ^= bit;
    const Placement q{p.cols | bit, ((p.left | bit) << 1) & full, (p.right | bit) >> 1};
    total += count_completions(q, row + 1, n);
  }
  return total;
}

struct alignas(kHotLine) NQueensCounts {
  std::uint64_t solutions = 0;
  std::uint64_t tasks = 0;
};

GPULB_HD inline void store(Task& t, const Placement& p) {
  t.payload[0] = p.cols;
  t.payload[1] = p.left;
  t.payload[2] = p.right;
}
GPULB_HD inline Placement load(const Task& t) {
  return {static_cast<std::uint32_t>(t.payload[0]), static_cast<std::uint32_t>(t.payload[1]),
          static_cast<std::uint32_t>(t.payload[2])};
}

struct NQueensBody {
  int n;
  int cutoff;               // rows placed by tasks; the rest sequentially
  NQueensCounts* counts;    // one per worker (ctx.rank())

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    const Placement p = load(task);
    const int row = static_cast<int>(task.depth);
    const std::uint32_t full = (1u << n) - 1;
    std::uint64_t solutions = 0;
    if (row == n) {
      solutions = 1;
    } else if (row < cutoff) {
      // A child per free column; thread t of the block tries columns t, t + block_size, ...
      ctx.for_each_thread([&](std::uint32_t t) {
        for (std::uint32_t c = t; c < static_cast<std::uint32_t>(n); c += ctx.block_size()) {
          if (!p.free(c)) continue;
          Task child;
          child.kind = kNQueensTaskKind;
          store(child, p.place(c, full));
          ctx.spawn(child);
        }
      });
    } else {
      // Sequential from here on; the block's threads split the next row's columns.
      solutions = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
        std::uint64_t s = 0;
        for (std::uint32_t c = t; c < static_cast<std::uint32_t>(n); c += ctx.block_size()) {
          if (p.free(c)) s += count_completions(p.place(c, full), row + 1, n);
        }
        return s;
      });
    }
    ctx.once([&] {
      NQueensCounts& k = counts[ctx.rank()];
      k.solutions += solutions;
      ++k.tasks;
    });
  }
};

}  // namespace gpulb::scenarios::nqueens
