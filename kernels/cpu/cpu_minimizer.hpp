// The minimiser's CPU backend: the L-BFGS driver of platform/minimizer on host arrays of Vec3d,
// with CpuConstraints for the retraction and the tangent projections.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/minimizer.hpp"
#include "model/system.hpp"

namespace mdsim {

using EnergyAndForces = std::function<double(const std::vector<Vec3d>& positions, std::vector<Vec3d>& forces)>;

// The minimiser on the host (the CPU backend), for any source of energies and forces.
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
