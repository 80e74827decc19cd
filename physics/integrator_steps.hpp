// Per-atom pieces of the integrators, shared by the CPU reference platform (plain loops) and the
// CUDA platform (one thread per atom). Units: nm, ps, amu, kJ/mol; velocities nm/ps, forces
// kJ/mol/nm (1 kJ/mol/nm / amu = 1 nm/ps^2). An inverse mass of 0 marks a fixed particle: the pieces
// leave it untouched. Host and device code alike (MDSIM_HD); C++17 subset.
//
// LangevinMiddle (OpenMM's LangevinMiddleIntegrator, BAOAB with the O step in the middle), one step:
//   v += dt F/m                        velocity_kick
//   constrain velocities
//   x' = x + dt/2 v                    drift
//   v  = a v + sqrt(kT (1 - a^2)/m) ξ  langevin_o_step, a = exp(-γ dt), ξ = gaussian3(seed, Langevin, step, atom)
//   x' += dt/2 v                       drift;  x_unc = x'
//   constrain positions x' (reference x)
//   v += (x' - x_unc)/dt;  x = x'      constraint_velocity_correction
// Verlet (OpenMM's VerletIntegrator, leapfrog), one step:
//   v += dt F/m;  x' = x + dt v;  constrain x';  v = (x' - x)/dt;  x = x'   leapfrog_velocity
#pragma once

#include "physics/math.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

// Boltzmann constant, kJ/mol/K (DESIGN numerical policy; the value OpenMM uses).
constexpr double kBoltzmannKjPerMolK = 0.00831446261815324;

template <typename T>
MDSIM_HD Vec3<T> velocity_kick(const Vec3<T>& v, const Vec3<T>& force, T inverse_mass, T dt) {
  return v + force * (dt * inverse_mass);
}

template <typename T>
MDSIM_HD Vec3<T> drift(const Vec3<T>& x, const Vec3<T>& v, T dt) {
  return x + v * dt;
}

// Coefficients of the Ornstein-Uhlenbeck (O) step for one time step: v' = a v + noise sqrt(1/m) ξ.
struct LangevinCoefficients {
  double velocity_scale;   // a = exp(-γ dt)
  double noise_sqrt_kt;    // sqrt(kT (1 - a^2)), sqrt(kJ/mol) = nm/ps sqrt(amu)
};

MDSIM_HD LangevinCoefficients langevin_coefficients(double friction_per_ps, double dt_ps, double temperature_k) {
  LangevinCoefficients c;
  c.velocity_scale = pmath::exp_(-friction_per_ps * dt_ps);
  const double kt = kBoltzmannKjPerMolK * temperature_k;
  c.noise_sqrt_kt = pmath::sqrt_(kt * (1.0 - c.velocity_scale * c.velocity_scale));
  return c;
}

template <typename T>
MDSIM_HD Vec3<T> langevin_o_step(const Vec3<T>& v, T inverse_mass, const LangevinCoefficients& c, const Vec3<T>& normals) {
  return v * T(c.velocity_scale) + normals * (T(c.noise_sqrt_kt) * pmath::sqrt_(inverse_mass));
}

// After the position constraints moved x_unconstrained to x_constrained within a step of length dt.
template <typename T>
MDSIM_HD Vec3<T> constraint_velocity_correction(const Vec3<T>& v, const Vec3<T>& x_constrained,
                                                const Vec3<T>& x_unconstrained, T inverse_dt) {
  return v + (x_constrained - x_unconstrained) * inverse_dt;
}

// constraint_velocity_correction in two halves, for a caller that cannot keep both v and x_unconstrained
// until x_constrained is known: v + (x_c - x_u)/dt = (v - x_u/dt) + x_c/dt. The positions should be
// relative to a nearby origin (the step-start position of the molecule's first atom), so that x/dt is of
// the size of v and the split costs no precision.
template <typename T>
MDSIM_HD Vec3<T> velocity_correction_base(const Vec3<T>& v, const Vec3<T>& x_unconstrained, T inverse_dt) {
  return v - x_unconstrained * inverse_dt;
}
template <typename T>
MDSIM_HD Vec3<T> velocity_correction_finish(const Vec3<T>& base, const Vec3<T>& x_constrained, T inverse_dt) {
  return base + x_constrained * inverse_dt;
}

template <typename T>
MDSIM_HD Vec3<T> leapfrog_velocity(const Vec3<T>& x_new, const Vec3<T>& x_old, T inverse_dt) {
  return (x_new - x_old) * inverse_dt;
}

// Twice the kinetic energy of one particle, m v^2 (kJ/mol); sum, then halve.
template <typename T>
MDSIM_HD T twice_kinetic_energy(T mass, const Vec3<T>& v) {
  return mass * dot(v, v);
}

// Maxwell-Boltzmann velocity of one particle at kT from three standard normals.
template <typename T>
MDSIM_HD Vec3<T> thermal_velocity(T inverse_mass, T kt, const Vec3<T>& normals) {
  return normals * pmath::sqrt_(kt * inverse_mass);
}

}  // namespace mdsim
