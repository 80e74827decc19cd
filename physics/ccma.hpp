// CCMA's per-constraint step, written once for both platforms (kernels/cpu/cpu_constraints and the
// CUDA CCMA blocks): the linearised Lagrange multiplier of one distance constraint and whether that
// constraint has converged. The solvers precondition the multipliers with the inverse coupling
// matrix and move the atoms along the reference constraint vectors r_ref (displacement
// delta r_ref w_a on atom a, -delta r_ref w_b on atom b). Units: nm, ps, amu.
#pragma once

#include "physics/math.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

// Squared bounds (1 -/+ tolerance)^2 of a relative length tolerance, for ccma_position_delta.
struct CcmaBounds {
  double lower, upper;
};
MDSIM_HD CcmaBounds ccma_bounds(double tolerance) {
  return {(1.0 - tolerance) * (1.0 - tolerance), (1.0 + tolerance) * (1.0 + tolerance)};
}

// Positions: rp = x_a - x_b now, constraint length d. The displacement delta r_ref (w_a, -w_b)
// changes |rp|^2 by 2 delta (rp . r_ref)(w_a + w_b) to first order, so
// delta = reduced_mass (d^2 - |rp|^2) / (2 rp . r_ref). Converged when |rp| / d lies within the bounds.
MDSIM_HD double ccma_position_delta(const Vec3d& rp, const Vec3d& r_ref, double distance_nm,
                                           double reduced_mass, const CcmaBounds& bounds, bool& converged) {
  const double rp2 = dot(rp, rp);
  const double d2 = distance_nm * distance_nm;
  converged = rp2 >= bounds.lower * d2 && rp2 <= bounds.upper * d2;
  return 0.5 * reduced_mass * (d2 - rp2) / dot(rp, r_ref);
}

// Velocities: vr = v_a - v_b; the relative rate of length change vr . r_ref / |r_ref|^2 (1/ps) is
// removed: delta = -reduced_mass rate. Converged when |rate| <= tolerance.
MDSIM_HD double ccma_velocity_delta(const Vec3d& vr, const Vec3d& r_ref, double r_ref2, double reduced_mass,
                                           double tolerance, bool& converged) {
  const double rate = dot(vr, r_ref) / r_ref2;
  converged = pmath::fabs_(rate) <= tolerance;
  return -reduced_mass * rate;
}

}  // namespace mdsim
