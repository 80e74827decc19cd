// The CPU reference platform's energy and force evaluation: double precision, plain loops over the
// physics functions of physics. It is the oracle the CUDA platform is tested against and
// reproduces OpenMM 7.7's Reference platform (HarmonicBondForce, HarmonicAngleForce,
// PeriodicTorsionForce, RBTorsionForce, CMAPTorsionForce, the CustomTorsionForce harmonic improper,
// NonbondedForce with NoCutoff, CutoffNonPeriodic, CutoffPeriodic (reaction field) and PME), and
// position restraints as its CustomExternalForce (physics/restraint.hpp).
// Energy terms as platform/energy_terms.hpp defines them.
// Units: positions nm, energies kJ/mol, forces kJ/mol/nm.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "physics/bonded.hpp"
#include "physics/pbc.hpp"
#include "physics/pme_params.hpp"
#include "physics/vec3.hpp"
#include "platform/context.hpp"  // PositionRestraints
#include "platform/energy_terms.hpp"
#include "platform/nonbonded_plan.hpp"
#include "model/system.hpp"

namespace mdsim {

// Evaluator for one System: takes its checks and position-independent data from plan_nonbonded
// (platform/nonbonded_plan: InputError for settings the user must fix, RuntimeError for an
// inconsistent System) and adds the PME solver's B-spline moduli.
// Not thread-safe: one evaluator per thread of control (it parallelises internally with OpenMP).
class CpuForceEvaluator {
 public:
  explicit CpuForceEvaluator(const System& system);
  ~CpuForceEvaluator();
  CpuForceEvaluator(const CpuForceEvaluator&) = delete;
  CpuForceEvaluator& operator=(const CpuForceEvaluator&) = delete;

  // Energies of the selected terms; when forces is non-null it is resized to the particle count
  // and OVERWRITTEN with the sum of the selected terms' forces. Virtual sites are placed from their parents
  // (in a copy; the given rows of sites are ignored) and their forces spread onto the parents, in OpenMM's
  // getState(getForces=True) convention: a parent's row includes the share spread onto it, a site's row keeps the
  // force on the site itself (platform/virtual_sites.hpp).
  EnergyTerms compute(const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces,
                      unsigned terms = kTermAll);

  // Position restraints (physics/restraint.hpp) in every later evaluation selecting
  // kTermRestraint (kTermAll does), their energy in EnergyTerms::restraint; empty = none. Displacements
  // by minimum image in the current box when the system has one. InputError from check_position_restraints.
  void set_position_restraints(const PositionRestraints& restraints);
  const PositionRestraints& position_restraints() const;

  // Periodic box used from now on (e.g. after a barostat move). Alpha and the PME grid stay as
  // chosen for the System's box, as in OpenMM.
  void set_box(const Boxd& box);
  const Boxd* box() const;

  const System& system() const { return system_; }
  const NonbondedPlan& nonbonded_plan() const { return plan_; }
  bool uses_pme() const { return plan_.pme; }
  const PmeParameters& pme_parameters() const { return plan_.pme_parameters; }  // valid when uses_pme()
  double dispersion_coefficient() const { return plan_.dispersion_coefficient; }  // E_disp = coefficient / V

 private:
  struct Impl;
  System system_;
  NonbondedPlan plan_;
  std::unique_ptr<Impl> impl_;
};

// One-shot helpers (they build a CpuForceEvaluator each call: fine for tests and single points).
EnergyTerms cpu_compute(const System& system, const std::vector<Vec3d>& positions_nm,
                        std::vector<Vec3d>* forces_kj_per_mol_nm /* nullable; overwritten */);
EnergyTerms cpu_compute_terms(const System& system, const std::vector<Vec3d>& positions_nm,
                              std::vector<Vec3d>* forces_kj_per_mol_nm, unsigned terms);

// A bonded term list's energy (kJ/mol) with non-periodic displacements (as OpenMM's defaults);
// forces are ADDED when non-null. Any term type of System (see HarmonicBondTerm); `tables` is the
// System's shared data (CMAP's maps: CmapTable::views over its coefficients, model/cmap.hpp), which
// term types that carry their own parameters ignore.
template <typename Term>
double cpu_bonded_energy(const std::vector<Term>& terms, const std::vector<Vec3d>& x, std::vector<Vec3d>* forces,
                         const BondedTables<double>& tables) {
  double energy = 0.0;
  for (const Term& term : terms) {
    const auto atoms = term.atoms();
    const auto r = evaluate_bonded(term.template params<double>(), [&](int a, int b) {
      return x[static_cast<std::size_t>(atoms[static_cast<std::size_t>(b)])] -
             x[static_cast<std::size_t>(atoms[static_cast<std::size_t>(a)])];
    }, tables);
    energy += r.energy;
    if (forces)
      for (std::size_t k = 0; k < atoms.size(); ++k) (*forces)[static_cast<std::size_t>(atoms[k])] += r.force[k];
  }
  return energy;
}

}  // namespace mdsim
