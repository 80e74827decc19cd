// Harmonic position restraint of one atom to a reference point, with a force constant per axis (GROMACS's
// [position_restraints] fcx, fcy, fcz; equal constants give OpenMM's
// CustomExternalForce("0.5*k*periodicdistance(x,y,z,x0,y0,z0)^2")):
//   d = x − x0, wrapped by the reduced triclinic box's minimum image in a periodic system (the same
//       sequence of wraps, c then b then a, as OpenMM's periodicdistance and BoxVectors::minimum_image);
//       the plain difference without a box;
//   E = ½ Σ_a k_a d_a²,  F_a = −k_a d_a  (a = x, y, z).
// The reference point is not moved with the box (a barostat scales the atom, not x0), as in OpenMM.
// Units: nm, kJ/mol/nm², kJ/mol, kJ/mol/nm.
#pragma once

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

template <typename T>
struct RestraintResult {
  T energy;
  Vec3<T> force;  // on the restrained atom
};

// x − x0 by minimum image in `box` (null: no periodic box).
template <typename T>
MDSIM_HD Vec3<T> restraint_displacement(const Vec3<T>& x, const Vec3<T>& x0, const BoxVectors<T>* box) {
  const Vec3<T> d = x - x0;
  return box != nullptr ? box->minimum_image(d) : d;
}

// Energy and force of one restraint of stiffness k (per axis) given its displacement d = x − x0.
template <typename T>
MDSIM_HD RestraintResult<T> position_restraint(const Vec3<T>& d, const Vec3<T>& k) {
  const Vec3<T> f(-k.x * d.x, -k.y * d.y, -k.z * d.z);
  return {T(-0.5) * dot(f, d), f};
}

}  // namespace mdsim
