// The potential energy by term, as every platform reports it, and the bit mask selecting terms.
// Bookkeeping follows shared/reference/README.md (OpenMM's force groups):
//   nonbonded_direct     = real-space pairs + exceptions + Ewald exclusion corrections
//                          + dispersion correction
//   nonbonded_reciprocal = PME reciprocal sum + Ewald self energy
//   nonbonded            = nonbonded_direct + nonbonded_reciprocal
//   external             = forces added from outside the platform (Context::add_external_force)
//   restraint            = position restraints (Context::set_position_restraints)
//   urey_bradley, rb_torsion, improper, cmap: CHARMM's Urey-Bradley 1-3 terms, Ryckaert-Bellemans torsions,
//                          harmonic (CHARMM) impropers, CMAP, each its own group as in the OpenMM references
//                          (bond holds the chemical bonds only, torsion the periodic torsions only)
//   total                = bond + angle + urey_bradley + torsion + rb_torsion + improper + cmap + nonbonded
//                          + external + restraint
// Units: kJ/mol.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "model/system.hpp"  // BondedEnergy

namespace mdsim {

struct EnergyTerms {
  double bond = 0.0;
  double angle = 0.0;
  double urey_bradley = 0.0;
  double torsion = 0.0;
  double rb_torsion = 0.0;
  double improper = 0.0;
  double cmap = 0.0;
  double nonbonded_direct = 0.0;
  double nonbonded_reciprocal = 0.0;
  double dispersion_correction = 0.0;  // also contained in nonbonded_direct
  double nonbonded = 0.0;
  double external = 0.0;  // 0 unless a context has external forces (not among named_terms: energy --json has none)
  double restraint = 0.0;  // position restraints (Context::set_position_restraints); 0 without them
  double total = 0.0;

  // The field a bonded term type's energy goes to.
  double& bonded(BondedEnergy group) {
    switch (group) {
      case BondedEnergy::Bond: return bond;
      case BondedEnergy::Angle: return angle;
      case BondedEnergy::Torsion: return torsion;
      case BondedEnergy::RbTorsion: return rb_torsion;
      case BondedEnergy::Improper: return improper;
      case BondedEnergy::Cmap: return cmap;
      case BondedEnergy::UreyBradley: return urey_bradley;
    }
    return torsion;
  }
  // Every bonded term's energy together (what total adds besides nonbonded, external and restraint).
  double bonded_sum() const { return bond + angle + urey_bradley + torsion + rb_torsion + improper + cmap; }
};

// Bit mask selecting the terms a call evaluates (energies of the others stay 0, their forces are
// not added).
enum ForceTerm : unsigned {
  kTermBond = 1u << 0,
  kTermAngle = 1u << 1,
  kTermTorsion = 1u << 2,
  kTermNonbondedDirect = 1u << 3,
  kTermNonbondedReciprocal = 1u << 4,
  kTermRestraint = 1u << 5,  // position restraints (an evaluator's set_position_restraints)
  kTermRbTorsion = 1u << 6,
  kTermImproper = 1u << 7,
  kTermCmap = 1u << 8,
  kTermUreyBradley = 1u << 9,
  kTermBonded = kTermBond | kTermAngle | kTermUreyBradley | kTermTorsion | kTermRbTorsion | kTermImproper | kTermCmap,
  kTermNonbonded = kTermNonbondedDirect | kTermNonbondedReciprocal,
  kTermAll = kTermBonded | kTermNonbonded | kTermRestraint,
};

// The terms that add up to the total (with external and restraint, 0 for `mdsim energy`), and the ones already
// counted in them: nonbonded (direct + reciprocal) and the dispersion correction (part of nonbonded_direct).
// `mdsim energy --json` lists them apart so its energies_kj_per_mol add up.
inline std::array<std::pair<const char*, double>, 9> additive_terms(const EnergyTerms& e) {
  return {{{"bond", e.bond},
           {"angle", e.angle},
           {"urey_bradley", e.urey_bradley},
           {"torsion", e.torsion},
           {"rb_torsion", e.rb_torsion},
           {"improper", e.improper},
           {"cmap", e.cmap},
           {"nonbonded_direct", e.nonbonded_direct},
           {"nonbonded_reciprocal", e.nonbonded_reciprocal}}};
}
inline std::array<std::pair<const char*, double>, 2> included_terms(const EnergyTerms& e) {
  return {{{"nonbonded", e.nonbonded}, {"dispersion_correction", e.dispersion_correction}}};
}

// Every term with its name as reports spell it (`mdsim energy --json`, Python's energies), in EnergyTerms' order.
inline std::array<std::pair<const char*, double>, 12> named_terms(const EnergyTerms& e) {
  std::array<std::pair<const char*, double>, 12> out;
  const auto additive = additive_terms(e);
  std::copy(additive.begin(), additive.end(), out.begin());
  out[9] = {"dispersion_correction", e.dispersion_correction};
  out[10] = {"nonbonded", e.nonbonded};
  out[11] = {"total", e.total};
  return out;
}

// The names of the terms that are not finite ("nonbonded_direct inf, total nan"); empty when all are.
inline std::string nonfinite_terms(const EnergyTerms& e) {
  std::string out;
  for (const auto& [name, value] : named_terms(e))
    if (!std::isfinite(value)) out += (out.empty() ? "" : ", ") + std::string(name) + (std::isnan(value) ? " nan" : " inf");
  return out;
}

// The bit selecting a bonded energy term.
constexpr unsigned term_bit(BondedEnergy group) {
  switch (group) {
    case BondedEnergy::Bond: return kTermBond;
    case BondedEnergy::Angle: return kTermAngle;
    case BondedEnergy::Torsion: return kTermTorsion;
    case BondedEnergy::RbTorsion: return kTermRbTorsion;
    case BondedEnergy::Improper: return kTermImproper;
    case BondedEnergy::Cmap: return kTermCmap;
    case BondedEnergy::UreyBradley: return kTermUreyBradley;
  }
  return kTermTorsion;
}

}  // namespace mdsim
