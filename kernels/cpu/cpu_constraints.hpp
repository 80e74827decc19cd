// Holonomic distance constraints on the CPU reference platform, as OpenMM's reference platform
// solves them: SETTLE (kernels/physics/settle.hpp, analytic) for rigid three-site waters, CCMA
// (Eastman & Pande, J. Chem. Theory Comput. 6, 434 (2010)) for every other constraint.
//
// CCMA is a Newton iteration on the constraint multipliers preconditioned with the inverse of the
// constraint coupling matrix, built once from the equilibrium geometry (bond angles from the angle
// terms, or from a third constraint closing a triangle). It converges in a few iterations for
// coupled constraints (CH3 groups, allbonds, hangles) where SHAKE crawls, and each iteration is a
// parallel update of all constraints (no sequential sweep), which is what a GPU port needs.
//
// Tolerance (OpenMM's meaning): positions converge when every constraint's length is within a
// relative deviation `tolerance` of its target; velocities when every constraint's relative rate of
// length change |v_ij · r_ij| / |r_ij|^2 is at most `tolerance` per ps.
#pragma once

#include <utility>
#include <vector>

#include "engine/system.hpp"
#include "kernels/physics/vec3.hpp"

namespace mdsim {

class CpuConstraints {
 public:
  // masses_amu: one per particle (the System's, or others: unit masses give the Euclidean
  // projection used by the minimizer). Throws RuntimeError when a constraint refers to a particle
  // out of range or with zero mass, or has a non-positive length.
  CpuConstraints(const System& system, const std::vector<double>& masses_amu);

  // Number of distance constraints, SETTLE waters' three included (= System::constraints.size()).
  int num_constraints() const { return num_constraints_; }
  bool empty() const { return num_constraints_ == 0; }
  int num_settle() const { return static_cast<int>(settle_.size()); }
  int num_ccma() const { return static_cast<int>(ccma_.size()); }

  // Moves `positions` (the unconstrained new positions) onto the constraint surface with
  // displacements along the constraint vectors of `reference` (constrained old positions; may be
  // the same values as `positions`, as for Context::apply_constraints).
  void apply_positions(const std::vector<Vec3d>& reference, std::vector<Vec3d>& positions, double tolerance);

  // Removes the velocity components along the constraints of the geometry `positions`.
  void apply_velocities(const std::vector<Vec3d>& positions, std::vector<Vec3d>& velocities, double tolerance);

  // Largest |r - d| / d over all constraints (System::constraints).
  double max_relative_deviation(const std::vector<Vec3d>& positions) const;

  // CCMA iterations of the last apply_* call; whether it reached the tolerance.
  int last_iterations() const { return last_iterations_; }
  bool last_converged() const { return last_converged_; }

  static constexpr int kMaxIterations = 150;  // OpenMM's reference CCMA limit
  static constexpr double kMatrixElementCutoff = 0.02;  // drop smaller inverse-coupling elements (OpenMM)

  // The solver's plan, read-only (what another platform needs to run the same algorithm).
  struct Settle {
    int o, h1, h2;
    double oh, hh;  // nm
  };
  struct Ccma {
    int a, b;
    double distance;      // nm
    double reduced_mass;  // 1 / (w_a + w_b), w = inverse mass
  };
  const std::vector<Settle>& settle_waters() const { return settle_; }
  const std::vector<Ccma>& ccma_constraints() const { return ccma_; }
  // Row c: (column, value) of the distance-scaled inverse coupling matrix; one CCMA iteration
  // replaces the linearised multipliers delta by sum_col value * delta[col].
  const std::vector<std::vector<std::pair<int, double>>>& inverse_coupling() const { return inverse_coupling_; }
  const std::vector<double>& inverse_masses() const { return inverse_mass_; }
  // The CCMA constraints in coupled groups (connected by shared atoms), each ascending, ordered by
  // their first constraint: the blocks of the (block-diagonal) coupling matrix.
  const std::vector<std::vector<int>>& coupled_groups() const { return coupled_groups_; }

 private:
  // CCMA on x (positions or velocities) along the constraint vectors of `reference`: every iteration
  // linearise(c) sets delta_[c] and says whether constraint c is converged; until all are, the
  // multipliers are preconditioned by the inverse coupling matrix and x moved along the constraints.
  template <typename Linearise>
  void run_ccma(const std::vector<Vec3d>& reference, std::vector<Vec3d>& x, Linearise&& linearise);

  int num_constraints_ = 0;
  std::vector<std::pair<int, int>> all_pairs_;  // every constraint, for max_relative_deviation
  std::vector<double> all_distances_;
  std::vector<double> inverse_mass_;
  std::vector<Settle> settle_;
  std::vector<Ccma> ccma_;
  // Sparse rows of the (distance-scaled) inverse coupling matrix: row c = (column, value) pairs.
  std::vector<std::vector<std::pair<int, double>>> inverse_coupling_;
  std::vector<std::vector<int>> coupled_groups_;
  // Work arrays.
  std::vector<Vec3d> r_ref_;
  std::vector<double> r_ref2_, delta_, delta_tmp_;
  int last_iterations_ = 0;
  bool last_converged_ = true;
};

}  // namespace mdsim
