// Connect-Four min-max search where every node of the game tree is a task: Mohan & Gopalan
// (IJISA 2014) section III. Written once for the device and the host.
//
// The board is 6 rows x 7 columns. The computer (MAX) is to move at the root (level 0); levels
// alternate MAX (even) and MIN (odd). A node is a leaf when the move that led to it won, when the
// board is full, or at level `lookahead`; otherwise it spawns one child per column that is not
// full. Leaves are scored by the paper's e(p):
//   e(p) = (open two- and three-sequences of MAX) - (open two- and three-sequences of MIN),
//   +infinity for a win of MAX, -infinity for a win of MIN,
// where an "open sequence" is read as a window of four cells in a line (horizontal, vertical or
// diagonal; 69 on the board) that holds two or three of one player's discs and none of the other's.
// Values are backed up as the paper says: each node counts the children that have reported; a MAX
// node keeps the largest value, a MIN node the smallest; the child that completes a node reports
// the node's value to its parent, and so on to the root. Ties go to the lowest column.
//
// Task layout (the paper: level, parent, value and the moves from the root): depth = level,
// parent = the parent's task id (both set by the runtime), payload[0] = the moves from the root,
// 3 bits each (move i in bits 3i..3i+2), payload[1] = the leaf value (leaves only, for traces).
// The per-node counters and values live in a table indexed by task id (NodeRecord).
#pragma once

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"

namespace gpulb::scenarios::connect4 {

inline constexpr int kRows = 6, kCols = 7;
inline constexpr int kMaxLookahead = 8;
inline constexpr std::int32_t kInfinity = 1000000;
inline constexpr std::uint16_t kConnect4TaskKind = 3;
inline constexpr std::uint32_t kRootId = 0;

enum Cell : std::uint8_t { kEmpty = 0, kMax = 1, kMin = 2 };

struct Board {
  std::uint8_t cell[kRows][kCols];  // row 0 at the bottom
  std::uint8_t height[kCols];

  GPULB_HD void clear() {
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < kCols; ++c) cell[r][c] = kEmpty;
    }
    for (int c = 0; c < kCols; ++c) height[c] = 0;
  }
  GPULB_HD bool can_play(int c) const { return height[c] < kRows; }
  GPULB_HD void play(int c, std::uint8_t who) { cell[height[c]++][c] = who; }
  GPULB_HD bool full() const {
    for (int c = 0; c < kCols; ++c) {
      if (can_play(c)) return false;
    }
    return true;
  }
};

// The 4 x 42 (direction, start) pairs; 69 of them are windows inside the board.
inline constexpr int kWindowCandidates = 4 * kRows * kCols;

// One window's contribution to e(p), and whether it is four in a row.
struct WindowScore {
  std::int32_t open = 0;   // +1 MAX open 2/3, -1 MIN open 2/3
  std::uint32_t wins = 0;  // bit kMax: four of MAX, bit kMin: four of MIN
};

GPULB_HD inline WindowScore score_window(const Board& b, int candidate) {
  const int dir = candidate / (kRows * kCols);
  const int r0 = (candidate / kCols) % kRows, c0 = candidate % kCols;
  const int dr = dir == 0 ? 0 : 1;  // horizontal, vertical, two diagonals
  const int dc = dir == 1 ? 0 : (dir == 3 ? -1 : 1);
  WindowScore s;
  const int r3 = r0 + 3 * dr, c3 = c0 + 3 * dc;
  if (r3 < 0 || r3 >= kRows || c3 < 0 || c3 >= kCols) return s;
  int mx = 0, mn = 0;
  for (int i = 0; i < 4; ++i) {
    const std::uint8_t v = b.cell[r0 + i * dr][c0 + i * dc];
    mx += v == kMax;
    mn += v == kMin;
  }
  if (mn == 0 && (mx == 2 || mx == 3)) s.open = 1;
  if (mx == 0 && (mn == 2 || mn == 3)) s.open = -1;
  if (mx == 4) s.wins |= 1u << kMax;
  if (mn == 4) s.wins |= 1u << kMin;
  return s;
}

// Rebuilds the board of a node: the root position, then the moves from the root (MAX first).
GPULB_HD inline void replay(Board& b, const Board& root, std::uint64_t moves, int level) {
  b = root;
  for (int i = 0; i < level; ++i)
    b.play(static_cast<int>((moves >> (3 * i)) & 7u), i % 2 == 0 ? kMax : kMin);
}

GPULB_HD inline int move_at(std::uint64_t moves, int i) {
  return static_cast<int>((moves >> (3 * i)) & 7u);
}

// Packed (value, column) keys, so that one atomic max/min keeps both and breaks ties to the
// lowest column: value * 16 + (15 - col) for MAX nodes, value * 16 + col for MIN nodes.
GPULB_HD inline std::int64_t max_key(std::int32_t v, int col) {
  return static_cast<std::int64_t>(v) * 16 + (15 - col);
}
GPULB_HD inline std::int64_t min_key(std::int32_t v, int col) {
  return static_cast<std::int64_t>(v) * 16 + col;
}
GPULB_HD inline std::int32_t key_value(std::int64_t k) {
  return static_cast<std::int32_t>(k >> 4);
}  // floor
GPULB_HD inline int max_key_col(std::int64_t k) { return 15 - static_cast<int>(k & 15); }
GPULB_HD inline int min_key_col(std::int64_t k) { return static_cast<int>(k & 15); }
inline constexpr std::int64_t kKeyLowest = -(std::int64_t{1} << 62),
                              kKeyHighest = std::int64_t{1} << 62;

// One node's backing-up state, indexed by task id. Written by the node's own task before its
// children are published; then only atomically, by the children.
struct NodeRecord {
  std::int64_t best;       // max_key / min_key of the children reported so far
  std::uint32_t parent;    // the parent's task id
  std::int32_t remaining;  // children that have not reported
  std::uint32_t level;     // 0 = root
  std::uint32_t column;    // the move that led here
};

GPULB_HD inline void atomic_better(std::int64_t& word, std::int64_t key, bool maximise) {
  device_atomic_ref<std::int64_t> w(word);
  std::int64_t cur = w.load(mo::relaxed);
  // relaxed: the remaining counter's acq_rel RMW below orders it for whoever completes the node.
  while (maximise ? key > cur : key < cur) {
    if (w.compare_exchange_weak(cur, key, mo::relaxed, mo::relaxed)) break;
  }
}

// A child of node `id` (at `level`) reports `value` for its move `col`; the child that completes a
// node carries the node's value up. acq_rel on `remaining`: the completing child sees every
// sibling's report (the RMWs on one counter form a release sequence).
GPULB_HD inline void back_up(NodeRecord* nodes, std::uint32_t id, std::int32_t value, int col) {
  for (;;) {
    NodeRecord& n = nodes[id];
    const bool is_max = n.level % 2 == 0;
    atomic_better(n.best, is_max ? max_key(value, col) : min_key(value, col), is_max);
    if (device_atomic_ref<std::int32_t>(n.remaining).fetch_sub(1, mo::acq_rel) != 1) return;
    if (id == kRootId) return;  // the search is over: nodes[0].best holds the answer
    value = key_value(device_atomic_ref<std::int64_t>(n.best).load(mo::relaxed));
    col = static_cast<int>(n.column);
    id = n.parent;
  }
}

struct Connect4Body {
  Board root;         // the position after the opening, MAX to move
  int lookahead;      // levels below the root
  NodeRecord* nodes;  // indexed by task id

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    const int level = static_cast<int>(task.depth);
    const std::uint64_t moves = task.payload[0];
    Board b;
    replay(b, root, moves, level);
    // The whole board once: wins and e(p); the block's threads split the 168 candidates, and one
    // sum carries three counts: (open + 1) per candidate in bits 0..11 (so -1..+1 stays
    // non-negative), windows with four MAX discs in bits 12..23, four MIN discs in bits 24..35.
    const std::uint64_t packed = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
      std::uint64_t s = 0;
      for (int w = static_cast<int>(t); w < kWindowCandidates;
           w += static_cast<int>(ctx.block_size())) {
        const WindowScore ws = score_window(b, w);
        s += static_cast<std::uint64_t>(ws.open + 1) |
             (std::uint64_t{(ws.wins >> kMax) & 1u} << 12) |
             (std::uint64_t{(ws.wins >> kMin) & 1u} << 24);
      }
      return s;
    });
    const std::int32_t e = static_cast<std::int32_t>(packed & 0xFFF) - kWindowCandidates;
    const bool max_won = ((packed >> 12) & 0xFFF) != 0, min_won = ((packed >> 24) & 0xFFF) != 0;
    const std::uint32_t wins = (max_won ? 1u << kMax : 0u) | (min_won ? 1u << kMin : 0u);
    const bool leaf = wins != 0 || level == lookahead || b.full();
    if (leaf) {
      std::int32_t value = e;
      if (wins & (1u << kMax)) value = kInfinity;  // only the last mover can have four in a row
      if (wins & (1u << kMin)) value = -kInfinity;
      ctx.once([&] {
        if (level == 0) return;  // a root that is a leaf has no parent to tell (rejected up front)
        back_up(nodes, task.parent, value, move_at(moves, level - 1));
      });
      return;
    }
    int children = 0;
    for (int c = 0; c < kCols; ++c) children += b.can_play(c);
    ctx.once([&] {
      NodeRecord& n = nodes[task.id];
      n.best = level % 2 == 0 ? kKeyLowest : kKeyHighest;
      n.parent = task.parent;
      n.remaining = children;
      n.level = static_cast<std::uint32_t>(level);
      n.column = level == 0 ? 0 : static_cast<std::uint32_t>(move_at(moves, level - 1));
    });
    ctx.for_each_thread([&](std::uint32_t t) {
      for (int c = static_cast<int>(t); c < kCols; c += static_cast<int>(ctx.block_size())) {
        if (!b.can_play(c)) continue;
        Task child;
        child.kind = kConnect4TaskKind;
        child.payload[0] = moves | (static_cast<std::uint64_t>(c) << (3 * level));
        ctx.spawn(child);
      }
    });
  }
};

}  // namespace gpulb::scenarios::connect4
