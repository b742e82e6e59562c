// The cell list of the md scenario's pair search (`--param pairs=cells`, the default): the atoms
// copied into cell order, cells of side at least the cutoff, so that every atom within the cutoff
// of atom a lies in the 27 cells around a's. A task's cost then follows its atoms' local density,
// as in a molecular-dynamics code with a cell list; under pairs=all every atom tests all N.
//
// The grid is x-fastest, so the up-to-three cells of one x-row are one contiguous range of slots:
// a scan is 9 ranges. The candidates of an atom come in the same order whatever the array A's
// order, so the solutions still agree bit for bit. Read by the task body on both backends.
#pragma once

#include <cstdint>

#include "gpulb/hd.hpp"
#include "md/md_force.hpp"

namespace gpulb::scenarios::md {

// The grid's placement and size. The host bins atoms with coord() and the body finds an atom's
// neighbourhood with it, in the same float arithmetic on both, so they never disagree on a cell.
struct CellGridShape {
  float lo[3];     // the atoms' bounding box corner
  float inv_side;  // 1 / the cell's side (side >= cutoff, with a margin for float rounding)
  std::int32_t dims[3];

  GPULB_HD std::int32_t coord(float x, int d) const {
    const float c = floorf((x - lo[d]) * inv_side);
    if (!(c > 0.f)) return 0;  // also catches NaN
    const std::int32_t i = static_cast<std::int32_t>(c);
    return i < dims[d] ? i : dims[d] - 1;
  }
  GPULB_HD std::int64_t cells() const { return std::int64_t{dims[0]} * dims[1] * dims[2]; }
};

// What the body reads (device or host memory): a view, passed by value.
struct CellListView {
  const Atom* atoms = nullptr;             // the atoms in cell order (slots)
  const std::uint32_t* start = nullptr;    // cells + 1 entries: the first slot of each cell
  const std::uint32_t* slot_of = nullptr;  // an atom's original id -> its slot
  CellGridShape shape{};

  // fn(slot, atom) for every atom in the 27 cells around the atom at `self`, except itself.
  template <class Fn>
  GPULB_HD void for_each_candidate(std::uint32_t self, const Atom& a, Fn&& fn) const {
    const std::int32_t c[3] = {shape.coord(a.x, 0), shape.coord(a.y, 1), shape.coord(a.z, 2)};
    const std::int32_t x0 = c[0] > 0 ? c[0] - 1 : 0,
                       x1 = c[0] + 1 < shape.dims[0] ? c[0] + 1 : c[0];
    for (std::int32_t z = c[2] - 1; z <= c[2] + 1; ++z) {
      if (z < 0 || z >= shape.dims[2]) continue;
      for (std::int32_t y = c[1] - 1; y <= c[1] + 1; ++y) {
        if (y < 0 || y >= shape.dims[1]) continue;
        const std::int64_t row = (std::int64_t{z} * shape.dims[1] + y) * shape.dims[0];
        const std::uint32_t end = start[row + x1 + 1];
        for (std::uint32_t k = start[row + x0]; k < end; ++k) {
          if (k != self) fn(k, atoms[k]);
        }
      }
    }
  }
};

// At most this many cells an atom: bounds the cell starts' memory (4 bytes a cell) when the cutoff
// is small against the system's extent; the side grows instead. The Gaussian system at rc = 2.5
// needs about 7 an atom, at any size (its volume grows with N).
inline constexpr std::uint32_t kMaxCellsPerAtom = 8;

}  // namespace gpulb::scenarios::md
