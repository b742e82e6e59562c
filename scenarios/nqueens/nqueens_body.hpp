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

// Solutions that complete `start` (rows `row`..n-1), sequentially. Iterative, with an explicit
// stack of at most kMaxN placements: written as a recursion it counted 269,984 of the 365,596
// solutions of n = 14, cutoff = 5 (9 rows deep) on an H100, with no CUDA error, while n = 10
// verified; the likely cause is the recursion outgrowing the default per-thread GPU stack.
GPULB_HD inline std::uint64_t count_completions(const Placement& start, int row, int n) {
  if (row == n) return 1;
  const std::uint32_t full = (1u << n) - 1;
  const int rows_left = n - row;  // stack level d places row `row + d`
  Placement stack[kMaxN];
  std::uint32_t avail[kMaxN];
  stack[0] = start;
  avail[0] = ~(start.cols | start.left | start.right) & full;
  std::uint64_t total = 0;
  int d = 0;
  while (d >= 0) {
    if (avail[d] == 0) {
      --d;  // every column of this row tried: back to the row above
      continue;
    }
    const std::uint32_t bit = avail[d] & (0u - avail[d]);
    avail[d] ^= bit;
    const Placement& p = stack[d];
    const Placement q{p.cols | bit, ((p.left | bit) << 1) & full, (p.right | bit) >> 1};
    if (d + 1 == rows_left) {
      ++total;  // the last row is placed: a solution
      continue;
    }
    ++d;
    stack[d] = q;
    avail[d] = ~(q.cols | q.left | q.right) & full;
  }
  return total;
}

// Rows below `row` whose placements a block's threads share at the cutoff (NQueensBody): the
// fewest, from 1 to 3, whose n^rows candidates give every thread 16 or more, and no row past n.
GPULB_HD inline int spread_rows(int n, int row, std::uint32_t block_size) {
  int rows = 1;
  std::uint64_t candidates = static_cast<std::uint64_t>(n);
  while (rows < 3 && row + rows < n && candidates < 16ull * block_size) {
    candidates *= static_cast<std::uint64_t>(n);
    ++rows;
  }
  return rows;
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
      // Sequential from here on. The block's threads share the placements of the next `spread`
      // rows: candidate i names one column per row (its base-n digits), thread t takes candidates
      // t, t + block_size, ... and completes the valid ones. With one row (the first version) a
      // block of 32 threads had about n / 3 busy lanes, each on a subtree of a different size; the
      // finer split keeps most lanes busy until the task's end.
      const int spread = spread_rows(n, row, ctx.block_size());
      std::uint32_t candidates = 1;
      for (int k = 0; k < spread; ++k) candidates *= static_cast<std::uint32_t>(n);
      solutions = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
        std::uint64_t s = 0;
        for (std::uint32_t i = t; i < candidates; i += ctx.block_size()) {
          Placement q = p;
          std::uint32_t digits = i;
          bool valid = true;
          for (int k = 0; k < spread && valid; ++k) {
            const std::uint32_t c = digits % static_cast<std::uint32_t>(n);
            digits /= static_cast<std::uint32_t>(n);
            valid = q.free(c);
            if (valid) q = q.place(c, full);
          }
          if (valid) s += count_completions(q, row + spread, n);
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
