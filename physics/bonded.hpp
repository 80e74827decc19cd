// Bonded interactions, each written once for host and device (MDSIM_HD), templated on the real
// type T (float or double). Pure math: the caller supplies displacement vectors (so it decides
// about periodic images) and adds the returned forces to its own accumulators.
// Units: nm, rad, kJ/mol; forces in kJ/mol/nm. Conventions follow OpenMM's HarmonicBondForce,
// HarmonicAngleForce, PeriodicTorsionForce, RBTorsionForce, CMAPTorsionForce and the CustomTorsionForce
// harmonic improper of CHARMM (charmm36.xml).
#pragma once

#include "physics/cmap.hpp"
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

// A term of N atoms: its energy and the force on each of its atom slots.
template <typename T, int N>
struct BondedResult {
  T energy;
  Vec3<T> force[N];
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

// Ryckaert-Bellemans: E = sum_{n=0..5} C_n cos^n(psi) with psi = phi - pi (the polymer convention, as
// OpenMM's RBTorsionForce and GROMACS's dihedral type 3): cos(psi) = -cos(phi).
template <typename T>
MDSIM_HD TorsionResult<T> rb_torsion(const Vec3<T>& b1, const Vec3<T>& b2, const Vec3<T>& b3, const T (&c)[6]) {
  const T phi = dihedral_angle(b1, b2, b3);
  const T cos_psi = -pmath::cos_(phi);
  const T sin_psi = -pmath::sin_(phi);
  // E and dE/dcos(psi) by Horner's rule.
  T energy = c[5];
  T dE_dcos = T(5) * c[5];
  for (int n = 4; n >= 1; --n) {
    energy = energy * cos_psi + c[n];
    dE_dcos = dE_dcos * cos_psi + T(n) * c[n];
  }
  energy = energy * cos_psi + c[0];
  TorsionResult<T> out;
  out.energy = energy;
  const T dE_dphi = -sin_psi * dE_dcos;  // d cos(psi)/d phi = -sin(psi)
  dihedral_forces(b1, b2, b3, dE_dphi, out.force_i, out.force_j, out.force_k, out.force_l);
  return out;
}

// Harmonic improper as CHARMM and OpenMM's charmm36.xml define it (a CustomTorsionForce):
// E = k dtheta^2 (no 1/2), dtheta = min(diff, 2pi - diff), diff = |theta - theta0|, theta the dihedral
// angle in [-pi, pi]. For theta0 in [-pi, pi] dtheta is |theta - theta0| wrapped into [0, pi].
template <typename T>
MDSIM_HD TorsionResult<T> harmonic_improper(const Vec3<T>& b1, const Vec3<T>& b2, const Vec3<T>& b3, T theta0_rad,
                                            T k_kj_per_mol_rad2) {
  const T theta = dihedral_angle(b1, b2, b3);
  const T diff = theta - theta0_rad;
  const T abs_diff = pmath::fabs_(diff);
  const T sign = diff < T(0) ? T(-1) : T(1);  // d|diff|/d theta
  const T around = T(2.0 * pmath::kPi) - abs_diff;
  // The smaller of the two ways round and its derivative by theta (OpenMM's min takes the first on a tie).
  const bool direct = abs_diff <= around;
  const T dtheta = direct ? abs_diff : around;
  const T ddtheta = direct ? sign : -sign;
  TorsionResult<T> out;
  out.energy = k_kj_per_mol_rad2 * dtheta * dtheta;
  const T dE_dtheta = T(2) * k_kj_per_mol_rad2 * dtheta * ddtheta;
  dihedral_forces(b1, b2, b3, dE_dtheta, out.force_i, out.force_j, out.force_k, out.force_l);
  return out;
}

// CMAP: E = map(phi, psi), phi the dihedral of the bond vectors a1..a3, psi that of b1..b3 (each its own
// four atoms: slots 0-3 and 4-7), from the map's bicubic patches (physics/cmap.hpp).
template <typename T>
MDSIM_HD BondedResult<T, 8> cmap_torsion(const CmapMapView<T>& map, const Vec3<T>& a1, const Vec3<T>& a2,
                                         const Vec3<T>& a3, const Vec3<T>& b1, const Vec3<T>& b2, const Vec3<T>& b3) {
  const CmapValue<T> v = cmap_value(map, dihedral_angle(a1, a2, a3), dihedral_angle(b1, b2, b3));
  BondedResult<T, 8> out;
  out.energy = v.energy;
  dihedral_forces(a1, a2, a3, v.dE_dphi, out.force[0], out.force[1], out.force[2], out.force[3]);
  dihedral_forces(b1, b2, b3, v.dE_dpsi, out.force[4], out.force[5], out.force[6], out.force[7]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The bonded terms as the platforms iterate them: each term type has a parameter struct and an
// evaluate_bonded overload taking its parameters and a displacement function d(a, b) = x_b - x_a
// over the term's own atom slots (0 .. N-1); the caller decides how displacements are formed
// (double on the CPU; double, rounded once, on the GPU) and adds force[s] to atom s of the term.
// A new bonded term adds its physics function above, a parameter struct and an overload here.
// Every caller passes the System's shared tables too (BondedTables); a term type that carries all its
// parameters has a two-argument overload, which the three-argument form below forwards to.

// Read-only data the terms of a type share instead of carrying it each (one copy per System): CMAP's
// map table. Each platform builds it once from the System (model/cmap: make_cmap_table), in host memory
// on the CPU platform and device memory on CUDA, and hands it to every evaluation.
template <typename T>
struct BondedTables {
  const CmapMapView<T>* cmap_maps = nullptr;  // one view per System::cmap_maps entry
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

template <typename T>
struct RbTorsionParams {
  T c_kj_per_mol[6];  // C0 .. C5
};

template <typename T>
struct HarmonicImproperParams {
  T theta0_rad;
  T k_kj_per_mol_rad2;  // E = k dtheta^2
};

template <typename T>
struct CmapTorsionParams {  // slots 0-3: phi's atoms, 4-7: psi's
  int map;                  // index into BondedTables::cmap_maps
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

template <typename T, typename Delta>
MDSIM_HD BondedResult<T, 4> evaluate_bonded(const RbTorsionParams<T>& p, const Delta& d) {
  const TorsionResult<T> r = rb_torsion(d(0, 1), d(1, 2), d(2, 3), p.c_kj_per_mol);
  return {r.energy, {r.force_i, r.force_j, r.force_k, r.force_l}};
}

template <typename T, typename Delta>
MDSIM_HD BondedResult<T, 4> evaluate_bonded(const HarmonicImproperParams<T>& p, const Delta& d) {
  const TorsionResult<T> r = harmonic_improper(d(0, 1), d(1, 2), d(2, 3), p.theta0_rad, p.k_kj_per_mol_rad2);
  return {r.energy, {r.force_i, r.force_j, r.force_k, r.force_l}};
}

// The form every platform calls: a term with its own parameters ignores the tables...
template <typename Params, typename Delta, typename T>
MDSIM_HD auto evaluate_bonded(const Params& p, const Delta& d, const BondedTables<T>&) -> decltype(evaluate_bonded(p, d)) {
  return evaluate_bonded(p, d);
}

// ... and CMAP reads its map from them.
template <typename T, typename Delta>
MDSIM_HD BondedResult<T, 8> evaluate_bonded(const CmapTorsionParams<T>& p, const Delta& d, const BondedTables<T>& tables) {
  return cmap_torsion(tables.cmap_maps[p.map], d(0, 1), d(1, 2), d(2, 3), d(4, 5), d(5, 6), d(6, 7));
}

}  // namespace mdsim
