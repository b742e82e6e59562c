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

// MAXNUMCHILDREN: the cap on children (a binomial root is exempt)
inline constexpr int kMaxChildren = 100;
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

// rng_spawn as a call on the device (UtsBody, leaves=inline): the values live across it wait in
// local memory instead of raising the kernel's register count.
#if defined(__CUDACC__)
__noinline__
#endif
    GPULB_HD inline RngState
    rng_spawn_call(const RngState& parent, int spawn_number) {
  return rng_spawn(parent, spawn_number);
}

GPULB_HD inline int rng_rand(const RngState& s) { return static_cast<int>(s.h[4] & 0x7FFFFFFFu); }
GPULB_HD inline double rng_to_prob(int n) {
  return n < 0 ? 0.0 : static_cast<double>(n) / 2147483648.0;
}

GPULB_HD inline int num_children_bin(const TreeParams& p, const RngState& s) {
  return rng_to_prob(rng_rand(s)) < p.q ? p.m : 0;
}

// The geometric shape's expected children b_i at `depth` (uts_numChildren_geo).
GPULB_HD inline double geo_branching(const TreeParams& p, int depth) {
  double b_i = p.b;
  if (depth > 0) {
    switch (p.a) {
      case kExpDec:
        b_i = p.b * pow(static_cast<double>(depth), -log(p.b) / log(static_cast<double>(p.d)));
        break;
      case kCyclic:
        b_i = depth > 5 * p.d
                  ? 0.0
                  : pow(p.b, sin(2.0 * 3.141592653589793 * depth / static_cast<double>(p.d)));
        break;
      case kFixed: b_i = depth < p.d ? p.b : 0.0; break;
      case kLinear:
      default: b_i = p.b * (1.0 - static_cast<double>(depth) / static_cast<double>(p.d)); break;
    }
  }
  return b_i;
}

// log(1 - prob), prob = 1 / (1 + b_i): the geometric draw's denominator, the same for every node
// of one depth.
GPULB_HD inline double geo_log_fail(const TreeParams& p, int depth) {
  const double prob = 1.0 / (1.0 + geo_branching(p, depth));  // geometric with mean b_i
  return log(1.0 - prob);
}

// The geometric draw itself, given geo_log_fail of the node's depth.
GPULB_HD inline int num_children_geo_drawn(double log_fail, const RngState& s) {
  const double u = rng_to_prob(rng_rand(s));
  const double n = floor(log(1.0 - u) / log_fail);  // inverse CDF
  // b_i = 0 gives log(0) = -inf and n = -0: no children. A negative b_i (the linear shape past
  // depth d, never reached) would give NaN: no children either, on every platform.
  return n > 0.0 ? static_cast<int>(n < 2147483647.0 ? n : 2147483647.0) : 0;
}

GPULB_HD inline int num_children_geo(const TreeParams& p, int depth, const RngState& s) {
  return num_children_geo_drawn(geo_log_fail(p, depth), s);
}

GPULB_HD inline bool hybrid_is_geo(const TreeParams& p, int depth) {
  return depth < p.shift_depth * p.d;
}

// Whether a node at `depth` (below the root) drawn from state s surely has no children (UtsBody,
// leaves=inline): num_children's test for the binomial draws and the geometric shapes without
// pow or sin (fixed, linear); false for the others (exponential, cyclic), whose nodes stay tasks.
// A call on the device: inlined into the body beside the node's own num_children, the child's
// test took the work-stealing kernel from 64 to 94 registers a thread (ptxas, sm_90), and so from
// 32 to 20 resident blocks an SM, leaves=task runs included; as a call with pow it took 72.
#if defined(__CUDACC__)
__noinline__
#endif
    GPULB_HD inline bool
    surely_leaf(const TreeParams& p, int depth, const RngState& s) {
  const bool geometric = p.t == kGeometric || (p.t == kHybrid && hybrid_is_geo(p, depth));
  if (!geometric) return num_children_bin(p, s) == 0;
  if (p.a != kFixed && p.a != kLinear) return false;
  // geo_branching's two cases, written out so that no pow or sin is compiled in (depth > 0 here).
  const double b_i = p.a == kFixed
                         ? (depth < p.d ? p.b : 0.0)
                         : p.b * (1.0 - static_cast<double>(depth) / static_cast<double>(p.d));
  const double prob = 1.0 / (1.0 + b_i);
  return num_children_geo_drawn(log(1.0 - prob), s) == 0;
}

// uts_numChildren: by the tree's type (not the node's), then the caps.
GPULB_HD inline int num_children(const TreeParams& p, int node_type, int depth, const RngState& s) {
  int n = 0;
  switch (p.t) {
    case kBinomial: n = depth == 0 ? static_cast<int>(floor(p.b)) : num_children_bin(p, s); break;
    case kGeometric: n = num_children_geo(p, depth, s); break;
    case kHybrid:
      n = hybrid_is_geo(p, depth) ? num_children_geo(p, depth, s) : num_children_bin(p, s);
      break;
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
  // leaves=inline: leaf children counted by their parent's task (the block's threads add to it
  // with relaxed atomics); they are nodes and leaves too, which collect adds.
  std::uint64_t visited_inline = 0;
};

// The lane form (the CUDA backend's work-stealing with task_per=lane, kernels/work_stealing_lanes.cuh):
// a thread runs one node; the runtime spreads the batch's children over the block's threads. Same
// tree, same counts as operator()'s leaves=task: a task a node.
struct UtsLaneForm {
  GPULB_HD static int children(const TreeParams& p, const Task& t) {
    return num_children(p, t.flags, static_cast<int>(t.depth), load_state(t));
  }
  GPULB_HD static Task child(const TreeParams& p, const Task& parent, int i) {
    Task c;
    c.kind = kUtsTaskKind;
    c.flags = static_cast<std::uint16_t>(child_type(p, static_cast<int>(parent.depth)));
    store_state(c, rng_spawn(load_state(parent), i));
    return c;
  }
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

  // leaves=inline's children (operator()): thread t hashes children t, t + block_size, ...; a leaf
  // is counted (one relaxed atomic on this worker's own line, which the block's threads share), the
  // others are spawned (as are the leaves of the exponential and cyclic shapes: surely_leaf). Every
  // node counted here is a leaf, so one count is kept (collect adds it to nodes and leaves).
  // A call of its own on the host: inlined beside leaves=task's loop, its second copy of SHA-1's
  // unrolled rounds grew the CPU body from 7.6 to 12.8 KB and ran leaves=task 9% slower a node on
  // T3L (g++ -O3, the 2-core VM; T1L unchanged). Inlined on the device.
  template <class Ctx>
#if defined(__CUDA_ARCH__)
  __forceinline__
#else
  [[gnu::noinline]]
#endif
      GPULB_HD void
      spawn_or_count_children(Ctx& ctx, const RngState& s, int depth, std::uint16_t type,
                              int n) const {
    ctx.for_each_index(n, [&](int i) {
      const RngState c = rng_spawn_call(s, i);
      if (surely_leaf(params, depth + 1, c)) {
        device_atomic_ref<std::uint64_t>(counts[ctx.rank()].visited_inline)
            .fetch_add(1, mo::relaxed);
        return;
      }
      Task child;
      child.kind = kUtsTaskKind;
      child.flags = type;
      store_state(child, c);
      ctx.spawn(child);
    });
  }

  // --- The lane form (UtsLaneForm; the LaneBody concept of kernels/work_stealing_lanes.cuh).
  GPULB_HD const char* lane_refusal() const {
    return inline_leaves ? "uts leaves=inline counts leaves inside their parent's task, the lane "
                           "form runs a task a node: use leaves=task"
                         : nullptr;
  }
  GPULB_HD int lane_children(const Task& t) const { return UtsLaneForm::children(params, t); }
  GPULB_HD Task lane_child(const Task& parent, int i) const {
    return UtsLaneForm::child(params, parent, i);
  }
#if defined(__CUDACC__)
  // Every thread of the block, once a batch: one warp's nodes, leaves and depth are counted by its
  // lane 0 with relaxed atomics whose results go unused: fire-and-forget reductions (RED) that
  // the warp does not wait for, where a load and a store of the count would put an L2 round trip
  // into every batch (and blocks of several warps share the worker's line).
  __device__ void lane_account(std::uint32_t rank, const Task* t, int children) const {
    const unsigned all = 0xFFFFFFFFu;
    const unsigned nodes = __popc(__ballot_sync(all, t != nullptr));
    const unsigned leaves = __popc(__ballot_sync(all, t != nullptr && children == 0));
    const unsigned deepest = __reduce_max_sync(all, t != nullptr ? t->depth : 0u);
    if (threadIdx.x % 32 != 0 || nodes == 0) return;
    UtsCounts& c = counts[rank];
    device_atomic_ref<std::uint64_t>(c.nodes).fetch_add(nodes, mo::relaxed);
    device_atomic_ref<std::uint64_t>(c.leaves).fetch_add(leaves, mo::relaxed);
    device_atomic_ref<std::uint32_t>(c.max_depth).fetch_max(deepest, mo::relaxed);
  }
#endif

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    const RngState s = load_state(task);
    const int depth = static_cast<int>(task.depth);
    // Every thread derives the count itself (cheap: no hash), so no broadcast is needed.
    const int n = num_children(params, task.flags, depth, s);
    const auto type = static_cast<std::uint16_t>(child_type(params, depth));
    if (inline_leaves) {
      spawn_or_count_children(ctx, s, depth, type, n);
    } else {
      ctx.for_each_index(n, [&](int i) {  // device: thread t hashes children t, t + block_size, ...
        Task child;
        child.kind = kUtsTaskKind;
        child.flags = type;
        store_state(child, rng_spawn(s, i));
        ctx.spawn(child);
      });
    }
    ctx.once([&] {
      UtsCounts& c = counts[ctx.rank()];
      ++c.nodes;
      if (n == 0) ++c.leaves;
      // The children (spawned or counted inline) are one level down: leaves=inline counts that
      // depth here, as a counted leaf records none of its own.
      const auto deepest = static_cast<std::uint32_t>(inline_leaves && n > 0 ? depth + 1 : depth);
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
