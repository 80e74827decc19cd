// The CUDA platform's energy minimiser: the L-BFGS driver of platform/minimizer
// (minimize_with_backend: the same algorithm, on the constraint manifold) on a device backend.
// Host-only header (no CUDA syntax).
//
// Every per-particle vector (positions, gradients, search direction, the correction pairs) is a
// device array of Vec3d (3N doubles). Energies and forces come from a CudaForceEvaluator: positions
// are written into its device position array by a kernel, its forces are read as 64-bit fixed point
// from its device force array, and only the total energy reaches the host. Dot products and per-atom
// max norms are deterministic (each block sums a fixed share of the particles, the last block adds
// the block partials in block order), so a minimisation is bit-reproducible run to run. The
// two-loop recursion's coefficients (alpha_k = rho_k s_k . p, ...) stay in device memory, read by
// the next kernel. What the host sees, each a download of one double: per line-search trial point
// its energy and g . p; per iteration the force measure (max |g_i|), |p|_max, g . p at the start of
// the line search, and s . y, s . s, y . y of the new correction pair. The final constraint check
// downloads the positions once.
//
// Constraints: the retraction of trial points (SETTLE + CCMA, unit masses), the projection of
// gradients and directions onto the tangent space (unit-mass velocity constraints) and the start
// positions' projection (system masses) run on the device through CudaMinimizerConstraints, which
// cuda_constraints implements with the CUDA context's SETTLE and CCMA kernels.
#pragma once

#include "kernels/cuda/cuda_forces.hpp"
#include "physics/vec3.hpp"
#include "platform/constraint_plan.hpp"
#include "platform/context.hpp"  // MinimizationResult
#include "platform/minimizer.hpp"  // ForceCriterion, MinimizerBackend
#include "model/system.hpp"

namespace mdsim {

// Constraint operations on device arrays of one Vec3d per particle, enqueued on the force
// evaluator's stream (device_stream()). CudaMinimizerConstraintSolver (cuda_constraints.hpp)
// implements them.
class CudaMinimizerConstraints {
 public:
  virtual ~CudaMinimizerConstraints() = default;
  // x (= reference + a step) onto the constraint surface along the constraint vectors of
  // `reference`, with unit masses (the minimiser's retraction). x and reference do not overlap.
  virtual void retract(const Vec3d* reference, Vec3d* x, double tolerance) = 0;
  // The components of v along the constraints of the geometry `positions` removed, with unit masses
  // (the Euclidean projection onto the tangent space). v and positions do not overlap.
  virtual void project(const Vec3d* positions, Vec3d* v, double tolerance) = 0;
  // x onto the constraint surface along its own constraint vectors, with the system's masses.
  virtual void constrain(Vec3d* x, double tolerance) = 0;
};

// What the last cuda_minimize did, for tests and diagnostics.
struct CudaMinimizationStats {
  long evaluations = 0;       // force evaluations (each reads the energy: CudaForceEvaluator::energies(),
                              // whose overflow check and energy read are two downloads)
  long scalar_downloads = 0;  // the minimiser's own downloads, one double each
  long vector_transfers = 0;  // per-particle arrays copied between host and device (the final check: 1)
};

// Minimises from the evaluator's current device positions and leaves the result there (the last
// evaluation is of the final positions). `host_constraints` (system masses) decides whether the
// system is constrained and checks the final positions; `device_constraints` must be given when it
// has constraints. Arguments and result as minimize_on_manifold's. Synchronises.
MinimizationResult cuda_minimize(CudaForceEvaluator& evaluator, const System& system,
                                 const ConstraintPlan& host_constraints, CudaMinimizerConstraints* device_constraints,
                                 double tolerance_kj_per_mol_nm, int max_iterations, double constraint_tolerance,
                                 ForceCriterion criterion = ForceCriterion::MaxAtom,
                                 CudaMinimizationStats* stats = nullptr);

}  // namespace mdsim
