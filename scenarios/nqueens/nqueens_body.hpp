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

// How a task at the cutoff shares its sequential rest among its block's threads (--param split).
enum class LeafSplit : std::uint8_t { Pairs, Row };

struct NQueensBody {
  int n;
  int cutoff;               // rows placed by tasks; the rest sequentially
  LeafSplit split;
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
    } else if (split == LeafSplit::Row || row + 1 == n || !Ctx::kThreadsRunTogether) {
      // A thread per column of the next row (one row left: each free column is a solution). Where
      // a block's threads are one loop (the CPU backend), the pairs below would only add n * n
      // slot checks (15% on n = 14) to the same subtrees: the columns' loop is the cheaper order.
      solutions = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
        std::uint64_t s = 0;
        for (std::uint32_t c = t; c < static_cast<std::uint32_t>(n); c += ctx.block_size()) {
          if (p.free(c)) s += count_completions(p.place(c, full), row + 1, n);
        }
        return s;
      });
    } else {
      // Sequential from here on. The block's threads take the placements of the next two rows in
      // turn, each completing its own sequentially. Splitting one row's n columns left most of a
      // warp idle (at most 16 of 32 lanes for n = 16, fewer where columns are taken) and a block
      // as slow as its largest subtree. Here slot k of the n * n is the pair (f, (s + f) mod n)
      // for f = k / n, s = k % n, and thread t takes slots t, t + B, t + 2B, ... (B the block's
      // threads). The rotation by f matters where n divides B (n = 16, B = 32): k % n is then the
      // same on every slot of a thread, and a thread whose one second column was taken would
      // idle. The slot steps by B / n and B % n with a carry: two divisions a thread, not two a
      // slot.
      const std::uint32_t un = static_cast<std::uint32_t>(n), threads = ctx.block_size();
      const std::uint32_t step_first = threads / un, step_second = threads % un;  // a stride of B slots
      solutions = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
        std::uint64_t s = 0;
        std::uint32_t first = t / un, offset = t % un;
        while (first < un) {
          if (p.free(first)) {
            const std::uint32_t second = offset + first < un ? offset + first : offset + first - un;
            const Placement q = p.place(first, full);
            if (q.free(second)) s += count_completions(q.place(second, full), row + 2, n);
          }
          first += step_first;
          offset += step_second;
          if (offset >= un) {
            offset -= un;
            ++first;
          }
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
