#include "md2d/md2d_system.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpulb/errors.hpp"

namespace gpulb::scenarios::md2d {

std::uint32_t Box::patch_of(Vec2 p) const {
  // Positions lie in [0, length); the min() keeps one that rounds to `length` in the last patch.
  const auto cx = std::min(patches - 1, static_cast<std::uint32_t>(std::max(0.0, p.x / side)));
  const auto cy = std::min(patches - 1, static_cast<std::uint32_t>(std::max(0.0, p.y / side)));
  return cx + patches * cy;
}

std::uint32_t Box::neighbour(std::uint32_t patch, int sx, int sy) const {
  const auto n = static_cast<int>(patches);
  const int cx = (static_cast<int>(patch % patches) + sx + n) % n;
  const int cy = (static_cast<int>(patch / patches) + sy + n) % n;
  return static_cast<std::uint32_t>(cx + n * cy);
}

std::uint32_t Box::auto_patches(double length, std::uint32_t particles, double cutoff) {
  const double density = particles / (length * length);
  const double side = std::max(cutoff, std::sqrt(32.0 / density));
  return std::max<std::uint32_t>(3, static_cast<std::uint32_t>(length / side));
}

ComputeObject compute_object(const Box& box, std::uint32_t a, std::uint32_t k) {
  if (k == 0) return {a, a, 0, 0, true};
  const int sx = kHalfShell[k - 1][0], sy = kHalfShell[k - 1][1];
  return {a, box.neighbour(a, sx, sy), sx, sy, false};
}

ShiftedLj::ShiftedLj(double cutoff) : rc(cutoff), rc2(cutoff * cutoff) {
  const double s6 = 1.0 / (rc2 * rc2 * rc2);
  force_rc = 24.0 * s6 * (2.0 * s6 - 1.0) / rc;
  energy_rc = 4.0 * s6 * (s6 - 1.0);
}

void ShiftedLj::at(double r2, double& f_over_r, double& energy) const {
  const double inv2 = 1.0 / r2, s6 = inv2 * inv2 * inv2, r = std::sqrt(r2);
  f_over_r = 24.0 * s6 * (2.0 * s6 - 1.0) * inv2 - force_rc / r;
  energy = 4.0 * s6 * (s6 - 1.0) - energy_rc + (r - rc) * force_rc;
}

std::uint64_t Binning::bin(const Box& box, const std::vector<Vec2>& pos) {
  const bool first = patch.size() != pos.size();
  std::uint64_t migrated = 0;
  patch.resize(pos.size());
  start.assign(box.count() + 1, 0);
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const std::uint32_t p = box.patch_of(pos[i]);
    migrated += !first && p != patch[i];
    patch[i] = p;
    ++start[p + 1];
  }
  for (std::uint32_t p = 0; p < box.count(); ++p) start[p + 1] += start[p];
  order.resize(pos.size());
  std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < pos.size(); ++i)
    order[next[patch[i]]++] = static_cast<std::uint32_t>(i);
  return migrated;
}

double periodic_distance(Vec2 a, Vec2 b, double length) {
  double dx = a.x - b.x, dy = a.y - b.y;
  dx -= length * std::round(dx / length);
  dy -= length * std::round(dy / length);
  return std::sqrt(dx * dx + dy * dy);
}

// ---- initial state -----------------------------------------------------------------------------

namespace {

// Random sequential addition with a cell grid of cells no smaller than kMinDistance: a candidate
// is kept when no particle of its 3 x 3 cells lies within kMinDistance (periodic).
class Placer {
 public:
  explicit Placer(double length)
      : length_(length),
        cells_(std::max<std::uint32_t>(1, static_cast<std::uint32_t>(length / kMinDistance))) {
    cell_ = length_ / cells_;
    head_.assign(std::size_t{cells_} * cells_, -1);
  }
  bool try_add(Vec2 p, std::vector<Vec2>& pos) {
    const auto cx = static_cast<int>(std::min<double>(cells_ - 1, p.x / cell_));
    const auto cy = static_cast<int>(std::min<double>(cells_ - 1, p.y / cell_));
    const int n = static_cast<int>(cells_);
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int c = (cx + dx + n) % n + n * ((cy + dy + n) % n);
        for (std::int32_t j = head_[static_cast<std::size_t>(c)]; j >= 0;
             j = next_[static_cast<std::size_t>(j)]) {
          if (periodic_distance(p, pos[static_cast<std::size_t>(j)], length_) < kMinDistance)
            return false;
        }
      }
    }
    const auto c = static_cast<std::size_t>(cx + n * cy);
    next_.push_back(head_[c]);
    head_[c] = static_cast<std::int32_t>(pos.size());
    pos.push_back(p);
    return true;
  }

 private:
  double length_;
  std::uint32_t cells_;
  double cell_ = 0;
  std::vector<std::int32_t> head_, next_;
};

double wrap(double x, double length) {
  // Inside the box (nearly every particle, every step) fmod would return x itself: skip it (it
  // was most of the integrator's time).
  if (x >= 0 && x < length) return x;
  x = std::fmod(x, length);
  if (x < 0) x += length;
  return x >= length ? 0.0 : x;
}

}  // namespace

State initial_state(const Md2dConfig& config, const Box& box) {
  std::mt19937_64 rng(config.seed);
  std::uniform_real_distribution<double> u(0.0, box.length);
  State s;
  s.pos.reserve(config.particles);
  Placer placer(box.length);
  const auto in_clusters =
      static_cast<std::uint32_t>(std::llround(config.contrast * config.particles));
  const std::uint32_t clusters = in_clusters > 0 ? std::max<std::uint32_t>(1, config.clusters) : 0;
  // A cluster's width puts its peak density near 0.4 (a packing fraction of 0.31 at diameter 1,
  // well below the 0.55 where random addition jams): N_c / (2 pi w^2) = 0.4.
  std::vector<Vec2> centres(clusters);
  for (Vec2& c : centres) c = {u(rng), u(rng)};
  constexpr std::uint32_t kTries = 20000;
  auto fail = [&](std::uint32_t placed) {
    throw ConfigError("could not place particle " + std::to_string(placed + 1) + " of " +
                      std::to_string(config.particles) + " at least 1 sigma from the others (box " +
                      std::to_string(box.length) +
                      " sigma): lower parameter 'density' or 'contrast'");
  };
  for (std::uint32_t k = 0; k < clusters; ++k) {
    const std::uint32_t n = in_clusters / clusters + (k < in_clusters % clusters ? 1 : 0);
    std::normal_distribution<double> g(0.0, std::sqrt(n / (2 * M_PI * 0.4)));
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t t = 0;
      while (!placer.try_add(
          {wrap(centres[k].x + g(rng), box.length), wrap(centres[k].y + g(rng), box.length)},
          s.pos)) {
        if (++t == kTries) fail(static_cast<std::uint32_t>(s.pos.size()));
      }
    }
  }
  while (s.pos.size() < config.particles) {
    std::uint32_t t = 0;
    while (!placer.try_add({u(rng), u(rng)}, s.pos)) {
      if (++t == kTries) fail(static_cast<std::uint32_t>(s.pos.size()));
    }
  }
  std::normal_distribution<double> maxwell(0.0, std::sqrt(config.temperature));
  s.vel.resize(s.pos.size());
  Vec2 mean;
  for (Vec2& v : s.vel) {
    v = {maxwell(rng), maxwell(rng)};
    mean.x += v.x, mean.y += v.y;
  }
  mean.x /= static_cast<double>(s.vel.size()), mean.y /= static_cast<double>(s.vel.size());
  for (Vec2& v : s.vel) v.x -= mean.x, v.y -= mean.y;
  return s;
}

// ---- integrator --------------------------------------------------------------------------------

double leapfrog_step(State& s, const std::vector<Vec2>& force, double dt, bool first,
                     double length) {
  double kinetic = 0;
  const double half = 0.5 * dt;
  for (std::size_t i = 0; i < s.pos.size(); ++i) {
    Vec2& v = s.vel[i];
    if (!first) v.x += force[i].x * half, v.y += force[i].y * half;  // v(t)
    kinetic += 0.5 * (v.x * v.x + v.y * v.y);
    v.x += force[i].x * half, v.y += force[i].y * half;  // v(t + dt/2)
    s.pos[i] = {wrap(s.pos[i].x + v.x * dt, length), wrap(s.pos[i].y + v.y * dt, length)};
  }
  return kinetic;
}

// ---- the reference -----------------------------------------------------------------------------

// Each particle sums the force of every partner in its 3 x 3 patches, so the patches are shared
// among host threads without atomics (each writes its own particles' forces); every pair is
// therefore computed from both sides, and its energy and count halved. (The two sides' distances
// round differently across a periodic boundary, so a pair within an ulp of the cutoff may count
// from one side only: half a pair in the reported count, far inside the check's tolerance.) Sequentially and once a
// pair, the check of a run of 100,000 particles in 7 x 7 patches (5 steps) took ~12 s on an
// H100's host, longer than the run it checks: the bench waited on its checks.
double reference_forces(const Box& box, const ShiftedLj& lj, const std::vector<Vec2>& pos,
                        const Binning& bins, std::vector<Vec2>& force,
                        std::uint64_t& interactions) {
  force.assign(pos.size(), Vec2{});
  // d = (x_i - ci) - (x_j - cj): patch-relative coordinates, as the body computes them (cj is
  // j's patch corner moved to the periodic image next to i's patch). The forces on patch a's
  // particles [from, to) of its bin; returns twice the potential of their pairs and adds twice
  // their count to `pairs`.
  auto forces_on = [&](std::uint32_t a, std::uint32_t from, std::uint32_t to,
                       std::uint64_t& pairs) {
    double potential = 0;
    const Vec2 ca = box.corner(a);
    for (int sy = -1; sy <= 1; ++sy) {
      for (int sx = -1; sx <= 1; ++sx) {
        const std::uint32_t b = box.neighbour(a, sx, sy);
        const Vec2 cb = box.corner(b);
        const Vec2 cj{cb.x - sx * box.side, cb.y - sy * box.side};
        for (std::uint32_t x = from; x < to; ++x) {
          const std::uint32_t i = bins.order[x];
          const double xi = pos[i].x - ca.x, yi = pos[i].y - ca.y;
          Vec2 f_i{};
          for (std::uint32_t y = bins.start[b]; y < bins.start[b + 1]; ++y) {
            const std::uint32_t j = bins.order[y];
            if (j == i) continue;
            const double dx = xi - (pos[j].x - cj.x), dy = yi - (pos[j].y - cj.y);
            const double r2 = dx * dx + dy * dy;
            if (r2 >= lj.rc2) continue;
            double f, e;
            lj.at(r2, f, e);
            f_i.x += f * dx, f_i.y += f * dy;
            potential += e;
            ++pairs;
          }
          force[i].x += f_i.x, force[i].y += f_i.y;
        }
      }
    }
    return potential;
  };
  // Pieces of at most kPiece particles of one patch, taken by threads from a shared counter: the
  // clusters' patches hold most of the pairs (one patch, 5,584 particles at 100,000 in 7 x 7, had
  // ~1e8 a step), so whole patches, or contiguous ranges of them, left one or two threads with
  // nearly all the work. Each piece's potential has its own slot, summed in piece order: the
  // same bits whatever the threads.
  constexpr std::uint32_t kPiece = 256;
  struct Piece {
    std::uint32_t patch, from, to;
  };
  std::vector<Piece> pieces;
  for (std::uint32_t a = 0; a < box.count(); ++a) {
    for (std::uint32_t x = bins.start[a]; x < bins.start[a + 1]; x += kPiece)
      pieces.push_back({a, x, std::min(x + kPiece, bins.start[a + 1])});
  }
  const auto count = static_cast<std::uint32_t>(pieces.size());
  std::vector<double> potential_of(count, 0);
  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint64_t> twice{0};
  {
    const std::uint32_t threads =
        std::clamp<std::uint32_t>(std::thread::hardware_concurrency(), 1, std::max(1u, count));
    std::vector<std::jthread> pool;
    for (std::uint32_t t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        std::uint64_t pairs = 0;
        for (std::uint32_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
          potential_of[k] = forces_on(pieces[k].patch, pieces[k].from, pieces[k].to, pairs);
        }
        twice.fetch_add(pairs, std::memory_order_relaxed);
      });
    }
  }
  interactions += twice.load() / 2;
  return std::accumulate(potential_of.begin(), potential_of.end(), 0.0) / 2;
}

ReferenceRun run_reference(const Md2dConfig& config, const Box& box, State state) {
  const ShiftedLj lj(config.cutoff);
  ReferenceRun ref;
  Binning bins;
  std::vector<Vec2> force;
  for (std::uint32_t step = 0; step < config.steps; ++step) {
    ref.migrated += bins.bin(box, state.pos);
    const double potential = reference_forces(box, lj, state.pos, bins, force, ref.interactions);
    const double kinetic = leapfrog_step(state, force, config.dt, step == 0, box.length);
    ref.energy.push_back(kinetic + potential);
  }
  ref.pos = std::move(state.pos);
  return ref;
}

}  // namespace gpulb::scenarios::md2d
