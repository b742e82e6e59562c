// The `md2d` force body (G-Charm section 4.2, the *interact* entry method of a compute object):
// one block per compute object, one thread per target particle (the block's threads stride over
// the targets), each summing the shifted-force Lennard-Jones force of every partner within the
// cutoff. Written once for the device and the CPU.
//
// A request is one compute object of one step:
//   self (task.kind 0): the particles of one patch, each against every other of the same patch;
//   pair (task.kind 1): patch A's particles then patch B's (a neighbour of A), each particle
//                       against every particle of the other patch.
//   self piece (task.kind 2), pair piece (task.kind 3): a range of one patch's particles (the
//                       targets, first) against every particle of a patch (the partners): the
//                       scenario cuts a compute object with many targets into such pieces
//                       (parameter `piece_targets`), so that no one block runs a whole dense pair.
// Its output is one Force2 per target. Each target is written by exactly one thread, so no atomics:
// the pair computes both sides of each pair (the force on A's particle and, separately, on B's)
// rather than writing B's reaction with an atomic, as the CHARM++ code's interact updates the
// force components of both vectors.
//
// Items hold positions relative to their patch's lower corner, not to the box: floats keep
// ~1e-6 sigma of precision however large the box (1M particles span ~2200 sigma, where a box
// coordinate's float step is 2.4e-4), as NAMD does with patch-relative coordinates. The pair's
// task says where B's patch lies from A's (its periodic image: one of the 8 neighbours).
//
// Under transfer=reuse-sorted the runtime may reorder a request's items past its ordered prefix
// (gpulb/requests.hpp). A pair keeps A's items in order (ordered_items = count of A) and lets
// B's be sorted; a self request lets all of them be sorted. Each item therefore carries its index
// in its patch, and a target's output goes by that index, not by where the item sits in the list.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpulb/requests.hpp"
#include "gpulb/task.hpp"

namespace gpulb::scenarios::md2d {

// A data item: a particle, its position relative to its patch's corner, its index in the patch.
struct Particle2 {
  float x, y;
  std::uint32_t local;  // index within its patch (patch order of this step)
  std::uint32_t patch;
};
static_assert(sizeof(Particle2) == 16);

// A target's output: the force on it from the request's partners, half its pair energy with them
// (each pair's energy is counted from both sides), and how many partners it tested. The count is
// exact: the host checks that every particle tested every particle of its 3 x 3 patches once
// (a compute object run twice, or cut short, shows).
struct Force2 {
  float fx, fy;
  float energy;
  std::uint32_t tested;
};
static_assert(sizeof(Force2) == 16);

enum RequestKind : std::uint16_t { kSelf = 0, kPair = 1, kSelfPiece = 2, kPairPiece = 3 };
// payload word: A's particles (all of them for self); a piece's targets
inline constexpr std::uint32_t kCountAWord = 4;
// payload word: where B's patch lies from A's (pair); where the partners' patch lies from the
// targets' (pair piece)
inline constexpr std::uint32_t kShiftWord = 5;

// B's corner minus A's corner, in patch sides, each of -1, 0, 1: coded as (sx + 1) + 3 (sy + 1).
GPULB_HD inline std::uint64_t encode_shift(int sx, int sy) {
  return static_cast<std::uint64_t>((sx + 1) + 3 * (sy + 1));
}
GPULB_HD inline int shift_x(std::uint64_t code) { return static_cast<int>(code % 3) - 1; }
GPULB_HD inline int shift_y(std::uint64_t code) { return static_cast<int>(code / 3 % 3) - 1; }

struct Md2dBody {
  float side;       // a patch's side (sigma)
  float cutoff2;    // rc^2
  float cutoff;     // rc
  float force_rc;   // F_LJ(rc), the shift that takes the force to zero at rc
  float energy_rc;  // U_LJ(rc)

  template <class Ctx>
  GPULB_HD void operator()(Ctx& ctx, const Task& task) const {
    const std::uint32_t n = request_item_count(task);
    const auto count_a = static_cast<std::uint32_t>(task.payload[kCountAWord]);
    Force2* out = request_output<Force2>(task);
    if (task.kind == kSelfPiece || task.kind == kPairPiece) {
      run_piece(ctx, task, n, count_a, out);
      return;
    }
    if (task.kind == kSelf) {
      ctx.for_each_index(static_cast<int>(n), [&](int t) {
        const auto i = static_cast<std::uint32_t>(t);
        const Particle2 p = request_item<Particle2>(task, i);
        Force2 f{0, 0, 0, 0};
        for (std::uint32_t j = 0; j < n; ++j) {
          if (j != i) add(f, p, request_item<Particle2>(task, j), 0.0f, 0.0f);
        }
        accumulate(out[p.local], f);
      });
      return;
    }
    // Pair: B's particle q is seen from A's frame at q + offset.
    const float ox = static_cast<float>(shift_x(task.payload[kShiftWord])) * side;
    const float oy = static_cast<float>(shift_y(task.payload[kShiftWord])) * side;
    ctx.for_each_index(static_cast<int>(n), [&](int t) {
      const auto i = static_cast<std::uint32_t>(t);
      const Particle2 p = request_item<Particle2>(task, i);
      Force2 f{0, 0, 0, 0};
      if (i < count_a) {
        for (std::uint32_t j = count_a; j < n; ++j)
          add(f, p, request_item<Particle2>(task, j), ox, oy);
        accumulate(out[i], f);
      } else {
        for (std::uint32_t j = 0; j < count_a; ++j)
          add(f, p, request_item<Particle2>(task, j), -ox, -oy);
        accumulate(out[count_a + p.local], f);
      }
    });
  }

 private:
  // A piece: targets [0, t) in order (their outputs go by position), partners [t, n) in any order.
  // Each target meets the partners in the order a whole object's target meets them (its partner
  // patch in item order), so cutting an object into pieces leaves every force the same bits.
  template <class Ctx>
  GPULB_HD void run_piece(Ctx& ctx, const Task& task, std::uint32_t n, std::uint32_t targets,
                          Force2* out) const {
    const bool self = task.kind == kSelfPiece;
    const float ox = self ? 0.0f : static_cast<float>(shift_x(task.payload[kShiftWord])) * side;
    const float oy = self ? 0.0f : static_cast<float>(shift_y(task.payload[kShiftWord])) * side;
    ctx.for_each_index(static_cast<int>(targets), [&](int t) {
      const auto i = static_cast<std::uint32_t>(t);
      const Particle2 p = request_item<Particle2>(task, i);
      Force2 f{0, 0, 0, 0};
      for (std::uint32_t j = targets; j < n; ++j) {
        const Particle2 q = request_item<Particle2>(task, j);
        if (!self || q.local != p.local) add(f, p, q, ox, oy);
      }
      accumulate(out[i], f);
    });
  }

  // The shifted-force LJ (sigma = epsilon = 1) of q, seen at q + (ox, oy), on p.
  GPULB_HD void add(Force2& f, const Particle2& p, const Particle2& q, float ox, float oy) const {
    const float dx = p.x - (q.x + ox), dy = p.y - (q.y + oy);
    const float r2 = dx * dx + dy * dy;
    f.tested += 1;
    if (r2 >= cutoff2) return;
    const float inv2 = 1.0f / r2;
    const float s6 = inv2 * inv2 * inv2;
    const float r = sqrtf(r2);
    const float f_over_r = 24.0f * s6 * (2.0f * s6 - 1.0f) * inv2 - force_rc / r;
    f.fx += f_over_r * dx;
    f.fy += f_over_r * dy;
    f.energy += 0.5f * (4.0f * s6 * (s6 - 1.0f) - energy_rc + (r - cutoff) * force_rc);
  }

  // The output starts zeroed and has one writer: adding (not storing) makes a request that ran
  // twice visible in the count.
  GPULB_HD static void accumulate(Force2& out, const Force2& f) {
    out.fx += f.fx;
    out.fy += f.fy;
    out.energy += f.energy;
    out.tested += f.tested;
  }
};

}  // namespace gpulb::scenarios::md2d
