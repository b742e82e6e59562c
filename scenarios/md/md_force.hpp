// The md scenario's pair force (Chen et al. 2010, section 6.1): Lennard-Jones plus electrostatics,
// both cut off at rc. Written once, templated on the real type: the task body runs it in float
// on both backends; the host reference and the energy check run it in double.
//
// Reduced Lennard-Jones units (sigma = epsilon = mass = 1, Coulomb constant 1): a helium-like
// system, the units the paper's synthetic system does not give. Both terms are shifted-force
// (F(r) - F(rc), and the matching potential), so force and energy are continuous at rc: atoms that
// cross the cutoff do not kick the energy, which lets velocity Verlet conserve it (the drift check).
#pragma once

#include <cmath>
#include <cstdint>

#include "gpulb/hd.hpp"

namespace gpulb::scenarios::md {

// One atom as the body reads it: position and charge, 16 bytes (one float4 load on the GPU).
struct alignas(16) Atom {
  float x, y, z, q;
};

template <class Real>
struct ForceField {
  Real rc2;      // cutoff radius squared
  Real inv_rc;   // 1 / rc
  Real inv_rc2;  // 1 / rc^2
  Real rc;
  Real lj_f_rc;  // the Lennard-Jones force at rc (subtracted: shifted force)
  Real lj_v_rc;  // the Lennard-Jones potential at rc
};

template <class Real>
ForceField<Real> make_force_field(double rc) {
  const double s6 = 1.0 / (rc * rc * rc * rc * rc * rc);
  ForceField<Real> f;
  f.rc = static_cast<Real>(rc);
  f.rc2 = static_cast<Real>(rc * rc);
  f.inv_rc = static_cast<Real>(1.0 / rc);
  f.inv_rc2 = static_cast<Real>(1.0 / (rc * rc));
  f.lj_f_rc = static_cast<Real>(24.0 * (2.0 * s6 * s6 - s6) / rc);
  f.lj_v_rc = static_cast<Real>(4.0 * (s6 * s6 - s6));
  return f;
}

GPULB_HD inline float real_sqrt(float x) { return sqrtf(x); }
GPULB_HD inline double real_sqrt(double x) { return sqrt(x); }

// The force on atom i from atom j over r = |ri - rj| (r2 = r^2 < rc2, r2 > 0), as F(r)/r: the
// caller multiplies the separation vector by it. qq = qi qj.
template <class Real>
GPULB_HD inline Real pair_force_over_r(const ForceField<Real>& f, Real r2, Real qq) {
  const Real inv_r2 = Real(1) / r2;
  const Real inv_r = real_sqrt(inv_r2);
  const Real s6 = inv_r2 * inv_r2 * inv_r2;
  const Real lj = Real(24) * (Real(2) * s6 * s6 - s6) * inv_r - f.lj_f_rc;
  const Real coulomb = qq * (inv_r2 - f.inv_rc2);
  return (lj + coulomb) * inv_r;
}

// The shifted-force potential of the pair (host: the energy check).
template <class Real>
Real pair_potential(const ForceField<Real>& f, Real r2, Real qq) {
  const Real r = std::sqrt(r2);
  const Real s6 = Real(1) / (r2 * r2 * r2);
  const Real lj = Real(4) * (s6 * s6 - s6) - f.lj_v_rc + (r - f.rc) * f.lj_f_rc;
  const Real coulomb = qq * (Real(1) / r - f.inv_rc + (r - f.rc) * f.inv_rc2);
  return lj + coulomb;
}

}  // namespace gpulb::scenarios::md
