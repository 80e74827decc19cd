// Holonomic distance constraints on the CPU reference platform, as OpenMM's reference platform
// solves them: SETTLE (physics/settle.hpp, analytic) for rigid three-site waters, CCMA for
// every other constraint, both from the platform-neutral ConstraintPlan (platform/constraint_plan).
// CCMA is a Newton iteration on the constraint multipliers preconditioned with the plan's inverse
// coupling matrix; each iteration is a parallel update of all constraints (no sequential sweep), as
// the CUDA kernels run it. Tolerances have OpenMM's meaning (see constraint_plan.hpp).
#pragma once

#include <vector>

#include "physics/vec3.hpp"
#include "platform/constraint_plan.hpp"
#include "model/system.hpp"

namespace mdsim {

class CpuConstraints {
 public:
  // Builds the plan (which throws RuntimeError for an invalid constraint; see ConstraintPlan).
  CpuConstraints(const System& system, const std::vector<double>& masses_amu);

  const ConstraintPlan& plan() const { return plan_; }
  int num_constraints() const { return plan_.num_constraints(); }
  bool empty() const { return plan_.empty(); }

  // Moves `positions` (the unconstrained new positions) onto the constraint surface with
  // displacements along the constraint vectors of `reference` (constrained old positions; may be
  // the same values as `positions`, as for Context::apply_constraints).
  void apply_positions(const std::vector<Vec3d>& reference, std::vector<Vec3d>& positions, double tolerance);

  // Removes the velocity components along the constraints of the geometry `positions`.
  void apply_velocities(const std::vector<Vec3d>& positions, std::vector<Vec3d>& velocities, double tolerance);

  // Largest |r - d| / d over all constraints (System::constraints).
  double max_relative_deviation(const std::vector<Vec3d>& positions) const {
    return plan_.max_relative_deviation(positions);
  }

  // CCMA iterations of the last apply_* call; whether it reached the tolerance.
  int last_iterations() const { return last_iterations_; }
  bool last_converged() const { return last_converged_; }

 private:
  // CCMA on x (positions or velocities) along the constraint vectors of `reference`: every iteration
  // linearise(c) sets delta_[c] and says whether constraint c is converged; until all are, the
  // multipliers are preconditioned by the inverse coupling matrix and x moved along the constraints.
  template <typename Linearise>
  void run_ccma(const std::vector<Vec3d>& reference, std::vector<Vec3d>& x, Linearise&& linearise);

  ConstraintPlan plan_;
  // Work arrays, one per CCMA constraint.
  std::vector<Vec3d> r_ref_;
  std::vector<double> r_ref2_, delta_, delta_tmp_;
  int last_iterations_ = 0;
  bool last_converged_ = true;
};

}  // namespace mdsim
