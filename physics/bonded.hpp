// Bonded interactions, each written once for host and device (MDSIM_HD), templated on the real
// type T (float or double). Pure math: the caller supplies displacement vectors (so it decides
// about periodic images) and adds the returned forces to its own accumulators.
// Units: nm, rad, kJ/mol; forces in kJ/mol/nm. Conventions follow OpenMM's HarmonicBondForce,
// HarmonicAngleForce and PeriodicTorsionForce.
#pragma once

#include "physics/math.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

template <typename T>
struct BondResult {
  T energy;
  Vec3<T> force_i, force_j;
};

template <typename T>
struct AngleResult {
  T energy;
  Vec3<T> force_i, force_j, force_k;  // j is the vertex
};

template <typename T>
struct TorsionResult {
  T energy;
  Vec3<T> force_i, force_j, force_k, force_l;
};

// E = 1/2 k (r - r0)^2 with r = |d|, d = x_j - x_i.
template <typename T>
MDSIM_HD BondResult<T> harmonic_bond(const Vec3<T>& d_ij, T length_nm, T k_kj_per_mol_nm2) {
  const T r = pmath::sqrt_(dot(d_ij, d_ij));
  const T dr = r - length_nm;
  BondResult<T> out;
  out.energy = T(0.5) * k_kj_per_mol_nm2 * dr * dr;
  // dE/dr = k dr; F_j = -dE/dr d/r. A zero-length bond has no defined direction: no force.
  const T f_over_r = r > T(0) ? -k_kj_per_mol_nm2 * dr / r : T(0);
  out.force_j = d_ij * f_over_r;
  out.force_i = -out.force_j;
  return out;
}

// E = 1/2 k (theta - theta0)^2, theta the angle at the vertex j between u = x_i - x_j and
// w = x_k - x_j, computed as atan2(|u x w|, u.w) (accurate near 0 and pi).
template <typename T>
MDSIM_HD AngleResult<T> harmonic_angle(const Vec3<T>& u_ji, const Vec3<T>& w_jk, T angle_rad,
                                       T k_kj_per_mol_rad2) {
  const Vec3<T> p = cross(u_ji, w_jk);
  T p_norm = pmath::sqrt_(dot(p, p));
  const T theta = pmath::atan2_(p_norm, dot(u_ji, w_jk));
  const T dtheta = theta - angle_rad;
  AngleResult<T> out;
  out.energy = T(0.5) * k_kj_per_mol_rad2 * dtheta * dtheta;
  const T dE_dtheta = k_kj_per_mol_rad2 * dtheta;
  // d theta/du = u x (u x w) / (|u|^2 |u x w|) = (u x p)/(|u|^2 |p|); d theta/dw = -(w x p)/(|w|^2 |p|).
  // Collinear atoms (|p| = 0) leave the bending direction undefined; like OpenMM we keep |p| away
  // from zero, which gives a finite force there.
  const T p_min = T(1.0e-6);
  if (p_norm < p_min) p_norm = p_min;
  const T uu = dot(u_ji, u_ji);
  const T ww = dot(w_jk, w_jk);
  out.force_i = cross(u_ji, p) * (-dE_dtheta / (uu * p_norm));
  out.force_k = cross(w_jk, p) * (dE_dtheta / (ww * p_norm));
  out.force_j = -(out.force_i + out.force_k);
  return out;
}

// Dihedral angle (IUPAC / OpenMM sign convention) of the chain i-j-k-l, from the bond vectors
// b1 = x_j - x_i, b2 = x_k - x_j, b3 = x_l - x_k:  phi = atan2(|b2| b1.(b2 x b3), (b1 x b2).(b2 x b3)).
template <typename T>
MDSIM_HD T dihedral_angle(const Vec3<T>& b1, const Vec3<T>& b2, const Vec3<T>& b3) {
  const Vec3<T> m = cross(b1, b2);
  const Vec3<T> n = cross(b2, b3);
  const T b2_norm = pmath::sqrt_(dot(b2, b2));
  return pmath::atan2_(b2_norm * dot(b1, n), dot(m, n));
}

// Forces of a dihedral potential E(phi) with derivative dE/dphi, for the bond vectors above
// (Blondel & Karplus form; sums to zero force and zero torque).
template <typename T>
MDSIM_HD void dihedral_forces(const Vec3<T>& b1, const Vec3<T>& b2, const Vec3<T>& b3, T dE_dphi,
                              Vec3<T>& force_i, Vec3<T>& force_j, Vec3<T>& force_k, Vec3<T>& force_l) {
  const Vec3<T> m = cross(b1, b2);  // normal of plane (i, j, k)
  const Vec3<T> n = cross(b2, b3);  // normal of plane (j, k, l)
  const T b2_sq = dot(b2, b2);
  const T b2_norm = pmath::sqrt_(b2_sq);
  T m_sq = dot(m, m);
  T n_sq = dot(n, n);
  // Three collinear atoms leave phi undefined; keep the normals away from zero length.
  const T tiny = T(1.0e-12);
  if (m_sq < tiny) m_sq = tiny;
  if (n_sq < tiny) n_sq = tiny;
  // d phi/dx_i = -|b2|/|m|^2 m ; d phi/dx_l = +|b2|/|n|^2 n
  force_i = m * (dE_dphi * b2_norm / m_sq);
  force_l = n * (-dE_dphi * b2_norm / n_sq);
  const T p = b2_sq > T(0) ? dot(b1, b2) / b2_sq : T(0);
  const T q = b2_sq > T(0) ? dot(b3, b2) / b2_sq : T(0);
  // x_j and x_k take the rest so that the net force and torque vanish.
  force_j = force_i * (-p - T(1)) + force_l * q;
  force_k = force_i * p + force_l * (-q - T(1));
}

// E = k (1 + cos(n phi - phase)).
template <typename T>
MDSIM_HD TorsionResult<T> periodic_torsion(const Vec3<T>& b1, const Vec3<T>& b2, const Vec3<T>& b3,
                                           int periodicity, T phase_rad, T k_kj_per_mol) {
  const T phi = dihedral_angle(b1, b2, b3);
  const T arg = T(periodicity) * phi - phase_rad;
  TorsionResult<T> out;
  out.energy = k_kj_per_mol * (T(1) + pmath::cos_(arg));
  const T dE_dphi = -k_kj_per_mol * T(periodicity) * pmath::sin_(arg);
  dihedral_forces(b1, b2, b3, dE_dphi, out.force_i, out.force_j, out.force_k, out.force_l);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The bonded terms as the platforms iterate them: each term type has a parameter struct and an
// evaluate_bonded overload taking its parameters and a displacement function d(a, b) = x_b - x_a
// over the term's own atom slots (0 .. N-1); the caller decides how displacements are formed
// (double on the CPU; double, rounded once, on the GPU) and adds force[s] to atom s of the term.
// A new bonded term adds its physics function above, a parameter struct and an overload here.

template <typename T, int N>
struct BondedResult {
  T energy;
  Vec3<T> force[N];
};

template <typename T>
struct HarmonicBondParams {
  T length_nm;
  T k_kj_per_mol_nm2;
};

template <typename T>
struct HarmonicAngleParams {  // slot 1 is the vertex
  T angle_rad;
  T k_kj_per_mol_rad2;
};

template <typename T>
struct PeriodicTorsionParams {
  int periodicity;
  T phase_rad;
  T k_kj_per_mol;
};

template <typename T, typename Delta>
MDSIM_HD BondedResult<T, 2> evaluate_bonded(const HarmonicBondParams<T>& p, const Delta& d) {
  const BondResult<T> r = harmonic_bond(d(0, 1), p.length_nm, p.k_kj_per_mol_nm2);
  return {r.energy, {r.force_i, r.force_j}};
}

template <typename T, typename Delta>
MDSIM_HD BondedResult<T, 3> evaluate_bonded(const HarmonicAngleParams<T>& p, const Delta& d) {
  const AngleResult<T> r = harmonic_angle(d(1, 0), d(1, 2), p.angle_rad, p.k_kj_per_mol_rad2);
  return {r.energy, {r.force_i, r.force_j, r.force_k}};
}

template <typename T, typename Delta>
MDSIM_HD BondedResult<T, 4> evaluate_bonded(const PeriodicTorsionParams<T>& p, const Delta& d) {
  const TorsionResult<T> r = periodic_torsion(d(0, 1), d(1, 2), d(2, 3), p.periodicity, p.phase_rad, p.k_kj_per_mol);
  return {r.energy, {r.force_i, r.force_j, r.force_k, r.force_l}};
}

}  // namespace mdsim
