// Local energy minimisation, platform-neutral: L-BFGS (up to 64 correction pairs, a
// gradient-driven strong-Wolfe line search, 0.05 nm per-atom step limit) on the constraint manifold.
//
// Constraints: positions start on the constraint surface (SETTLE + CCMA, as OpenMM's minimiser
// applies them first) and stay on it: every trial point x + a p is projected back along the
// constraint vectors of x (a retraction, SETTLE + CCMA to 1e-10 relative), and gradients and search
// directions are projected onto the tangent space (forces minus their components along the
// constraints, Euclidean metric). OpenMM's LocalEnergyMinimizer instead adds a harmonic penalty
// k (r - d)^2 and raises k until the constraints hold, which needs more iterations: the penalty adds
// modes as stiff as k next to the soft intermolecular ones. The end state is the same: exactly
// constrained positions at which the constraint-free force vanishes.
//
// Convergence (ForceCriterion::MaxAtom, what Context::minimize uses): the largest per-atom force,
// constraint components removed, is below the tolerance. OpenMM 7.7 stops when the RMS per-atom
// force (sqrt(Σ|f_i|^2 / N), of its penalty-augmented gradient) is below the tolerance, which is much
// looser; ForceCriterion::RmsAtom reproduces that for comparisons with OpenMM's figures.
//
// The algorithm (L-BFGS driver: two-loop recursion, line search, history, convergence test) is written
// once, in minimize_with_backend, over a MinimizerBackend: the vector algebra and the objective. The
// CPU backend (minimize_on_manifold, cpu_minimize) keeps host arrays of Vec3d; the CUDA backend
// (kernels/cuda/cuda_minimizer) keeps device arrays and never moves a per-particle vector between
// host and device while it iterates.
#pragma once

#include <cstddef>

#include "platform/context.hpp"  // MinimizationResult

namespace mdsim {

enum class ForceCriterion {
  MaxAtom,  // max_i |f_i| < tolerance (mdsim's meaning of the tolerance)
  RmsAtom,  // sqrt(Σ_i |f_i|^2 / N) < tolerance (OpenMM 7.7's LocalEnergyMinimizer)
};

// Energy (kJ/mol, returned) and forces (kJ/mol/nm, overwritten) at the given positions: whatever
// platform computes them (the CUDA context passes its device evaluator).
// Trial points are projected onto the constraint surface to this relative accuracy (tighter than any
// integrator tolerance), gradients and directions onto its tangent space until every constraint's
// relative rate |v . r| / r^2 is below kMinimizerProjectionTolerance. Every backend uses these.
inline constexpr double kMinimizerManifoldTolerance = 1e-10;
inline constexpr double kMinimizerProjectionTolerance = 1e-9;

// What the L-BFGS driver needs: vector algebra on per-particle 3-vectors and the objective on the
// constraint manifold. Vectors are named by handles the backend hands out and owns (host arrays on
// the CPU, device arrays on the GPU). Coefficients are doubles in numbered slots kept where the
// backend's vector operations read them (device memory on the GPU), so that the two-loop recursion
// makes no host round trip; only the functions returning a double hand a value to the host (and
// synchronise with the device).
class MinimizerBackend {
 public:
  using Vector = int;
  virtual ~MinimizerBackend() = default;

  virtual std::size_t particles() const = 0;
  virtual Vector new_vector() = 0;                           // one 3-vector per particle, contents unspecified
  virtual void reserve_coefficients(std::size_t slots) = 0;  // slots 0 .. slots-1, contents unspecified

  // Per particle i (3-vectors; `to` may be any vector but those it is computed from, except in negate):
  virtual void copy(Vector to, Vector from) = 0;                         // to_i = from_i
  virtual void negate(Vector to, Vector from) = 0;                       // to_i = -from_i (to may be from)
  virtual void scale(Vector v, double a) = 0;                            // v_i *= a
  virtual void add_scaled(Vector to, Vector x, Vector p, double a) = 0;  // to_i = x_i + p_i a
  virtual void subtract(Vector to, Vector a, Vector b) = 0;              // to_i = a_i - b_i
  virtual void add_multiple(Vector v, Vector x, std::size_t slot) = 0;       // v_i += x_i c[slot]
  virtual void subtract_multiple(Vector v, Vector x, std::size_t slot) = 0;  // v_i -= x_i c[slot]
  // Coefficients from dot products (a . b = sum_i a_i . b_i), left in their slots:
  virtual void set_coefficient(std::size_t slot, double factor, Vector a, Vector b) = 0;     // c = factor (a . b)
  virtual void reduce_coefficient(std::size_t slot, double factor, Vector a, Vector b) = 0;  // c = c - factor (a . b)
  // To the host:
  virtual double dot(Vector a, Vector b) = 0;  // sum_i a_i . b_i
  virtual double max_norm(Vector v) = 0;       // max_i |v_i|

  // The objective. constrained(): the system has constraints (otherwise retract, project and
  // constrain are never called).
  virtual bool constrained() const = 0;
  virtual double energy(Vector x) = 0;  // potential energy at x (kJ/mol), as computed
  // Energy at x, as computed (kJ/mol); gradient = minus the force at x with its components along the
  // constraints removed (unit-mass velocity constraints: the Euclidean projection onto the tangent
  // space, to kMinimizerProjectionTolerance).
  virtual double evaluate(Vector x, Vector gradient) = 0;
  // x (= reference + a step) back onto the constraint surface along the constraint vectors of
  // `reference` (unit masses, to kMinimizerManifoldTolerance): the retraction.
  virtual void retract(Vector reference, Vector x) = 0;
  // The direction's tangent component at x (as the gradient's projection).
  virtual void project(Vector x, Vector direction) = 0;
  // x onto the constraint surface with the system's masses, along its own constraint vectors.
  virtual void constrain(Vector x, double tolerance) = 0;
  // Largest |r - d| / d over the system's constraints at x.
  virtual double max_relative_deviation(Vector x) = 0;
};

// InputError for a non-positive tolerance (kJ/mol/nm) or a negative max_iterations.
void check_minimizer_arguments(double tolerance_kj_per_mol_nm, int max_iterations);

// The minimiser, on any backend: `positions` (a vector of `backend`) in/out; arguments as
// minimize_on_manifold's. Throws InputError for a non-positive tolerance or negative max_iterations.
MinimizationResult minimize_with_backend(MinimizerBackend& backend, MinimizerBackend::Vector positions,
                                         double tolerance_kj_per_mol_nm, int max_iterations,
                                         double constraint_tolerance,
                                         ForceCriterion criterion = ForceCriterion::MaxAtom);

}  // namespace mdsim
