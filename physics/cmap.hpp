// CMAP (OpenMM's CMAPTorsionForce): an energy correction over two dihedral angles (phi, psi), tabulated on a
// periodic size x size grid and interpolated by bicubic patches. Grid point (i, j) lies at phi = i 2pi/size,
// psi = j 2pi/size (OpenMM's convention: the angles taken in [0, 2pi), index 0 at angle 0). The patches'
// coefficients are computed once on the host (model/cmap: make_cmap_table) and read here through a view,
// in host memory on the CPU platform and device memory on CUDA.
// Units: rad, kJ/mol.
#pragma once

#include "physics/math.hpp"

namespace mdsim {

// One map's patches as the evaluation reads them: patch (s, t) covers phi in [s h, (s+1) h) and psi in
// [t h, (t+1) h), h = 2pi/size; its 16 coefficients start at patches + 16 (s + size t), coefficient 4a + b
// multiplying u^a v^b with u = phi/h - s, v = psi/h - t in [0, 1].
template <typename T>
struct CmapMapView {
  const T* patches;
  int size;
};

template <typename T>
struct CmapValue {
  T energy;
  T dE_dphi, dE_dpsi;  // kJ/mol/rad
};

// The cell of an angle (rad, any value in [-pi, pi] as dihedral_angle returns it) and its fraction in the cell,
// after taking the angle into [0, 2pi) as OpenMM does. The last cell also takes an angle that rounds to 2pi.
template <typename T>
MDSIM_HD int cmap_cell(T angle_rad, int size, T& fraction) {
  const T two_pi = T(2.0 * pmath::kPi);
  const T a = angle_rad < T(0) ? angle_rad + two_pi : angle_rad;
  const T x = a * (T(size) / two_pi);
  int cell = static_cast<int>(x);
  if (cell > size - 1) cell = size - 1;
  if (cell < 0) cell = 0;
  fraction = x - T(cell);
  return cell;
}

// The map's bicubic value and its gradient at (phi, psi).
template <typename T>
MDSIM_HD CmapValue<T> cmap_value(const CmapMapView<T>& map, T phi_rad, T psi_rad) {
  T u, v;
  const int s = cmap_cell(phi_rad, map.size, u);
  const int t = cmap_cell(psi_rad, map.size, v);
  const T* c = map.patches + 16 * (s + map.size * t);
  // Each row a: the polynomial in v multiplying u^a, and its v-derivative.
  T row[4], drow[4];
  for (int a = 0; a < 4; ++a) {
    const T* r = c + 4 * a;
    row[a] = ((r[3] * v + r[2]) * v + r[1]) * v + r[0];
    drow[a] = (T(3) * r[3] * v + T(2) * r[2]) * v + r[1];
  }
  const T inv_h = T(map.size) / T(2.0 * pmath::kPi);  // d u / d phi
  CmapValue<T> out;
  out.energy = ((row[3] * u + row[2]) * u + row[1]) * u + row[0];
  out.dE_dphi = ((T(3) * row[3] * u + T(2) * row[2]) * u + row[1]) * inv_h;
  out.dE_dpsi = (((drow[3] * u + drow[2]) * u + drow[1]) * u + drow[0]) * inv_h;
  return out;
}

}  // namespace mdsim
