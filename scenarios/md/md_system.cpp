#include "md/md_system.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>

namespace gpulb::scenarios::md {
namespace {

// A uniform grid of cubic cells over a bounding box, with atoms chained per cell (head/next).
struct CellGrid {
  double lo[3] = {0, 0, 0};
  double cell = 1;
  std::int64_t dims[3] = {1, 1, 1};
  std::vector<std::int32_t> head;  // first atom of each cell, -1: none
  std::vector<std::int32_t> next;  // next atom of the same cell

  CellGrid(const double (&lo_)[3], const double (&hi)[3], double cell_, std::size_t atoms)
      : cell(cell_) {
    for (int d = 0; d < 3; ++d) {
      lo[d] = lo_[d];
      dims[d] = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(std::ceil((hi[d] - lo_[d]) / cell_)) + 1);
    }
    head.assign(static_cast<std::size_t>(dims[0] * dims[1] * dims[2]), -1);
    next.assign(atoms, -1);
  }
  std::int64_t coord(double x, int d) const {
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((x - lo[d]) / cell)), 0,
                                    dims[d] - 1);
  }
  std::int64_t index(std::int64_t cx, std::int64_t cy, std::int64_t cz) const {
    return (cz * dims[1] + cy) * dims[0] + cx;
  }
  void insert(std::int32_t atom, double x, double y, double z) {
    const std::int64_t c = index(coord(x, 0), coord(y, 1), coord(z, 2));
    next[static_cast<std::size_t>(atom)] = head[static_cast<std::size_t>(c)];
    head[static_cast<std::size_t>(c)] = atom;
  }
  // fn(atom) for every atom in the 27 cells around (x, y, z).
  template <class F>
  void around(double x, double y, double z, F&& fn) const {
    const std::int64_t c[3] = {coord(x, 0), coord(y, 1), coord(z, 2)};
    for (std::int64_t dz = -1; dz <= 1; ++dz) {
      for (std::int64_t dy = -1; dy <= 1; ++dy) {
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          const std::int64_t cx = c[0] + dx, cy = c[1] + dy, cz = c[2] + dz;
          if (cx < 0 || cy < 0 || cz < 0 || cx >= dims[0] || cy >= dims[1] || cz >= dims[2])
            continue;
          for (std::int32_t a = head[static_cast<std::size_t>(index(cx, cy, cz))]; a >= 0;
               a = next[static_cast<std::size_t>(a)])
            fn(a);
        }
      }
    }
  }
};

// Forces and potential energy of every atom over a cell list (cells of the cutoff's size). The
// atoms are copied into cell order first (a counting sort): neighbours then lie side by side in
// memory, which made a step at 1M atoms about 10x faster than chasing per-cell linked lists.
double cell_forces(const std::vector<Vec3>& pos, const std::vector<double>& q,
                   const ForceField<double>& ff, std::vector<Vec3>& force) {
  double lo[3] = {pos[0][0], pos[0][1], pos[0][2]}, hi[3] = {lo[0], lo[1], lo[2]};
  for (const Vec3& p : pos) {
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], p[d]);
      hi[d] = std::max(hi[d], p[d]);
    }
  }
  const CellGrid grid(lo, hi, ff.rc, 0);
  const std::size_t n = pos.size(), cells = grid.head.size();
  std::vector<std::uint32_t> cell(n), start(cells + 1, 0), ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    cell[i] = static_cast<std::uint32_t>(
        grid.index(grid.coord(pos[i][0], 0), grid.coord(pos[i][1], 1), grid.coord(pos[i][2], 2)));
    ++start[cell[i] + 1];
  }
  for (std::size_t c = 0; c < cells; ++c) start[c + 1] += start[c];
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) ids[fill[cell[i]]++] = i;
  }
  std::vector<Vec3> sp(n);
  std::vector<double> sq(n);
  for (std::size_t k = 0; k < n; ++k) {
    sp[k] = pos[ids[k]];
    sq[k] = q[ids[k]];
  }
  double energy = 0;
  force.assign(n, Vec3{0, 0, 0});
  for (std::int64_t cz = 0; cz < grid.dims[2]; ++cz) {
    for (std::int64_t cy = 0; cy < grid.dims[1]; ++cy) {
      for (std::int64_t cx = 0; cx < grid.dims[0]; ++cx) {
        const std::size_t c = static_cast<std::size_t>(grid.index(cx, cy, cz));
        if (start[c] == start[c + 1]) continue;
        for (std::int64_t dz = -1; dz <= 1; ++dz) {
          for (std::int64_t dy = -1; dy <= 1; ++dy) {
            for (std::int64_t dx = -1; dx <= 1; ++dx) {
              const std::int64_t nx = cx + dx, ny = cy + dy, nz = cz + dz;
              if (nx < 0 || ny < 0 || nz < 0 || nx >= grid.dims[0] || ny >= grid.dims[1] ||
                  nz >= grid.dims[2])
                continue;
              const std::size_t nc = static_cast<std::size_t>(grid.index(nx, ny, nz));
              for (std::uint32_t a = start[c]; a < start[c + 1]; ++a) {
                Vec3& f = force[ids[a]];
                for (std::uint32_t b = start[nc]; b < start[nc + 1]; ++b) {
                  if (a == b) continue;
                  const double rx = sp[a][0] - sp[b][0], ry = sp[a][1] - sp[b][1],
                               rz = sp[a][2] - sp[b][2];
                  const double r2 = rx * rx + ry * ry + rz * rz;
                  if (r2 >= ff.rc2) continue;
                  const double s = pair_force_over_r(ff, r2, sq[a] * sq[b]);
                  f[0] += s * rx;
                  f[1] += s * ry;
                  f[2] += s * rz;
                  energy += 0.5 * pair_potential(ff, r2, sq[a] * sq[b]);  // each pair seen twice
                }
              }
            }
          }
        }
      }
    }
  }
  return energy;
}

}  // namespace

std::vector<Atom> make_system(const SystemSpec& spec) {
  const std::uint32_t n = spec.atoms;
  // Peak of a 3D Gaussian of N atoms: N / ((2 pi)^(3/2) s^3).
  const double s = std::cbrt(n / (std::pow(2 * std::numbers::pi, 1.5) * spec.peak_density));
  const double half = 4 * s;
  const double lo[3] = {-half, -half, -half}, hi[3] = {half, half, half};
  CellGrid grid(lo, hi, std::max(spec.min_distance, 2.5),
                n);  // cells of 2.5: 28 MB of heads at 1M atoms
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> gauss(0.0, s);
  std::bernoulli_distribution sign(0.5);
  const double min2 = spec.min_distance * spec.min_distance;
  std::vector<Atom> atoms;
  atoms.reserve(n);
  while (atoms.size() < n) {
    const double x = gauss(rng), y = gauss(rng), z = gauss(rng);
    if (std::abs(x) > half || std::abs(y) > half || std::abs(z) > half) continue;
    bool clear = true;
    grid.around(x, y, z, [&](std::int32_t j) {
      const Atom& b = atoms[static_cast<std::size_t>(j)];
      const double dx = x - b.x, dy = y - b.y, dz = z - b.z;
      clear = clear && dx * dx + dy * dy + dz * dz >= min2;
    });
    if (!clear) continue;
    grid.insert(static_cast<std::int32_t>(atoms.size()), x, y, z);
    const float q = static_cast<float>(sign(rng) ? spec.charge : -spec.charge);
    atoms.push_back(Atom{static_cast<float>(x), static_cast<float>(y), static_cast<float>(z), q});
  }
  return atoms;
}

std::vector<std::uint32_t> box_of_atoms(const std::vector<Atom>& atoms, double cutoff) {
  double lo[3] = {atoms[0].x, atoms[0].y, atoms[0].z}, hi[3] = {lo[0], lo[1], lo[2]};
  for (const Atom& a : atoms) {
    const double p[3] = {a.x, a.y, a.z};
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], p[d]);
      hi[d] = std::max(hi[d], p[d]);
    }
  }
  const CellGrid grid(lo, hi, cutoff, 0);
  std::vector<std::uint32_t> box(atoms.size());
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    box[i] = static_cast<std::uint32_t>(grid.index(
        grid.coord(atoms[i].x, 0), grid.coord(atoms[i].y, 1), grid.coord(atoms[i].z, 2)));
  }
  return box;
}

std::vector<std::uint32_t> decomposition_order(const std::vector<Atom>& atoms, double cutoff) {
  const std::vector<std::uint32_t> box = box_of_atoms(atoms, cutoff);
  const std::uint32_t boxes_total = box.empty() ? 0 : *std::max_element(box.begin(), box.end()) + 1;
  std::vector<std::uint32_t> count(boxes_total, 0);
  for (std::uint32_t b : box) ++count[b];
  std::vector<std::uint32_t> boxes;
  for (std::uint32_t b = 0; b < count.size(); ++b) {
    if (count[b] != 0) boxes.push_back(b);
  }
  std::stable_sort(boxes.begin(), boxes.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return count[a] > count[b]; });
  std::vector<std::uint32_t> start(count.size(), 0);
  std::uint32_t offset = 0;
  for (std::uint32_t b : boxes) {
    start[b] = offset;
    offset += count[b];
  }
  std::vector<std::uint32_t> order(atoms.size());
  for (std::uint32_t i = 0; i < atoms.size(); ++i) order[start[box[i]]++] = i;
  return order;
}

namespace {

CellGridShape cell_grid_shape(const std::vector<Atom>& atoms, double cutoff) {
  float lo[3] = {atoms[0].x, atoms[0].y, atoms[0].z}, hi[3] = {lo[0], lo[1], lo[2]};
  for (const Atom& a : atoms) {
    const float p[3] = {a.x, a.y, a.z};
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], p[d]);
      hi[d] = std::max(hi[d], p[d]);
    }
  }
  const double max_cells = double(kMaxCellsPerAtom) * double(atoms.size()) + 27.0;
  double side = cutoff * 1.001;
  CellGridShape shape{};
  for (;;) {
    double cells = 1;
    for (int d = 0; d < 3; ++d) {
      shape.dims[d] = static_cast<std::int32_t>(std::floor((double(hi[d]) - lo[d]) / side)) + 1;
      cells *= shape.dims[d];
    }
    if (cells <= max_cells) break;
    side *= std::max(1.01, std::cbrt(cells / max_cells));
  }
  for (int d = 0; d < 3; ++d) shape.lo[d] = lo[d];
  shape.inv_side = static_cast<float>(1.0 / side);
  return shape;
}

}  // namespace

CellList build_cell_list(const std::vector<Atom>& atoms, double cutoff) {
  CellList list;
  if (atoms.empty()) return list;
  list.shape = cell_grid_shape(atoms, cutoff);
  const CellGridShape& g = list.shape;
  const std::size_t n = atoms.size(), cells = static_cast<std::size_t>(g.cells());
  std::vector<std::uint32_t> cell(n);
  list.start.assign(cells + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Atom& a = atoms[i];
    const std::int32_t x = g.coord(a.x, 0), y = g.coord(a.y, 1), z = g.coord(a.z, 2);
    cell[i] = static_cast<std::uint32_t>((std::int64_t{z} * g.dims[1] + y) * g.dims[0] + x);
    ++list.start[cell[i] + 1];
  }
  for (std::size_t c = 0; c < cells; ++c) list.start[c + 1] += list.start[c];
  std::vector<std::uint32_t> fill(list.start.begin(), list.start.end() - 1);
  list.atoms.resize(n);
  list.slot_of.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t slot = fill[cell[i]]++;
    list.atoms[slot] = atoms[i];
    list.slot_of[i] = slot;
  }
  return list;
}

std::vector<std::uint32_t> random_order(std::uint32_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed ^ 0x5DEECE66DULL);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

Vec3 reference_force(const std::vector<Atom>& atoms, std::uint32_t i,
                     const ForceField<double>& ff) {
  Vec3 f{0, 0, 0};
  const Atom& a = atoms[i];
  for (std::uint32_t j = 0; j < atoms.size(); ++j) {
    if (j == i) continue;
    const Atom& b = atoms[j];
    const double dx = double(a.x) - b.x, dy = double(a.y) - b.y, dz = double(a.z) - b.z;
    const double r2 = dx * dx + dy * dy + dz * dz;
    if (r2 >= ff.rc2) continue;
    const double s = pair_force_over_r(ff, r2, double(a.q) * b.q);
    f[0] += s * dx;
    f[1] += s * dy;
    f[2] += s * dz;
  }
  return f;
}

std::vector<double> verlet_energies(const std::vector<Atom>& atoms,
                                    const std::vector<Vec3>& first_forces,
                                    const ForceField<double>& ff, std::uint32_t steps, double dt,
                                    double temperature, std::uint64_t seed) {
  const std::size_t n = atoms.size();
  std::vector<Vec3> pos(n), vel(n), force;
  std::vector<double> q(n);
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ULL);
  std::normal_distribution<double> maxwell(0.0, std::sqrt(temperature));  // unit mass
  for (std::size_t i = 0; i < n; ++i) {
    pos[i] = {atoms[i].x, atoms[i].y, atoms[i].z};
    q[i] = atoms[i].q;
    vel[i] = {maxwell(rng), maxwell(rng), maxwell(rng)};
  }
  const auto kinetic = [&] {
    double k = 0;
    for (const Vec3& v : vel) k += 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    return k;
  };
  double potential = cell_forces(pos, q, ff, force);
  force = first_forces;  // the run's forces drive the first half-kick
  std::vector<double> energies{kinetic() + potential};
  for (std::uint32_t step = 0; step < steps; ++step) {
    for (std::size_t i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) {
        vel[i][d] += 0.5 * dt * force[i][d];
        pos[i][d] += dt * vel[i][d];
      }
    }
    potential = cell_forces(pos, q, ff, force);
    for (std::size_t i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) vel[i][d] += 0.5 * dt * force[i][d];
    }
    energies.push_back(kinetic() + potential);
  }
  return energies;
}

}  // namespace gpulb::scenarios::md
