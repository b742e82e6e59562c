// N-Queens as in the Barcelona OpenMP Tasks Suite (BOTS, Duran et al. 2009; the version Grossman
// ran on his GPU work-stealing runtime): a task per partial placement down to a cutoff depth,
// each spawning one child per column where its row's queen can go; below the cutoff the placement
// is completed sequentially. Written once for the device and the host.
//
// A placement of the first `row` queens is three bit masks over the columns: taken columns, and
// the squares of the next row attacked along each diagonal (the bitboard form of BOTS's ok()).
// Task layout: depth = row (queens placed; the runtime sets depth = parent's + 1),
// payload[0] = columns, payload[1] = left diagonals, payload[2] = right diagonals, payload[3] = the
// task's weight (below; 0 reads as 1).
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

// The same count shared among `lanes` threads that run in lockstep (a GPU warp), thread `lane`
// taking its share: one depth-first walk of the rest, in which every thread walks the first
// `deal_depth` rows below `start` alike and the placements it meets at that depth are dealt out in
// turn (the k-th to thread k mod lanes); a thread descends only below its own. Each thread thus
// completes many subtrees of one size class instead of one pair's subtree an iteration (the
// `pairs` split this replaced: a warp waited on its largest lane at every iteration, 16% of its
// lanes' steps useful on n = 16 against 72% here, counted by a host model of the walk), and the
// walk is one loop whose steps are the same instructions on every lane.
// The walk keeps one placement and undoes a row on the way back (a stack of two words a row, not
// four): the diagonals are kept unmasked and wide, left at bits 0.. and right at bits 32.. of
// 64-bit words, so a shift never drops a bit and the undo is exact for n <= 20.
GPULB_HD inline std::uint64_t count_completions_dealt(const Placement& start, int row, int n,
                                                      int deal_depth, std::uint32_t lane,
                                                      std::uint32_t lanes) {
  const int rows_left = n - row;
  if (rows_left == 0) return lane == 0 ? 1 : 0;
  if (deal_depth <= 0) return lane == 0 ? count_completions(start, row, n) : 0;
  if (deal_depth > rows_left) deal_depth = rows_left;
  const std::uint32_t full = (1u << n) - 1;
  std::uint32_t cols = start.cols;
  std::uint64_t left = start.left, right = std::uint64_t{start.right} << 32;
  std::uint32_t avail[kMaxN], placed[kMaxN];
  avail[0] = ~(cols | start.left | start.right) & full;
  std::uint64_t total = 0;
  std::uint32_t turn = 0;  // whose the next placement at the deal depth is
  int d = 0;               // rows placed below `start`
  for (;;) {
    if (avail[d] == 0) {
      if (d == 0) break;
      --d;  // every column of this row tried: undo the row above's queen
      const std::uint32_t bit = placed[d];
      cols ^= bit;
      left = (left >> 1) ^ bit;
      right = (right << 1) ^ (std::uint64_t{bit} << 32);
      continue;
    }
    const std::uint32_t bit = avail[d] & (0u - avail[d]);
    avail[d] ^= bit;
    if (d + 1 == deal_depth) {
      const bool mine = turn == lane;
      turn = turn + 1 == lanes ? 0 : turn + 1;
      if (!mine) continue;
    }
    if (d + 1 == rows_left) {
      ++total;  // the last row is placed: a solution
      continue;
    }
    placed[d] = bit;
    cols |= bit;
    left = (left | bit) << 1;
    right = (right | std::uint64_t{bit} << 32) >> 1;
    ++d;
    avail[d] =
        ~(cols | static_cast<std::uint32_t>(left) | static_cast<std::uint32_t>(right >> 32)) & full;
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
enum class LeafSplit : std::uint8_t { Deal, Row };

// A task's weight (payload[3]): the solutions it stands for per solution it counts. With the
// mirror symmetry (--param symmetry=mirror) the root places the first queen in the left half
// only: a board and its mirror image are distinct solutions, one with that queen left of the
// middle and one right of it, so a left placement's solutions count twice; the middle column of
// an odd board is its own mirror and counts once. Not in BOTS, which walks the whole tree: the
// usual first step of every fast solver, it halves the work (docs/papers.md).
GPULB_HD inline std::uint64_t weight(const Task& t) { return t.payload[3] == 0 ? 1 : t.payload[3]; }

// The root's columns under the mirror symmetry: the left half, and the middle of an odd board.
GPULB_HD inline int root_columns(int n, bool mirror) { return mirror ? (n + 1) / 2 : n; }
GPULB_HD inline std::uint64_t root_weight(int column, int n, bool mirror) {
  return mirror && 2 * column + 1 != n ? 2 : 1;
}

struct NQueensBody {
  int n;
  int cutoff;  // rows placed by tasks; the rest sequentially
  LeafSplit split;
  int deal_depth;         // split=deal: the rows below the cutoff whose placements are dealt out
  bool mirror;            // the root places its queen in the left half (weight above)
  NQueensCounts* counts;  // one per worker (ctx.rank())

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
      const std::uint32_t columns =
          static_cast<std::uint32_t>(row == 0 ? root_columns(n, mirror) : n);
      ctx.for_each_thread([&](std::uint32_t t) {
        for (std::uint32_t c = t; c < columns; c += ctx.block_size()) {
          if (!p.free(c)) continue;
          Task child;
          child.kind = kNQueensTaskKind;
          store(child, p.place(c, full));
          child.payload[3] = row == 0 ? root_weight(static_cast<int>(c), n, mirror) : weight(task);
          ctx.spawn(child);
        }
      });
    } else if (split == LeafSplit::Row || !Ctx::kThreadsRunTogether) {
      // A thread per column of the next row. Where a block's threads are one loop (the CPU
      // backend) this is the cheaper order: dealing would walk the first rows once a thread.
      solutions = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
        std::uint64_t s = 0;
        for (std::uint32_t c = t; c < static_cast<std::uint32_t>(n); c += ctx.block_size()) {
          if (p.free(c)) s += count_completions(p.place(c, full), row + 1, n);
        }
        return s;
      });
    } else {
      solutions = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
        return count_completions_dealt(p, row, n, deal_depth, t, ctx.block_size());
      });
    }
    ctx.once([&] {
      NQueensCounts& k = counts[ctx.rank()];
      k.solutions += solutions * weight(task);
      ++k.tasks;
    });
  }
};

}  // namespace gpulb::scenarios::nqueens
