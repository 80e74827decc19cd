// io/system_xml with CHARMM's forces (tests/data/make_system_xml_charmm.py, OpenMM 7.7's CharmmPsfFile): the NBFIX
// CustomNonbondedForce as System::lj_types, the harmonic-improper CustomTorsionForce, CMAPTorsionForce and the
// Urey-Bradley HarmonicBondForce. On the CPU platform every term's energy and the forces equal the shared reference
// (shared/topologies/reference/charmm_ala3_solv: OpenMM 7.7, Reference platform) to 1e-6 relative (1e-6 kJ/mol below
// 1 kJ/mol; forces: relative RMS 1e-6). The reference's custom_nonbonded is part of mdsim's nonbonded_direct; its
// urey_bradley is mdsim's own urey_bradley term (the second HarmonicBondForce's 1-3 pairs, not bonds). Also the
// ForceField form of the table (tests/data/make_lj_table_reference.py's System) and the refusals.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/evaluator.hpp"
#include "io/system_xml.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/system_xml_cases.hpp"
#include "support/thrown.hpp"

using namespace mdsim;

namespace {

std::string topologies() { return std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/topologies/reference/"; }

void check_energy(const char* term, double mdsim_value, double reference) {
  INFO(term << ": mdsim " << mdsim_value << ", OpenMM " << reference);
  if (std::fabs(reference) < 1.0)
    CHECK(std::fabs(mdsim_value - reference) <= 1e-6);
  else
    CHECK(mdsim_test::relative_difference(mdsim_value, reference) <= 1e-6);
}

}  // namespace

TEST_CASE("a CHARMM System with NBFIX, CMAP, Urey-Bradley and impropers equals OpenMM on the CPU") {
  const SystemXml x = read_system_xml(mdsim_test::system_xml_data() + "system_xml_charmm_ala3.system.xml.gz");
  const System& s = x.system;
  REQUIRE(s.num_particles() == 2776);
  REQUIRE(s.lj_types.has_value());
  CHECK(s.lj_types->num_types == 13);
  CHECK(s.impropers.size() == 5);
  CHECK(s.cmap_torsions.size() == 1);
  CHECK(s.cmap_maps.size() == 1);
  CHECK(s.bonds.size() == 1834);
  CHECK(s.urey_bradleys.size() == 24);
  const auto ub_note = std::find_if(x.notes.begin(), x.notes.end(), [](const std::string& n) {
    return n.find("its 24 terms are 1-3 pairs") != std::string::npos &&
           n.find("reported in the urey_bradley term") != std::string::npos;
  });
  CHECK(ub_note != x.notes.end());
  CHECK_FALSE(s.nonbonded.dispersion_correction);

  const mdsim_test::Json ref = mdsim_test::read_json(topologies() + "charmm_ala3_solv.json");
  const mdsim_test::Json& e = ref["energies_kj_per_mol"];
  const std::string h5 = topologies() + "charmm_ala3_solv.h5";
  const std::vector<Vec3d> x0 = mdsim_test::read_h5_vec3(h5, "positions_nm");
  auto evaluator = make_evaluator(s, PlatformChoice{PlatformKind::Cpu, 0, ""}, PlatformConfig{});
  std::vector<Vec3d> forces;
  const EnergyTerms t = evaluator->compute(x0, &forces);
  check_energy("bond", t.bond, e["bond"].num());
  check_energy("urey_bradley", t.urey_bradley, e["urey_bradley"].num());
  check_energy("angle", t.angle, e["angle"].num());
  check_energy("torsion", t.torsion, e["torsion"].num());
  check_energy("improper", t.improper, e["improper"].num());
  check_energy("cmap", t.cmap, e["cmap"].num());
  check_energy("nonbonded_direct + custom_nonbonded", t.nonbonded_direct,
               e["nonbonded_direct"].num() + e["custom_nonbonded"].num());
  check_energy("nonbonded_reciprocal", t.nonbonded_reciprocal, e["nonbonded_reciprocal"].num());
  check_energy("total", t.total, e["total"].num());
  const double rms = mdsim_test::relative_rms_difference(forces, mdsim_test::read_h5_vec3(h5, "forces_kj_per_mol_nm/total"));
  INFO("forces: relative RMS difference " << rms);
  CHECK(rms <= 1e-6);
}

TEST_CASE("the tabulated LJ in ForceField's form is read as c12/c6, and disagreements are refused") {
  const std::string file = mdsim_test::system_xml_data() + "lj_table_tiny.system.xml";
  const SystemXml x = read_system_xml(file);
  const System& s = x.system;
  REQUIRE(s.lj_types.has_value());
  CHECK(s.lj_types->num_types == 2);
  CHECK(s.lj_types->particle_type == std::vector<int>{0, 1, 1, 0, 0});
  // acoef = c12 in this form: 4 eps sigma^12 of the off-rule pair (sigma 0.31 nm, epsilon 1.5 kJ/mol).
  CHECK(mdsim_test::relative_difference(s.lj_types->c12_kj_per_mol_nm12[1], 4 * 1.5 * std::pow(0.31, 12)) <= 1e-15);
  CHECK(mdsim_test::relative_difference(s.lj_types->c6_kj_per_mol_nm6[2], 4 * 1.5 * std::pow(0.31, 6)) <= 1e-15);
  CHECK(s.nonbonded.dispersion_correction);
  REQUIRE(s.nonbonded.switch_distance_nm.has_value());
  CHECK(*s.nonbonded.switch_distance_nm == 0.9);
}

TEST_CASE("a tabulated LJ that disagrees with its NonbondedForce, or another expression, is refused") {
  std::ifstream in(mdsim_test::system_xml_data() + "lj_table_tiny.system.xml");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const std::size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  const auto error = [](const std::string& t) {
    return mdsim_test::input_error_of([&] { parse_system_xml(t, "tiny.xml"); });
  };
  const std::string lrc = error(with("useLongRangeCorrection=\"1\"", "useLongRangeCorrection=\"0\""));
  CHECK(lrc.find("tiny.xml:32: force 1 (CustomNonbondedForce, tabulated LJ): its useLongRangeCorrection (0) differs "
                 "from the dispersionCorrection (1) of the NonbondedForce (force 0") == 0);
  const std::string eps = error(with("<Particle eps=\"0\" q=\"0\" sig=\".3\"/>", "<Particle eps=\"0.2\" q=\"0\" sig=\".3\"/>"));
  CHECK(eps.find("particle 0 has epsilon 0.2 kJ/mol") != std::string::npos);
  const std::string exclusion = error(with("<Exclusion p1=\"0\" p2=\"1\"/>", "<Exclusion p1=\"0\" p2=\"2\"/>"));
  CHECK(exclusion.find("its 1 exclusions are not the 1 exception pairs") != std::string::npos);
  const std::string cutoff = error(with("<Force cutoff=\"1.2\"", "<Force cutoff=\"1.1\""));
  CHECK(cutoff.find("its cutoff 1.1 nm differs from the NonbondedForce (force 0, line") != std::string::npos);
  const std::string other = error(with("acoef(type1, type2)/r^12 - bcoef(type1, type2)/r^6;", "acoef(type1, type2)/r^10"));
  CHECK(other.find("tiny.xml:32: force 1 (CustomNonbondedForce) is not supported yet: mdsim does not evaluate custom "
                   "expressions (energy \"acoef(type1, type2)/r^10\")") == 0);
}
