// The constraint plan both platforms run: which rigid waters SETTLE takes (analytic, physics/
// settle.hpp) and, for every other distance constraint, CCMA's data (Eastman & Pande, J. Chem. Theory
// Comput. 6, 434 (2010)): the constraints with their reduced masses, their coupled groups and the
// sparse inverse of the coupling matrix, built once from the equilibrium geometry (bond angles from the
// angle terms, or from a third constraint closing a triangle). The CPU platform's solver
// (kernels/cpu/cpu_constraints) and the CUDA kernels (kernels/cuda/constraint_kernels.cuh) iterate
// with the same data, so the two agree to rounding.
//
// Tolerance (OpenMM's meaning): positions converge when every constraint's length is within a
// relative deviation `tolerance` of its target; velocities when every constraint's relative rate of
// length change |v_ij · r_ij| / |r_ij|^2 is at most `tolerance` per ps.
#pragma once

#include <utility>
#include <vector>

#include "physics/vec3.hpp"
#include "model/system.hpp"

namespace mdsim {

class ConstraintPlan {
 public:
  // masses_amu: one per particle (the System's, or others: unit masses give the Euclidean
  // projection used by the minimizer). Throws RuntimeError when a constraint refers to a particle
  // out of range or with zero mass, or has a non-positive length.
  ConstraintPlan(const System& system, const std::vector<double>& masses_amu);

  // Number of distance constraints, SETTLE waters' three included (= System::constraints.size()).
  int num_constraints() const { return num_constraints_; }
  bool empty() const { return num_constraints_ == 0; }
  int num_settle() const { return static_cast<int>(settle_.size()); }
  int num_ccma() const { return static_cast<int>(ccma_.size()); }

  // Largest |r - d| / d over all constraints (System::constraints).
  double max_relative_deviation(const std::vector<Vec3d>& positions) const;

  static constexpr int kMaxIterations = 150;  // OpenMM's reference CCMA limit
  static constexpr double kMatrixElementCutoff = 0.02;  // drop smaller inverse-coupling elements (OpenMM)

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
  void check_and_record(const System& system);
  void choose_settle_waters(const System& system, const std::vector<double>& masses_amu);
  void invert_coupling(const System& system);

  int num_constraints_ = 0;
  std::vector<std::pair<int, int>> all_pairs_;  // every constraint, for max_relative_deviation
  std::vector<double> all_distances_;
  std::vector<double> inverse_mass_;
  std::vector<Settle> settle_;
  std::vector<Ccma> ccma_;
  std::vector<std::vector<std::pair<int, double>>> inverse_coupling_;
  std::vector<std::vector<int>> coupled_groups_;
};

}  // namespace mdsim
