// Local energy minimisation on the CPU reference platform: L-BFGS (up to 64 correction pairs, a
// gradient-driven strong-Wolfe line search, 0.05 nm per-atom step limit) on the constraint manifold.
//
// Constraints: positions start on the constraint surface (SETTLE + CCMA, as OpenMM's minimiser
// applies them first) and stay on it: every trial point x + a p is projected back along the
// constraint vectors of x (a retraction, SETTLE + CCMA to 1e-10 relative), and gradients and search
// directions are projected onto the tangent space (forces minus their components along the
// constraints, Euclidean metric). OpenMM's LocalEnergyMinimizer instead adds a harmonic penalty
// k (r - d)^2 and raises k until the constraints hold; we tried that (also with Lagrange-multiplier
// estimates) and it needs 2-6x more iterations on ala2_water, because the penalty adds modes as
// stiff as k next to the soft intermolecular ones. The end state is the same: exactly constrained
// positions at which the constraint-free force vanishes.
//
// Convergence (ForceCriterion::MaxAtom, what Context::minimize uses): the largest per-atom force,
// constraint components removed, is below the tolerance. OpenMM 7.7 stops when the RMS per-atom
// force (sqrt(Σ|f_i|^2 / N), of its penalty-augmented gradient) is below the tolerance, which is much
// looser; ForceCriterion::RmsAtom reproduces that for comparisons with OpenMM's figures.
#pragma once

#include <functional>
#include <vector>

#include "engine/context.hpp"  // MinimizationResult
#include "engine/system.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_forces.hpp"

namespace mdsim {

enum class ForceCriterion {
  MaxAtom,  // max_i |f_i| < tolerance (mdsim's meaning of the tolerance)
  RmsAtom,  // sqrt(Σ_i |f_i|^2 / N) < tolerance (OpenMM 7.7's LocalEnergyMinimizer)
};

// Energy (kJ/mol, returned) and forces (kJ/mol/nm, overwritten) at the given positions: whatever
// platform computes them (the CUDA context passes its device evaluator).
using EnergyAndForces = std::function<double(const std::vector<Vec3d>& positions, std::vector<Vec3d>& forces)>;

// The minimiser itself, for any source of energies and forces (the L-BFGS vector algebra and the
// constraint projections run here, on the host).
// positions: in/out. tolerance: kJ/mol/nm. max_iterations: L-BFGS iterations, 0 = until converged
// (or until no line search makes progress). constraint_tolerance: relative, as the integrators';
// `converged` requires the constraints within it. `constraints` (system masses) puts the start
// positions onto the constraint surface.
MinimizationResult minimize_on_manifold(const EnergyAndForces& energy_and_forces, const System& system,
                                        CpuConstraints& constraints, std::vector<Vec3d>& positions,
                                        double tolerance_kj_per_mol_nm, int max_iterations,
                                        double constraint_tolerance,
                                        ForceCriterion criterion = ForceCriterion::MaxAtom);

// The same with the CPU reference evaluator.
MinimizationResult cpu_minimize(CpuForceEvaluator& evaluator, const System& system, CpuConstraints& constraints,
                                std::vector<Vec3d>& positions, double tolerance_kj_per_mol_nm, int max_iterations,
                                double constraint_tolerance, ForceCriterion criterion = ForceCriterion::MaxAtom);

// Forces with their components along the constraints removed: f - J^T (J J^T)^-1 J f for the
// constraint Jacobian J at `positions` (SETTLE + CCMA with unit masses). `projector` must have
// been built with unit masses.
void project_out_constraint_forces(CpuConstraints& projector, const std::vector<Vec3d>& positions,
                                   std::vector<Vec3d>& forces);

// max_i |v_i|
double max_norm(const std::vector<Vec3d>& vectors);

}  // namespace mdsim
