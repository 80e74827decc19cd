// System: the force-field-parameterised model a platform simulates. Units: nm, ps, kJ/mol, amu, e, rad.
// Built by model/forcefield (build_system) from a Topology and force field files; same content as OpenMM's System
// for the same inputs (HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce, NonbondedForce).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/physics/pbc.hpp"
#include "kernels/physics/pme_params.hpp"

namespace mdsim {

struct HarmonicBondTerm {  // E = 1/2 k (r - r0)^2
  int i, j;
  double length_nm;
  double k_kj_per_mol_nm2;
};

struct HarmonicAngleTerm {  // E = 1/2 k (theta - theta0)^2
  int i, j, k;  // j is the vertex
  double angle_rad;
  double k_kj_per_mol_rad2;
};

struct PeriodicTorsionTerm {  // E = k (1 + cos(n phi - phase)); one entry per periodicity
  int i, j, k, l;
  int periodicity;
  double phase_rad;
  double k_kj_per_mol;
};

struct NonbondedException {  // replaces the normal pair interaction of i and j
  int i, j;
  double charge_product_e2;  // 0 with epsilon 0 = excluded pair
  double sigma_nm;
  double epsilon_kj_per_mol;
};

struct DistanceConstraint {
  int i, j;
  double distance_nm;
};

struct RigidWater {  // SETTLE triple (also present as three DistanceConstraints)
  int oxygen, hydrogen1, hydrogen2;
  double oh_distance_nm, hh_distance_nm;
};

enum class NonbondedMethod { NoCutoff, CutoffNonPeriodic, CutoffPeriodic, PME };

struct NonbondedSettings {
  NonbondedMethod method = NonbondedMethod::PME;
  double cutoff_nm = 1.0;
  double ewald_tolerance = 5.0e-4;
  std::optional<double> switch_distance_nm;  // none = no switching function
  bool dispersion_correction = true;
  double reaction_field_dielectric = 78.3;   // for the cutoff methods, as OpenMM
  // PME grid size policy (config key system.pme_grid), the same on every platform:
  //   Exact (default): OpenMM's formula as is, as OpenMM's Reference platform (which produced the
  //     numbers under shared/reference) uses it; sizes may have large prime factors (111 = 3*37).
  //   FftFriendly: each size rounded up to the next one with prime factors 2, 3, 5, 7 only
  //     (legal_fft_dimension), as OpenMM's CUDA and OpenCL platforms do; fast FFTs, a grid never
  //     coarser than Exact's, so the Ewald error stays within ewald_tolerance.
  PmeGridSizes pme_grid = PmeGridSizes::Exact;
};

// The PME parameters (alpha, grid) for these settings in this box: the one place every platform
// and command takes them from.
inline PmeParameters choose_pme_parameters(const Boxd& box, const NonbondedSettings& nb) {
  return choose_pme_parameters(box, nb.cutoff_nm, nb.ewald_tolerance, nb.pme_grid);
}

struct System {
  // per particle
  std::vector<double> mass_amu;
  std::vector<double> charge_e;
  std::vector<double> sigma_nm;
  std::vector<double> epsilon_kj_per_mol;

  std::vector<HarmonicBondTerm> bonds;
  std::vector<HarmonicAngleTerm> angles;
  std::vector<PeriodicTorsionTerm> torsions;  // propers and impropers
  std::vector<NonbondedException> exceptions;
  std::vector<DistanceConstraint> constraints;
  std::vector<RigidWater> rigid_waters;

  NonbondedSettings nonbonded;
  std::optional<Boxd> box;  // required for periodic methods

  int num_particles() const { return static_cast<int>(mass_amu.size()); }
};

}  // namespace mdsim
