// SETTLE for one rigid three-site water (Miyamoto & Kollman, J. Comput. Chem. 13, 952 (1992)):
// the analytic solution of the three distance constraints O-H1, O-H2, H1-H2, for positions
// (settle_positions) and, RATTLE-like, for velocities (settle_velocities). Host and device code
// alike (MDSIM_HD); C++17 subset. Units: nm, amu, nm/ps.
//
// Positions: given the constrained geometry at the start of the step (a0, b0, c0: O, H1, H2) and the
// unconstrained new positions (a1, b1, c1), returns new positions that satisfy the constraints
// exactly, keep the centre of mass of (a1, b1, c1), and differ from them by displacements along the
// old bond vectors (constraint forces of the old geometry), as SHAKE would converge to. The canonical
// triangle assumes equal hydrogen masses (the caller uses its general solver otherwise).
//
// Velocities: removes the relative velocity along each of the three bonds with impulses along the
// bonds (any masses), so that d|r_ij|/dt = 0 for the given geometry.
#pragma once

#include "physics/math.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

struct SettleGeometry {
  double oh_distance_nm;
  double hh_distance_nm;
};

// v / |v|, with one division.
template <typename T>
MDSIM_HD Vec3<T> settle_unit_(const Vec3<T>& v) {
  return v * (T(1) / pmath::sqrt_(dot(v, v)));
}

// settle_positions on positions relative to the old oxygen position a0, which keeps the numbers small
// (and is what the fused CUDA step holds in registers): old_b = b0 - a0, old_c = c0 - a0; in/out:
// new_a, new_b, new_c, the new positions minus a0.
template <typename T>
MDSIM_HD void settle_positions_relative(const Vec3<T>& old_b, const Vec3<T>& old_c, Vec3<T>& new_a, Vec3<T>& new_b,
                                        Vec3<T>& new_c, T mass_o, T mass_h, T oh_distance, T hh_distance) {
  using pmath::sqrt_;
  const T inv_total = T(1) / (mass_o + T(2) * mass_h);
  const Vec3<T> com = (new_a * mass_o + (new_b + new_c) * mass_h) * inv_total;
  const Vec3<T> a1 = new_a - com;
  const Vec3<T> b1 = new_b - com;
  const Vec3<T> c1 = new_c - com;

  // Frame: z normal to the old molecular plane, x perpendicular to z and to the new O position
  // (so the new O lies in the y-z plane), y completing the right-handed set.
  Vec3<T> ez = cross(old_b, old_c);
  Vec3<T> ex = cross(a1, ez);
  Vec3<T> ey = cross(ez, ex);
  ez = settle_unit_(ez);
  ex = settle_unit_(ex);
  ey = settle_unit_(ey);
  auto to_frame = [&](const Vec3<T>& v) { return Vec3<T>(dot(v, ex), dot(v, ey), dot(v, ez)); };
  const Vec3<T> b0f = to_frame(old_b);  // z component is 0 by construction
  const Vec3<T> c0f = to_frame(old_c);
  const Vec3<T> a1f = to_frame(a1);     // x component is 0 by construction
  const Vec3<T> b1f = to_frame(b1);
  const Vec3<T> c1f = to_frame(c1);

  // Canonical triangle about the centre of mass: O at (0, ra), H at (-/+ rc, -rb).
  const T rc = T(0.5) * hh_distance;
  const T height = sqrt_(oh_distance * oh_distance - rc * rc);
  const T ra = height * T(2) * mass_h * inv_total;
  const T rb = height - ra;

  // Tilts keeping each atom's z (displacements lie in the old plane): phi about x, psi about y.
  const T sin_phi = a1f.z / ra;
  const T cos_phi = sqrt_(T(1) - sin_phi * sin_phi);
  const T sin_psi = (b1f.z - c1f.z) / (T(2) * rc * cos_phi);
  const T cos_psi = sqrt_(T(1) - sin_psi * sin_psi);

  const T ya2 = ra * cos_phi;
  T xb2 = -rc * cos_psi;
  const T yb2 = -rb * cos_phi - rc * sin_psi * sin_phi;
  const T yc2 = -rb * cos_phi + rc * sin_psi * sin_phi;
  // Round-off guard: make |b2 - c2| equal the H-H distance exactly (xc2 = -xb2).
  {
    const T dy = yb2 - yc2, dz = b1f.z - c1f.z;
    const T x_needed = T(0.5) * sqrt_(hh_distance * hh_distance - dy * dy - dz * dz);
    xb2 = -x_needed;
  }

  // Rotation about z by theta: no net torque of the (in-plane) constraint displacements about the
  // old positions, alpha sin(theta) + beta cos(theta) = gamma (hydrogen masses equal, O at origin).
  const T alpha = xb2 * (b0f.x - c0f.x) + b0f.y * yb2 + c0f.y * yc2;
  const T beta = xb2 * (c0f.y - b0f.y) + b0f.x * yb2 + c0f.x * yc2;
  const T gamma = b0f.x * b1f.y - b1f.x * b0f.y + c0f.x * c1f.y - c1f.x * c0f.y;
  const T ab2 = alpha * alpha + beta * beta;
  const T sin_theta = (alpha * gamma - beta * sqrt_(ab2 - gamma * gamma)) / ab2;
  const T cos_theta = sqrt_(T(1) - sin_theta * sin_theta);

  const Vec3<T> a3f(-ya2 * sin_theta, ya2 * cos_theta, a1f.z);
  const Vec3<T> b3f(xb2 * cos_theta - yb2 * sin_theta, xb2 * sin_theta + yb2 * cos_theta, b1f.z);
  const Vec3<T> c3f(-xb2 * cos_theta - yc2 * sin_theta, -xb2 * sin_theta + yc2 * cos_theta, c1f.z);

  auto from_frame = [&](const Vec3<T>& v) { return ex * v.x + ey * v.y + ez * v.z; };
  new_a = com + from_frame(a3f);
  new_b = com + from_frame(b3f);
  new_c = com + from_frame(c3f);
}

// In/out: pa, pb, pc (O, H1, H2 new positions). mass_o, mass_h: oxygen and hydrogen masses.
template <typename T>
MDSIM_HD void settle_positions(const Vec3<T>& a0, const Vec3<T>& b0, const Vec3<T>& c0, Vec3<T>& pa, Vec3<T>& pb,
                               Vec3<T>& pc, T mass_o, T mass_h, T oh_distance, T hh_distance) {
  Vec3<T> da = pa - a0, db = pb - a0, dc = pc - a0;
  settle_positions_relative(b0 - a0, c0 - a0, da, db, dc, mass_o, mass_h, oh_distance, hh_distance);
  pa = a0 + da;
  pb = a0 + db;
  pc = a0 + dc;
}

// In/out: va, vb, vc. Positions a, b, c are the (constrained) geometry; inverse masses may differ.
template <typename T>
MDSIM_HD void settle_velocities(const Vec3<T>& a, const Vec3<T>& b, const Vec3<T>& c, Vec3<T>& va, Vec3<T>& vb,
                                Vec3<T>& vc, T inv_mass_a, T inv_mass_b, T inv_mass_c) {
  const Vec3<T> e_ab = settle_unit_(b - a), e_bc = settle_unit_(c - b), e_ca = settle_unit_(a - c);
  // Impulses t_ab, t_bc, t_ca along the bonds: va += (t_ab e_ab - t_ca e_ca) wa, vb += (t_bc e_bc -
  // t_ab e_ab) wb, vc += (t_ca e_ca - t_bc e_bc) wc; require zero relative velocity along each bond.
  // This is the symmetric 3x3 system K t = -u below.
  const T u_ab = dot(vb - va, e_ab);
  const T u_bc = dot(vc - vb, e_bc);
  const T u_ca = dot(va - vc, e_ca);
  const T k11 = -(inv_mass_a + inv_mass_b), k22 = -(inv_mass_b + inv_mass_c), k33 = -(inv_mass_c + inv_mass_a);
  const T k12 = inv_mass_b * dot(e_ab, e_bc);
  const T k13 = inv_mass_a * dot(e_ab, e_ca);
  const T k23 = inv_mass_c * dot(e_bc, e_ca);
  const T r1 = -u_ab, r2 = -u_bc, r3 = -u_ca;
  // Cramer's rule.
  const T c11 = k22 * k33 - k23 * k23;
  const T c12 = k13 * k23 - k12 * k33;
  const T c13 = k12 * k23 - k13 * k22;
  const T det = k11 * c11 + k12 * c12 + k13 * c13;
  const T inv_det = T(1) / det;
  const T c22 = k11 * k33 - k13 * k13;
  const T c23 = k12 * k13 - k11 * k23;
  const T c33 = k11 * k22 - k12 * k12;
  const T t_ab = (c11 * r1 + c12 * r2 + c13 * r3) * inv_det;
  const T t_bc = (c12 * r1 + c22 * r2 + c23 * r3) * inv_det;
  const T t_ca = (c13 * r1 + c23 * r2 + c33 * r3) * inv_det;
  va += (e_ab * t_ab - e_ca * t_ca) * inv_mass_a;
  vb += (e_bc * t_bc - e_ab * t_ab) * inv_mass_b;
  vc += (e_ca * t_ca - e_bc * t_bc) * inv_mass_c;
}

}  // namespace mdsim
