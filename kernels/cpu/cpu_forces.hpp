// The CPU reference platform's energy and force evaluation: double precision, plain loops over the
// physics functions of kernels/physics. It is the oracle the CUDA platform is tested against and
// reproduces OpenMM 7.7's Reference platform (HarmonicBondForce, HarmonicAngleForce,
// PeriodicTorsionForce, NonbondedForce with NoCutoff, CutoffNonPeriodic, CutoffPeriodic (reaction
// field) and PME).
//
// Energy bookkeeping follows shared/reference/README.md (OpenMM's force groups):
//   nonbonded_direct     = real-space pairs + exceptions + Ewald exclusion corrections
//                          + dispersion correction
//   nonbonded_reciprocal = PME reciprocal sum + Ewald self energy
//   nonbonded            = nonbonded_direct + nonbonded_reciprocal
//   total                = bond + angle + torsion + nonbonded
// Units: positions nm, energies kJ/mol, forces kJ/mol/nm.
#pragma once

#include <memory>
#include <vector>

#include "engine/system.hpp"
#include "kernels/physics/pbc.hpp"
#include "kernels/physics/pme_params.hpp"
#include "kernels/physics/vec3.hpp"

namespace mdsim {

struct EnergyTerms {
  double bond = 0.0;
  double angle = 0.0;
  double torsion = 0.0;
  double nonbonded_direct = 0.0;
  double nonbonded_reciprocal = 0.0;
  double dispersion_correction = 0.0;  // also contained in nonbonded_direct
  double nonbonded = 0.0;
  double total = 0.0;
};

// Bit mask selecting the terms a call evaluates (energies of the others stay 0, their forces are
// not added).
enum ForceTerm : unsigned {
  kTermBond = 1u << 0,
  kTermAngle = 1u << 1,
  kTermTorsion = 1u << 2,
  kTermNonbondedDirect = 1u << 3,
  kTermNonbondedReciprocal = 1u << 4,
  kTermBonded = kTermBond | kTermAngle | kTermTorsion,
  kTermNonbonded = kTermNonbondedDirect | kTermNonbondedReciprocal,
  kTermAll = kTermBonded | kTermNonbonded,
};

// Evaluator for one System: checks it and precomputes what does not depend on the positions
// (exclusion lists, PME parameters and B-spline moduli, dispersion-correction coefficient).
// Throws InputError for settings the user must fix (periodic method without a box, cutoff larger
// than half the box, bad switching distance) and RuntimeError for an inconsistent System.
// Not thread-safe: one evaluator per thread of control (it parallelises internally with OpenMP).
class CpuForceEvaluator {
 public:
  explicit CpuForceEvaluator(const System& system);
  ~CpuForceEvaluator();
  CpuForceEvaluator(const CpuForceEvaluator&) = delete;
  CpuForceEvaluator& operator=(const CpuForceEvaluator&) = delete;

  // Energies of the selected terms; when forces is non-null it is resized to the particle count
  // and OVERWRITTEN with the sum of the selected terms' forces.
  EnergyTerms compute(const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces,
                      unsigned terms = kTermAll);

  // Periodic box used from now on (e.g. after a barostat move). Alpha and the PME grid stay as
  // chosen for the System's box, as in OpenMM.
  void set_box(const Boxd& box);
  const Boxd* box() const;

  const System& system() const { return system_; }
  bool uses_pme() const { return system_.nonbonded.method == NonbondedMethod::PME; }
  // Valid when uses_pme(); the grid follows system.nonbonded.pme_grid. The CUDA platform takes its
  // PME parameters from here, so both platforms use one grid for one System.
  const PmeParameters& pme_parameters() const { return pme_params_; }
  double dispersion_coefficient() const { return dispersion_coefficient_; }  // E_disp = coefficient / V

 private:
  struct Impl;
  System system_;
  PmeParameters pme_params_;
  double dispersion_coefficient_ = 0.0;
  std::unique_ptr<Impl> impl_;
};

// One-shot helpers (they build a CpuForceEvaluator each call: fine for tests and single points).
EnergyTerms cpu_compute(const System& system, const std::vector<Vec3d>& positions_nm,
                        std::vector<Vec3d>* forces_kj_per_mol_nm /* nullable; overwritten */);
EnergyTerms cpu_compute_terms(const System& system, const std::vector<Vec3d>& positions_nm,
                              std::vector<Vec3d>* forces_kj_per_mol_nm, unsigned terms);

// Bonded sums over term lists with non-periodic displacements (as OpenMM's defaults); forces are
// ADDED when non-null. Return the energy in kJ/mol.
double cpu_bond_energy(const std::vector<HarmonicBondTerm>& bonds, const std::vector<Vec3d>& positions_nm,
                       std::vector<Vec3d>* forces);
double cpu_angle_energy(const std::vector<HarmonicAngleTerm>& angles, const std::vector<Vec3d>& positions_nm,
                        std::vector<Vec3d>* forces);
double cpu_torsion_energy(const std::vector<PeriodicTorsionTerm>& torsions, const std::vector<Vec3d>& positions_nm,
                          std::vector<Vec3d>* forces);

}  // namespace mdsim
