// The Unbalanced Tree Search benchmark (UTS): Olivier, Huan, Liu, Prins, Dinan, Sadayappan,
// Tseng, "UTS: An Unbalanced Tree Search Benchmark" (LCPC 2006), version 2.1 of its distribution
// (uts.c, rng/brg_sha1.c). Written once for the device and the host.
//
// The tree is implicit: a node is a 20-byte SHA-1 state; child i of a node has the state
// SHA-1(parent state || i as 4 big-endian bytes) (rng_spawn); the root's is SHA-1(16 zero bytes ||
// r as 4 big-endian bytes) (rng_init); a node's random number is the digest's last 4 bytes,
// big-endian, with the sign bit cleared (rng_rand), read as a probability n / 2^31 (rng_toProb).
// The number of children (uts_numChildren):
//   t=0 binomial:  the root has floor(b) children; every other node m children with probability
//                  q, else none;
//   t=1 geometric: a geometric distribution of mean b_i, truncated at 100 children, where b_i
//                  follows the shape a at depth i: 0 linear b(1 - i/d), 1 exponential
//                  b i^(-log b / log d), 2 cyclic b^sin(2 pi i / d) (none past depth 5d),
//                  3 fixed (b below depth d, then none);
//   t=2 hybrid:    geometric above depth 0.5 d, binomial below.
// One task per node; it spawns its children (each thread of a block hashes some of them).
#pragma once

#include <math.h>  // log, pow, sin, floor, ceil: host libm and CUDA's device math alike

#include <cstdint>

#include "gpulb/atomic.hpp"
#include "gpulb/task.hpp"
#include "uts/sha1.hpp"

namespace gpulb::scenarios::uts {

enum TreeType : std::uint16_t { kBinomial = 0, kGeometric = 1, kHybrid = 2 };
enum GeoShape : std::uint16_t { kLinear = 0, kExpDec = 1, kCyclic = 2, kFixed = 3 };

inline constexpr int kMaxChildren = 100;  // MAXNUMCHILDREN: the cap on children (a binomial root is exempt)
inline constexpr std::uint16_t kUtsTaskKind = 1;

// The tree parameters, as the UTS command line names them.
struct TreeParams {
  int t = kGeometric;        // -t tree type
  int a = kLinear;           // -a geometric shape function
  int d = 6;                 // -d gen_mx: depth bound of the shape functions
  double b = 4.0;            // -b b_0: root branching factor
  int r = 0;                 // -r root seed
  double q = 15.0 / 64.0;    // -q binomial: probability of having children
  int m = 4;                 // -m binomial: children of a non-leaf
  double shift_depth = 0.5;  // -f hybrid: switch to binomial below shift_depth * d
};

// A node's random state: the SHA-1 digest as five big-endian words (digest byte 4i+j is byte j,
// from the top, of word i), so that rng_spawn's message is just these words and one more.
struct RngState {
  std::uint32_t h[5];
};

GPULB_HD inline RngState rng_init(int seed) {
  std::uint32_t w[16] = {};
  w[4] = static_cast<std::uint32_t>(seed);  // 16 zero bytes, then the seed big-endian
  w[5] = 0x80000000u;                       // padding
  w[15] = 20 * 8;                           // message length in bits
  RngState s;
  sha1_one_block(w, s.h);
  return s;
}

GPULB_HD inline RngState rng_spawn(const RngState& parent, int spawn_number) {
  std::uint32_t w[16] = {};
  for (int i = 0; i < 5; ++i) w[i] = parent.h[i];
  w[5] = static_cast<std::uint32_t>(spawn_number);
  w[6] = 0x80000000u;
  w[15] = 24 * 8;
  RngState s;
  sha1_one_block(w, s.h);
  return s;
}

GPULB_HD inline int rng_rand(const RngState& s) { return static_cast<int>(s.h[4] & 0x7FFFFFFFu); }
GPULB_HD inline double rng_to_prob(int n) { return n < 0 ? 0.0 : static_cast<double>(n) / 2147483648.0; }

GPULB_HD inline int num_children_bin(const TreeParams& p, const RngState& s) {
  return rng_to_prob(rng_rand(s)) < p.q ? p.m : 0;
}

GPULB_HD inline int num_children_geo(const TreeParams& p, int depth, const RngState& s) {
  double b_i = p.b;
  if (depth > 0) {
    switch (p.a) {
      case kExpDec: b_i = p.b * pow(static_cast<double>(depth), -log(p.b) / log(static_cast<double>(p.d))); break;
      case kCyclic:
        b_i = depth > 5 * p.d ? 0.0 : pow(p.b, sin(2.0 * 3.141592653589793 * depth / static_cast<double>(p.d)));
        break;
      case kFixed: b_i = depth < p.d ? p.b : 0.0; break;
      case kLinear:
      default: b_i = p.b * (1.0 - static_cast<double>(depth) / static_cast<double>(p.d)); break;
    }
  }
  const double prob = 1.0 / (1.0 + b_i);                // geometric with mean b_i
  const double u = rng_to_prob(rng_rand(s));
  const double n = floor(log(1.0 - u) / log(1.0 - prob));  // inverse CDF
  // b_i = 0 gives log(0) = -inf and n = -0: no children. A negative b_i (the linear shape past
  // depth d, never reached) would give NaN: no children either, on every platform.
  return n > 0.0 ? static_cast<int>(n < 2147483647.0 ? n : 2147483647.0) : 0;
}

GPULB_HD inline bool hybrid_is_geo(const TreeParams& p, int depth) { return depth < p.shift_depth * p.d; }

// uts_numChildren: by the tree's type (not the node's), then the caps.
GPULB_HD inline int num_children(const TreeParams& p, int node_type, int depth, const RngState& s) {
  int n = 0;
  switch (p.t) {
    case kBinomial: n = depth == 0 ? static_cast<int>(floor(p.b)) : num_children_bin(p, s); break;
    case kGeometric: n = num_children_geo(p, depth, s); break;
    case kHybrid: n = hybrid_is_geo(p, depth) ? num_children_geo(p, depth, s) : num_children_bin(p, s); break;
    default: break;
  }
  if (depth == 0 && node_type == kBinomial) {
    const int root_bf = static_cast<int>(ceil(p.b));
    if (n > root_bf) n = root_bf;
  } else if (n > kMaxChildren) {
    n = kMaxChildren;
  }
  return n;
}

GPULB_HD inline int child_type(const TreeParams& p, int depth) {
  if (p.t == kHybrid) return hybrid_is_geo(p, depth) ? kGeometric : kBinomial;
  return p.t;
}

// Task layout: payload[0..2] = the state words (h0 | h1 << 32, h2 | h3 << 32, h4); flags = the
// node's type; depth = the node's height (the runtime sets it: parent's + 1).
GPULB_HD inline void store_state(Task& t, const RngState& s) {
  t.payload[0] = s.h[0] | (static_cast<std::uint64_t>(s.h[1]) << 32);
  t.payload[1] = s.h[2] | (static_cast<std::uint64_t>(s.h[3]) << 32);
  t.payload[2] = s.h[4];
}
GPULB_HD inline RngState load_state(const Task& t) {
  RngState s;
  s.h[0] = static_cast<std::uint32_t>(t.payload[0]);
  s.h[1] = static_cast<std::uint32_t>(t.payload[0] >> 32);
  s.h[2] = static_cast<std::uint32_t>(t.payload[1]);
  s.h[3] = static_cast<std::uint32_t>(t.payload[1] >> 32);
  s.h[4] = static_cast<std::uint32_t>(t.payload[2]);
  return s;
}

// Per-worker counts (each on its own line); summed by the host after the run.
struct alignas(kHotLine) UtsCounts {
  std::uint64_t nodes = 0;
  std::uint64_t leaves = 0;
  std::uint32_t max_depth = 0;
  std::uint64_t visited_inline = 0;  // leaves=inline: leaf children counted by their parent's task
};

struct UtsBody {
  TreeParams params;
  UtsCounts* counts;  // one per worker: ctx.rank() indexes it, only that worker writes it
  // leaves=inline: a child that has no children of its own is counted by its parent's task instead
  // of becoming a task (UTS's model, and the papers', is a task per node: leaves=task). Whether a
  // child is a leaf costs nothing extra to learn: its child count comes from the state its spawn
  // hashes anyway. Most nodes of the sample trees are leaves (80% of T1L's and T3L's), so a task's
  // fixed costs (a deque pop, two trace events, the block's barriers) are paid about 5x less often.
  bool inline_leaves = false;

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    const RngState s = load_state(task);
    const int depth = static_cast<int>(task.depth);
    // Every thread derives the count itself (cheap: no hash), so no broadcast is needed.
    const int n = num_children(params, task.flags, depth, s);
    const auto type = static_cast<std::uint16_t>(child_type(params, depth));
    auto spawn_child = [&](const RngState& c) {
      Task child;
      child.kind = kUtsTaskKind;
      child.flags = type;
      store_state(child, c);
      ctx.spawn(child);
    };
    std::uint64_t leaf_children = 0;
    if (inline_leaves) {
      // The same on every thread (a parameter), as sum_over_threads's barriers need. Thread t
      // hashes children t, t + block_size, ...
      const auto stride = static_cast<int>(ctx.block_size());
      leaf_children = ctx.sum_over_threads([&](std::uint32_t t) -> std::uint64_t {
        std::uint64_t leaves = 0;
        for (int i = static_cast<int>(t); i < n; i += stride) {
          const RngState c = rng_spawn(s, i);
          if (num_children(params, type, depth + 1, c) == 0) {
            ++leaves;
          } else {
            spawn_child(c);
          }
        }
        return leaves;
      });
    } else {
      ctx.for_each_index(n, [&](int i) { spawn_child(rng_spawn(s, i)); });  // device: thread t hashes t, t + block_size, ...
    }
    ctx.once([&] {
      UtsCounts& c = counts[ctx.rank()];
      c.nodes += 1 + leaf_children;
      c.visited_inline += leaf_children;
      c.leaves += leaf_children + (n == 0 ? 1 : 0);
      const auto deepest = static_cast<std::uint32_t>(leaf_children > 0 ? depth + 1 : depth);
      if (deepest > c.max_depth) c.max_depth = deepest;
    });
  }
};

// The root task of a tree.
inline Task root_task(const TreeParams& p) {
  Task t;
  t.id = 0;
  t.kind = kUtsTaskKind;
  t.flags = static_cast<std::uint16_t>(p.t);
  t.parent = Task::kNoParent;
  t.depth = 0;
  store_state(t, rng_init(p.r));
  return t;
}

}  // namespace gpulb::scenarios::uts
