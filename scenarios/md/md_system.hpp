// The md scenario's host side: the synthetic system (Chen et al. 2010, section 6.1), the orders of
// the array A that the solutions use (section 6.2), and the double-precision references the
// verifier compares with. No device code here.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "md/md_cells.hpp"
#include "md/md_force.hpp"

namespace gpulb::scenarios::md {

struct SystemSpec {
  std::uint32_t atoms = 0;
  double cutoff = 2.5;        // rc, in sigma
  double peak_density = 0.3;  // atoms per sigma^3 at the centre of the Gaussian
  double min_distance = 0.9;  // no two atoms closer (placement rejects them): keeps r^-12 finite
  double charge = 0.3;        // |q| of every atom; the sign is random
  std::uint64_t seed = 1;
};

// N atoms with a Gaussian density around the centre of a cube (denser at the centre), no two
// closer than min_distance: Gaussian darts, rejected where they land too close to an earlier atom
// (a cell grid keeps that O(1) a dart) or outside the cube of +-4 standard deviations.
std::vector<Atom> make_system(const SystemSpec& spec);

// The decomposition sort (Solutions 1, 3 and the task queue): atoms grouped by cutoff-sized boxes
// (a counting sort), the densest box first; within a box, by id. Returns A: original ids in order.
std::vector<std::uint32_t> decomposition_order(const std::vector<Atom>& atoms, double cutoff);
// The cutoff-sized box of each atom (a grid over the atoms' bounding box): what the sort groups by.
std::vector<std::uint32_t> box_of_atoms(const std::vector<Atom>& atoms, double cutoff);
// The cell list of pairs=cells (md_cells.hpp): a grid over the atoms' bounding box, cells of side
// cutoff x 1.001 (the margin covers float rounding in CellGridShape::coord), grown where the grid
// would exceed kMaxCellsPerAtom x N cells; the atoms copied into cell order (a counting sort, by id
// within a cell). The body's view points into these vectors or into their copies on a GPU.
struct CellList {
  CellGridShape shape{};
  std::vector<Atom> atoms;           // cell order
  std::vector<std::uint32_t> start;  // cells + 1
  std::vector<std::uint32_t> slot_of;
  CellListView view() const { return {atoms.data(), start.data(), slot_of.data(), shape}; }
};
CellList build_cell_list(const std::vector<Atom>& atoms, double cutoff);
// Solution 2: a random permutation of the ids.
std::vector<std::uint32_t> random_order(std::uint32_t n, std::uint64_t seed);

using Vec3 = std::array<double, 3>;

// The force on atom i from every atom within the cutoff, in double precision, all pairs.
Vec3 reference_force(const std::vector<Atom>& atoms, std::uint32_t i, const ForceField<double>& ff);

// Velocity Verlet on the host, in double precision, with the same pair force (over a cell list,
// so a step is O(N)). The first half-kick uses `first_forces` (the run's forces: a wrong force
// field shows as drift). Returns the total energy (kinetic + potential) before each step and
// after the last: steps + 1 values.
std::vector<double> verlet_energies(const std::vector<Atom>& atoms,
                                    const std::vector<Vec3>& first_forces,
                                    const ForceField<double>& ff, std::uint32_t steps, double dt,
                                    double temperature, std::uint64_t seed);

}  // namespace gpulb::scenarios::md
