// The physics of `md2d` (G-Charm section 4.2), on the host and in double precision: the periodic
// box and its patches, the compute objects, the initial particles, the binning into patches, the
// shifted-force Lennard-Jones pair, the integrator, and the sequential reference run the scenario
// is verified against. Reduced units throughout: sigma = epsilon = mass = 1.
#pragma once

#include <cstdint>
#include <vector>

namespace gpulb::scenarios::md2d {

struct Md2dConfig {
  std::uint32_t particles = 10000;
  double density = 0.1;       // mean particles per sigma^2
  std::uint32_t patches = 0;  // per side; 0: auto (Box::auto_patches)
  std::uint32_t steps = 10;
  double dt = 0.005;
  double cutoff = 2.5;
  double temperature = 1.0;
  double contrast = 0.6;  // fraction of the particles in the clusters
  std::uint32_t clusters = 2;
  std::uint32_t producers = 0;  // 0: the host's hardware threads
  std::uint64_t seed = 1;
  double tolerance = 1e-4;             // max |x - x_ref| allowed after the run (sigma)
  std::uint32_t piece_targets = 4096;  // most targets a request computes (0: whole compute objects)
};

struct Vec2 {
  double x = 0, y = 0;
};

// Nothing closer than this when placing particles (sigma): the LJ force at 1 sigma is 24, which a
// step of 0.005 integrates smoothly; much closer and the repulsion (r^-13) blows particles apart.
inline constexpr double kMinDistance = 1.0;

// The periodic box, length x length, cut into patches x patches square patches.
struct Box {
  double length = 0;
  std::uint32_t patches = 0;  // per side
  double side = 0;

  Box() = default;
  Box(double length_, std::uint32_t patches_)
      : length(length_), patches(patches_), side(length_ / patches_) {}
  std::uint32_t count() const { return patches * patches; }
  std::uint32_t patch_of(Vec2 p) const;
  Vec2 corner(std::uint32_t patch) const {
    return {static_cast<double>(patch % patches) * side,
            static_cast<double>(patch / patches) * side};
  }
  std::uint32_t neighbour(std::uint32_t patch, int sx, int sy) const;
  // The patches per side where the user names none: a mean of about 32 particles a patch (a
  // request then has tens to hundreds of items), never a side under the cutoff, at least 3.
  static std::uint32_t auto_patches(double length, std::uint32_t particles, double cutoff);
};

// A compute object (the paper's: one per pair of neighbouring patches, and here one per patch for
// the pairs inside it). Patch `a`'s five: k = 0 is its self object, k = 1..4 its pairs with the
// half shell (1,0), (1,1), (0,1), (-1,1), so each neighbouring pair of the 8-neighbourhood is one
// object (periodic; needs 3 patches a side or more, else a neighbour would be met twice).
inline constexpr std::uint32_t kObjectsPerPatch = 5;
inline constexpr int kHalfShell[4][2] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1}};

struct ComputeObject {
  std::uint32_t a = 0, b = 0;  // b == a for self
  int sx = 0, sy = 0;          // where b's patch lies from a's, in sides
  bool self = true;
};
ComputeObject compute_object(const Box& box, std::uint32_t a, std::uint32_t k);

// Shifted-force Lennard-Jones (Allen & Tildesley 5.2.3): U_sf(r) = U(r) - U(rc) + (r - rc) F(rc),
// so both the force and the energy go to zero at rc (energy continuous, force continuous).
struct ShiftedLj {
  double rc = 0, rc2 = 0, force_rc = 0, energy_rc = 0;
  explicit ShiftedLj(double cutoff);
  // For r2 < rc2: |F| / r (the force on i is f_over_r * (r_i - r_j)) and U_sf.
  void at(double r2, double& f_over_r, double& energy) const;
};

// Particles sorted by patch (a counting sort): order[start[p] .. start[p+1]) are patch p's.
struct Binning {
  std::vector<std::uint32_t> start;  // count() + 1
  std::vector<std::uint32_t> order;
  std::vector<std::uint32_t> patch;  // per particle
  // Bins `pos` and returns how many particles changed patch since the previous bin (0 the first time).
  std::uint64_t bin(const Box& box, const std::vector<Vec2>& pos);
  std::uint32_t count(std::uint32_t p) const { return start[p + 1] - start[p]; }
};

struct State {
  std::vector<Vec2> pos, vel;
};

// Particles with a non-uniform density: `contrast` of them in `clusters` Gaussian clusters (peak
// density ~0.4), the rest uniform, none closer than kMinDistance (random sequential addition);
// Maxwell velocities at `temperature` with zero total momentum. Throws ConfigError when the box
// cannot hold them.
State initial_state(const Md2dConfig& config, const Box& box);

// The leapfrog form of velocity Verlet, one force evaluation a step. `vel` holds v(t - dt/2)
// (v(0) before the first step); with F(t): v(t) = v(t - dt/2) + F dt/2 (the kinetic energy of
// step t is taken there), v(t + dt/2) = v(t) + F dt/2, x(t + dt) = x(t) + v(t + dt/2) dt, wrapped
// into the box. Returns the kinetic energy at t.
double leapfrog_step(State& s, const std::vector<Vec2>& force, double dt, bool first,
                     double length);

// The sequential reference: the same algorithm (patches as cell lists, the same compute objects,
// cutoff, integrator) in double precision, each pair once (Newton's third law).
struct ReferenceRun {
  std::vector<Vec2> pos;           // after the steps
  std::vector<double> energy;      // total energy at each step's t
  std::uint64_t interactions = 0;  // pairs within the cutoff, summed over steps
  std::uint64_t migrated = 0;
};
// The forces of the pairs inside the cutoff over the compute objects; returns the potential
// energy and adds the count of those pairs to `interactions`.
double reference_forces(const Box& box, const ShiftedLj& lj, const std::vector<Vec2>& pos,
                        const Binning& bins, std::vector<Vec2>& force, std::uint64_t& interactions);
ReferenceRun run_reference(const Md2dConfig& config, const Box& box, State state);

// |a - b| with the periodic minimum image.
double periodic_distance(Vec2 a, Vec2 b, double length);

}  // namespace gpulb::scenarios::md2d
