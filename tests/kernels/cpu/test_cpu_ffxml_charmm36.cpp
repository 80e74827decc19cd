// CHARMM36 through the force-field template path (model/forcefield: charmm36.xml + charmm36/water.xml, bundled, by
// name): tri-alanine with CHARMM's standard termini (the NTER and CTER patches) in TIP3P water and in vacuum, and BPTI
// (three disulfides: the two-residue DISU patch)
// (tests/data/make_charmm36_reference.py, OpenMM 7.7's createSystem on the Reference platform). Term counts equal
// OpenMM's (the ions' CLA-POT NBFIX pair as System::lj_types); every energy term (bond, Urey-Bradley, angle,
// torsion, harmonic improper, CMAP, nonbonded direct and reciprocal, total) within 1e-6 relative and its forces
// within 1e-6 relative RMS.
#include <cmath>
#include <string>
#include <vector>

#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/flexible_systems.hpp"
#include "support/reference_data.hpp"

using namespace mdsim;
using mdsim_test::Json;

namespace {

const std::string kData = std::string(MDSIM_SOURCE_DIR) + "/tests/data/";

const ForceFieldData& charmm36() {
  static const ForceFieldData ff = load_forcefields({"charmm36.xml", "charmm36/water.xml"}, "");
  return ff;
}

System build(const std::string& pdb, NonbondedMethod method, TemplateAssignment* assignment = nullptr) {
  // charmm36.xml: useDispersionCorrection="False".
  return mdsim_test::template_system(charmm36(), kData + pdb, method, false, ConstraintMode::None, false, assignment);
}

void check_counts(const System& s, const Json& want) {
  CHECK(s.num_particles() == want["particles"].num());
  CHECK(static_cast<double>(s.bonds.size()) == want["bond"].num());
  CHECK(static_cast<double>(s.urey_bradleys.size()) == want["urey_bradley"].num());
  CHECK(static_cast<double>(s.angles.size()) == want["angle"].num());
  CHECK(static_cast<double>(s.torsions.size()) == want["torsion"].num());
  CHECK(static_cast<double>(s.impropers.size()) == want["improper"].num());
  CHECK(static_cast<double>(s.cmap_torsions.size()) == want["cmap"].num());
  CHECK(static_cast<double>(s.exceptions.size()) == want["exceptions"].num());
}

// nbfix: whether the system holds a type pair with an <NBFixPair> (the water case's CLA and POT ions do).
void check_terms(const System& s, const std::string& name, bool nbfix) {
  CHECK(s.lj_types.has_value() == nbfix);
  const Json want = mdsim_test::read_json(kData + "charmm36_ala3_reference.json")[name];
  check_counts(s, want["counts"]);
  const Json& e = want["energies_kj_per_mol"];
  const std::string h5 = kData + "charmm36_ala3_reference.h5";
  const std::vector<Vec3d> x = mdsim_test::read_h5_vec3(h5, name + "/positions_nm");
  CpuForceEvaluator evaluator(s);
  const struct {
    const char* name;
    unsigned bits;
  } terms[] = {{"bond", kTermBond},
               {"urey_bradley", kTermUreyBradley},
               {"angle", kTermAngle},
               {"torsion", kTermTorsion},
               {"improper", kTermImproper},
               {"cmap", kTermCmap},
               {"nonbonded_direct", kTermNonbondedDirect},
               {"nonbonded_reciprocal", kTermNonbondedReciprocal},
               {"total", kTermAll}};
  for (const auto& term : terms) {
    std::vector<Vec3d> f;
    const EnergyTerms t = evaluator.compute(x, &f, term.bits);
    const double energy = term.bits == kTermAll ? t.total : t.bonded_sum() + t.nonbonded;
    const double relative = mdsim_test::relative_difference(energy, e[term.name].num());
    INFO(name << " " << term.name << ": mdsim " << energy << ", OpenMM " << e[term.name].num()
              << ", relative difference " << relative);
    CHECK(relative <= 1e-6);
    if (term.bits == kTermNonbondedReciprocal && e[term.name].num() == 0.0) continue;  // vacuum: no forces to compare
    const std::vector<Vec3d> ref = mdsim_test::read_h5_vec3(h5, name + "/forces_kj_per_mol_nm/" + term.name);
    const double rms = mdsim_test::relative_rms_difference(f, ref);
    INFO(name << " " << term.name << " forces: relative RMS difference " << rms);
    CHECK(rms <= 1e-6);
  }
}

}  // namespace

TEST_CASE("charmm36.xml: standard termini match ALA through the NTER and CTER patches") {
  TemplateAssignment assignment;
  const System s = build("charmm36_ala3_vacuum.pdb", NonbondedMethod::NoCutoff, &assignment);
  REQUIRE(assignment.residue_template.size() == 3);
  CHECK(assignment.residue_template[0] == "ALA-NTER");
  CHECK(assignment.residue_template[1] == "ALA");
  CHECK(assignment.residue_template[2] == "ALA-CTER");
  // NTER's nitrogen (type NH3, charge -0.3) and its three hydrogens (HC, 0.33).
  CHECK(s.charge_e[0] == -0.3);
  CHECK(s.charge_e[1] == 0.33);
}

TEST_CASE("charmm36.xml: BPTI's three disulfides match CYS pairs through the two-residue DISU patch") {
  TemplateAssignment assignment;
  const System s = build("charmm36_bpti.pdb", NonbondedMethod::NoCutoff, &assignment);
  REQUIRE(assignment.residue_template.size() == 58);
  const std::vector<int> cys = {4, 13, 29, 37, 50, 54};  // CYS 5, 14, 30, 38, 51, 55 (bonded 5-55, 14-38, 30-51)
  for (int r : cys) {
    INFO("residue " << r + 1);
    CHECK(assignment.residue_template[static_cast<std::size_t>(r)] == "CYS-DISU");
  }
  CHECK(assignment.residue_template[0] == "ARG-NTER");
  check_terms(s, "bpti", false);
}

TEST_CASE("charmm36.xml in vacuum (no cutoff): CPU energies and forces by term equal OpenMM's") {
  check_terms(build("charmm36_ala3_vacuum.pdb", NonbondedMethod::NoCutoff), "vacuum", false);
}

TEST_CASE("charmm36.xml + charmm36/water.xml with PME: CPU energies and forces by term equal OpenMM's") {
  check_terms(build("charmm36_ala3_water.pdb", NonbondedMethod::PME), "water", true);
}
