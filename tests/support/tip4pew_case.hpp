// The TIP4P-Ew case with virtual sites (shared/topologies ffxml_amber14_tip4pew_ala2): its serialized System
// (tests/data/make_system_xml_tip4pew.py, OpenMM 7.7) and OpenMM's reference, for the CPU and CUDA virtual-site tests.
#pragma once

#include <string>
#include <vector>

#include "io/system_xml.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/system_xml_cases.hpp"

namespace mdsim_test {

inline std::string tip4pew_reference() {
  return std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/topologies/reference/ffxml_amber14_tip4pew_ala2";
}

inline mdsim::System tip4pew_system() {
  return mdsim::read_system_xml(system_xml_data() + "system_xml_tip4pew_ala2.system.xml.gz").system;
}

// OpenMM's positions (sites placed).
inline std::vector<mdsim::Vec3d> tip4pew_positions() { return read_h5_vec3(tip4pew_reference() + ".h5", "positions_nm"); }

// The positions with every site's row moved away (10 nm off): what an evaluation must place itself.
inline std::vector<mdsim::Vec3d> with_sites_displaced(const mdsim::System& s, std::vector<mdsim::Vec3d> x) {
  for (const mdsim::VirtualSite& v : s.virtual_sites) x[static_cast<std::size_t>(v.particle)] += mdsim::Vec3d(10, -10, 10);
  return x;
}

// A TIP4P-Ew System (from the System XML or the template path) on the CPU platform against OpenMM's reference, each
// term alone: energy within 1e-6 relative, forces within 1e-6 relative RMS in getState's convention (the sites'
// rows moved away first, so the evaluator places them; a site's row keeps the force on the site itself).
inline void check_tip4pew_terms(const mdsim::System& s) {
  using namespace mdsim;
  const std::string ref = tip4pew_reference();
  const Json e = read_json(ref + ".json")["energies_kj_per_mol"];
  const std::vector<Vec3d> x = with_sites_displaced(s, tip4pew_positions());
  CpuForceEvaluator evaluator(s);
  const struct {
    const char* name;
    unsigned bits;
  } terms[] = {{"bond", kTermBond}, {"angle", kTermAngle}, {"torsion", kTermTorsion},
               {"nonbonded_direct", kTermNonbondedDirect}, {"nonbonded_reciprocal", kTermNonbondedReciprocal},
               {"total", kTermAll}};
  for (const auto& term : terms) {
    std::vector<Vec3d> f;
    const EnergyTerms t = evaluator.compute(x, &f, term.bits);
    const double energy = term.bits == kTermAll ? t.total : t.bonded_sum() + t.nonbonded;
    const double relative = relative_difference(energy, e[term.name].num());
    INFO(term.name << ": mdsim " << energy << ", OpenMM " << e[term.name].num() << ", relative difference " << relative);
    CHECK(relative <= 1e-6);
    const std::vector<Vec3d> want = read_h5_vec3(ref + ".h5", std::string("forces_kj_per_mol_nm/") + term.name);
    const double rms = relative_rms_difference(f, want);
    INFO(term.name << " forces: relative RMS difference " << rms);
    CHECK(rms <= 1e-6);
    if (term.bits == kTermAll) {
      const std::size_t site = static_cast<std::size_t>(s.virtual_sites.front().particle);
      CHECK(norm(f[site]) > 1.0);
      CHECK(norm(f[site] - want[site]) <= 1e-6 * norm(want[site]) + 1e-6);
    }
  }
}

}  // namespace mdsim_test
