// The RB torsion, harmonic improper and CMAP reference (tests/data/cpu_torsion_terms_openmm.json, made by
// tests/data/make_cpu_torsion_terms.py with OpenMM 7.7's Reference platform): alanine dipeptide's 22 atoms
// with only those three terms, and six configurations with OpenMM's energy and forces of each. The CPU test
// compares with OpenMM, the CUDA test with the CPU platform, on the System built here.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "model/system.hpp"
#include "platform/energy_terms.hpp"
#include "support/reference_data.hpp"

namespace mdsim_test {

inline const Json& torsion_terms_reference() {
  static const Json j = read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/cpu_torsion_terms_openmm.json");
  return j;
}

// The System OpenMM evaluated: unit masses and no nonbonded interaction (no charges, epsilon 0, no cutoff).
inline mdsim::System torsion_terms_system(const Json& ref) {
  mdsim::System s;
  const int n = static_cast<int>(ref["atoms"].num());
  s.mass_amu.assign(static_cast<size_t>(n), 12.0);
  s.charge_e.assign(static_cast<size_t>(n), 0.0);
  s.sigma_nm.assign(static_cast<size_t>(n), 0.3);
  s.epsilon_kj_per_mol.assign(static_cast<size_t>(n), 0.0);
  s.nonbonded.method = mdsim::NonbondedMethod::NoCutoff;
  s.nonbonded.dispersion_correction = false;
  const auto atom = [](const Json& t, size_t k) { return static_cast<int>(t[k].num()); };
  for (const Json& t : ref["rb_torsions"].array) {
    mdsim::RbTorsionTerm term{atom(t, 0), atom(t, 1), atom(t, 2), atom(t, 3), {}};
    for (size_t c = 0; c < 6; ++c) term.c_kj_per_mol[c] = t[4 + c].num();
    s.rb_torsions.push_back(term);
  }
  for (const Json& t : ref["impropers"].array)
    s.impropers.push_back({atom(t, 0), atom(t, 1), atom(t, 2), atom(t, 3), t[4].num(), t[5].num()});
  for (const Json& m : ref["cmap_maps"].array) {
    mdsim::CmapMap map;
    map.size = static_cast<int>(m["size"].num());
    for (const Json& e : m["energy"].array) map.energy_kj_per_mol.push_back(e.num());
    s.cmap_maps.push_back(map);
  }
  for (const Json& t : ref["cmap_torsions"].array) {
    mdsim::CmapTorsionTerm term{};
    term.map = atom(t, 0);
    for (size_t k = 0; k < 8; ++k) term.atom[k] = atom(t, 1 + k);
    s.cmap_torsions.push_back(term);
  }
  return s;
}

// The three terms: their name in the reference, force-term bit and EnergyTerms field.
struct TorsionTermKind {
  const char* name;
  unsigned mask;
  double mdsim::EnergyTerms::*energy;
};
inline const std::array<TorsionTermKind, 3>& torsion_term_kinds() {
  static const std::array<TorsionTermKind, 3> kinds = {{{"rb_torsion", mdsim::kTermRbTorsion, &mdsim::EnergyTerms::rb_torsion},
                                                        {"improper", mdsim::kTermImproper, &mdsim::EnergyTerms::improper},
                                                        {"cmap", mdsim::kTermCmap, &mdsim::EnergyTerms::cmap}}};
  return kinds;
}

}  // namespace mdsim_test
