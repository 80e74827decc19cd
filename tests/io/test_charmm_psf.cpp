// io/charmm_psf, io/charmm_parameters and io/charmm_crd against OpenMM 7.7's CharmmPsfFile: the shared CHARMM
// reference (tests/data/shared/topologies: ala3 in water with CMAP, Urey-Bradley, impropers and an NBFIX pair) and
// tests/data/charmm (make_charmm_reference.py: an XPLOR-format PSF with CHARMM22 parameters, a CGenFF ligand with a
// lone pair, SPC/E water with methanol, cholesterol with the CHARMM36 lipid and cholesterol stream files); energies by term to 1e-6 relative (1e-6 kJ/mol below 1 kJ/mol), forces to 1e-6 relative RMS; every
// refusal names the file and the line.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/evaluator.hpp"
#include "io/charmm_crd.hpp"
#include "io/charmm_psf.hpp"
#include "support/catch.hpp"
#include "support/flexible_systems.hpp"
#include "support/reference_data.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

using namespace mdsim;

namespace {

std::string shared_dir() { return std::string(MDSIM_TEST_DATA_DIR) + "/topologies/"; }
std::string charmm_dir() { return std::string(MDSIM_SOURCE_DIR) + "/tests/data/charmm/"; }

TopologyFileOptions options_for(NonbondedMethod method, double cutoff_nm) {
  return mdsim_test::flexible_topology_options(method, cutoff_nm, false);  // CharmmPsfFile: no dispersion correction
}

void check_energy(const char* name, const char* term, double value, double want) {
  INFO(name << " " << term << ": mdsim " << value << ", OpenMM " << want);
  std::printf("%-16s %-38s mdsim %.10f OpenMM %.10f difference %.3g\n", name, term, value, want, value - want);
  CHECK(std::fabs(value - want) <= 1e-6 * std::max(1.0, std::fabs(want)));
}

EnergyTerms evaluate(const System& system, const std::vector<Vec3d>& positions, std::vector<Vec3d>& forces) {
  auto evaluator = make_evaluator(system, PlatformChoice{PlatformKind::Cpu, 0, ""}, PlatformConfig{});
  return evaluator->compute(positions, &forces);
}

void check_forces(const char* name, const std::vector<Vec3d>& got, const std::vector<Vec3d>& want) {
  REQUIRE(got.size() == want.size());
  const double rms = mdsim_test::relative_rms_difference(got, want);
  std::printf("%-16s forces: relative RMS difference %.3g, largest |dF| %.3g kJ/mol/nm\n", name, rms,
              mdsim_test::max_abs_difference(got, want));
  CHECK(rms <= 1e-6);
}

std::vector<std::string> ala3_parameters() {
  return {shared_dir() + "inputs/par_all36_prot.prm", shared_dir() + "inputs/toppar_water_ions.str"};
}

}  // namespace

TEST_CASE("ala3 in water from psf, crd and CHARMM36 files: System, Topology and energies as OpenMM 7.7's") {
  const mdsim_test::Json ref = mdsim_test::read_json(shared_dir() + "reference/charmm_ala3_solv.json");
  TopologyFileOptions o = options_for(NonbondedMethod::PME, 1.0);
  o.parameters = ala3_parameters();
  o.box = Boxd{{3.271195, 0, 0}, {0, 3.299596, 0}, {0, 0, 3.300715}};
  const TopologyFileModel m = read_charmm_psf(shared_dir() + "inputs/ala3_solv.psf", o);
  const System& s = m.system;
  const mdsim_test::Json& counts = ref["counts"];
  const auto count = [&](const char* key) { return static_cast<std::size_t>(counts[key].num()); };
  CHECK(s.num_particles() == 2776);
  CHECK(s.bonds.size() == count("bond"));
  CHECK(s.angles.size() == count("angle"));
  CHECK(s.urey_bradleys.size() == count("urey_bradley"));
  CHECK(s.torsions.size() == count("torsion"));
  CHECK(s.impropers.size() == count("improper"));
  CHECK(s.cmap_torsions.size() == count("cmap"));
  CHECK(s.cmap_maps.size() == 1);
  CHECK(s.exceptions.size() == count("exceptions"));
  CHECK(static_cast<std::size_t>(std::count_if(s.exceptions.begin(), s.exceptions.end(), [](const NonbondedException& e) {
          return e.charge_product_e2 != 0.0 || e.epsilon_kj_per_mol != 0.0;
        })) == count("exceptions_nonzero"));
  REQUIRE(s.lj_types.has_value());
  CHECK(s.lj_types->num_types == 13);
  CHECK(m.topology.residues.size() == count("residues"));
  CHECK(m.topology.chains.size() == count("chains"));
  CHECK(m.topology.bonds.size() == count("topology_bonds"));
  CHECK(m.topology.chains[0].id == "PROA");
  CHECK(m.topology.residues[3].name == "TIP3");  // names as written
  CHECK(m.topology.atoms[0].element == "N");
  CHECK(m.topology.atoms[1].element == "H");
  CHECK(m.topology.atoms[2775].element == "Cl");
  REQUIRE(s.box.has_value());
  CHECK_FALSE(s.nonbonded.dispersion_correction);
  CHECK(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) { return n.find("1 NBFIX pair joins") == 0; }));

  const std::string h5 = shared_dir() + "reference/charmm_ala3_solv.h5";
  const std::vector<Vec3d> x0 = mdsim_test::read_h5_vec3(h5, "positions_nm");
  const CoordinateFile crd = read_charmm_crd(shared_dir() + "inputs/ala3_solv.crd", 2776);
  CHECK(mdsim_test::max_abs_difference(crd.positions_nm, x0) < 1e-10);
  CHECK_FALSE(crd.box.has_value());
  CHECK(is_charmm_crd_file(shared_dir() + "inputs/ala3_solv.crd"));
  CHECK_FALSE(is_charmm_crd_file(shared_dir() + "inputs/alanine-dipeptide-explicit.inpcrd"));

  std::vector<Vec3d> forces;
  const EnergyTerms t = evaluate(s, x0, forces);
  const mdsim_test::Json& e = ref["energies_kj_per_mol"];
  check_energy("charmm_ala3", "bond", t.bond, e["bond"].num());
  check_energy("charmm_ala3", "angle", t.angle, e["angle"].num());
  check_energy("charmm_ala3", "urey_bradley", t.urey_bradley, e["urey_bradley"].num());
  check_energy("charmm_ala3", "torsion", t.torsion, e["torsion"].num());
  check_energy("charmm_ala3", "improper", t.improper, e["improper"].num());
  check_energy("charmm_ala3", "cmap", t.cmap, e["cmap"].num());
  check_energy("charmm_ala3", "nonbonded_direct + custom_nonbonded", t.nonbonded_direct,
               e["nonbonded_direct"].num() + e["custom_nonbonded"].num());
  check_energy("charmm_ala3", "nonbonded_reciprocal", t.nonbonded_reciprocal, e["nonbonded_reciprocal"].num());
  check_energy("charmm_ala3", "total", t.total, e["total"].num());
  check_forces("charmm_ala3", forces, mdsim_test::read_h5_vec3(h5, "forces_kj_per_mol_nm/total"));
}

namespace {

// A tests/data/charmm case (make_charmm_reference.py): NoCutoff, energies by OpenMM force class.
void check_case(const char* name, const std::string& psf, const std::string& crd, std::vector<std::string> parameters) {
  const mdsim_test::Json ref = mdsim_test::read_json(charmm_dir() + name + ".json");
  TopologyFileOptions o = options_for(NonbondedMethod::NoCutoff, 1.0);
  for (std::string& p : parameters) p = charmm_dir() + p;
  o.parameters = parameters;
  const TopologyFileModel m = read_charmm_psf(charmm_dir() + psf, o);
  const mdsim_test::Json& counts = ref["counts"];
  REQUIRE(m.system.num_particles() == static_cast<int>(counts["atoms"].num()));
  CHECK(m.system.exceptions.size() == static_cast<std::size_t>(counts["exceptions"].num()));
  CHECK(m.system.virtual_sites.size() == static_cast<std::size_t>(counts["virtual_sites"].num()));
  const CoordinateFile c = read_charmm_crd(charmm_dir() + crd, m.system.num_particles());
  std::vector<Vec3d> x = c.positions_nm;
  const std::vector<Vec3d> want_x = mdsim_test::json_vec3_list(ref["positions_nm"]);
  for (const VirtualSite& s : m.system.virtual_sites) x[static_cast<std::size_t>(s.particle)] = want_x[static_cast<std::size_t>(s.particle)];
  CHECK(mdsim_test::max_abs_difference(x, want_x) < 1e-9);
  std::vector<Vec3d> forces;
  const EnergyTerms t = evaluate(m.system, c.positions_nm, forces);
  const mdsim_test::Json& e = ref["energies_kj_per_mol"];
  check_energy(name, "bond + urey_bradley (HarmonicBondForce)", t.bond + t.urey_bradley, e["HarmonicBondForce"].num());
  check_energy(name, "angle", t.angle, e["HarmonicAngleForce"].num());
  check_energy(name, "torsion", t.torsion, e["PeriodicTorsionForce"].num());
  check_energy(name, "improper (CustomTorsionForce)", t.improper, e["CustomTorsionForce"].num());
  check_energy(name, "cmap", t.cmap, e["CMAPTorsionForce"].num());
  const double custom = e.has("CustomNonbondedForce") ? e["CustomNonbondedForce"].num() : 0.0;  // NBFIX's table
  CHECK(m.system.lj_types.has_value() == e.has("CustomNonbondedForce"));
  check_energy(name, "nonbonded (+ CustomNonbondedForce)", t.nonbonded_direct, e["NonbondedForce"].num() + custom);
  check_energy(name, "total", t.total, e["total"].num());
  check_forces(name, forces, mdsim_test::json_vec3_list(ref["forces_kj_per_mol_nm"]));
}

}  // namespace

TEST_CASE("a CGenFF ligand with a colinear lone pair, an XPLOR PSF with CHARMM22, mixed-case types: as OpenMM") {
  check_case("chlb_cgenff", "chlb_cgenff.psf", "chlb_cgenff.crd", {"cgenff_chlb.rtf", "cgenff_chlb.prm"});
  check_case("ala_ala_ala", "ala_ala_ala_xplor.psf", "ala_ala_ala.crd", {"charmm22_ala.par", "charmm22_ala.rtf"});
  check_case("water_methanol", "water_methanol.psf", "water_methanol.crd", {"water_methanol.prm"});
}

TEST_CASE("cholesterol with the CHARMM36 lipid files, CGenFF and the cholesterol stream file: as OpenMM") {
  check_case("chl1", "chl1.psf", "chl1.crd", {"lipid_chl1.prm", "cgenff_chl1.prm", "cholesterol_chl1.str"});
}

namespace {

std::string with(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("CHARMM parameter files: wildcards, replacement by periodicity, and located refusals") {
  CharmmParameters p;
  read_charmm_parameter_text(
      "* test\nATOMS\nMASS 1 CA 12.011 C\nMASS 2 HA 1.008\nMASS -1 LP 0.0\nMASS 3e86 OH 15.999\n\nDIHEDRALS\n"
      "X CA CA X 3.1 2 180.0\nHA CA CA HA 1.0 2 180.0 ! replaced below\nHA CA CA HA 2.5 2 0.0\nHA CA CA HA 0.5 3 0.0\n"
      "IMPROPER\nCA X X HA 96.0 0 0.0\nNONBONDED nbxmod 5 atom cdiel -\n cutnb 14.0 e14fac 0.83\n"
      "CA 0.0 -0.07 1.99\nHA 0.0 -0.022 1.32 0.0 -0.01 1.1\nLP 0.0 0.0 0.0\nNBFIX\nCA HA -0.1 3.0\nCA XX -0.1 3.0\nEND\n",
      "test.prm", CharmmFileKind::Parameters, p);
  CHECK(p.types.at("CA").atomic_number == 6);
  CHECK(p.types.at("HA").atomic_number == 1);  // by mass
  CHECK(p.types.at("LP").atomic_number == 0);
  CHECK(p.type_by_number.count(-1) == 0);
  CHECK(p.types.at("OH").number == -1);  // a number beyond int's range names no psf type
  CHECK(p.e14fac == 0.83);
  CHECK(p.types.at("HA").epsilon14_kcal == 0.01);
  CHECK(p.types.at("CA").rmin14_half_a == 1.99);
  const std::vector<CharmmDihedralTerm>* exact = p.find_dihedral({"HA", "CA", "CA", "HA"});
  REQUIRE(exact != nullptr);
  REQUIRE(exact->size() == 2);
  CHECK((*exact)[0].k_kcal == 2.5);
  CHECK((*exact)[0].phase_deg == 0.0);
  const std::vector<CharmmDihedralTerm>* wild = p.find_dihedral({"HA", "CA", "CA", "CA"});
  REQUIRE(wild != nullptr);
  CHECK((*wild)[0].k_kcal == 3.1);
  REQUIRE(p.find_improper({"HA", "CA", "CA", "CA"}) != nullptr);  // CA X X HA, reversed
  CHECK(p.find_improper({"CA", "HA", "HA", "CA"}) == nullptr);
  CHECK(p.nbfix.size() == 1);  // CA-XX names a type no file defines: left out, as OpenMM does

  const auto error = [](const std::string& text, CharmmFileKind kind) {
    CharmmParameters q;
    return mdsim_test::input_error_of([&] { read_charmm_parameter_text(text, "bad.prm", kind, q); });
  };
  CHECK(error("BONDS\nCA HA 340.0\n", CharmmFileKind::Parameters).find("bad.prm:2: expected a bond") == 0);
  CHECK(error("ANGLES\nCA HA CA 3x 120\n", CharmmFileKind::Parameters)
            .find("bad.prm:2: expected the angle force constant as field 4, found '3x'") == 0);
  CHECK(error("DIHEDRALS\nX CA CA X 3.1 0 180.0\n", CharmmFileKind::Parameters).find("bad.prm:2: dihedral periodicity 0") == 0);
  CHECK(error("NONBONDED\nCA 0.0 -0.07 1.99\n", CharmmFileKind::Parameters)
            .find("bad.prm:2: nonbonded values for atom type CA, which no MASS line defines") == 0);
  CHECK(error("CMAP\nC NH1 CT1 C NH1 CT1 C NH1 2\n1.0 2.0 3.0\n", CharmmFileKind::Parameters)
            .find("bad.prm:2: the CMAP grid of C NH1 CT1 C / NH1 CT1 C NH1 has 3 values, expected 2 x 2 = 4") == 0);
  CHECK(error("read para card\nBONDS\n", CharmmFileKind::Stream).find("bad.prm:1: the 'read para' block has no END") == 0);
  CHECK(mdsim_test::input_error_of([] { (void)charmm_file_kind("x.txt"); }).find("x.txt: not a CHARMM parameter file") == 0);
}

TEST_CASE("a PSF the reader cannot use is refused at its line, naming what is missing") {
  const std::string psf = mdsim_test::read_text(shared_dir() + "inputs/ala3_solv.psf");
  const CharmmParameters params = read_charmm_parameters(ala3_parameters());
  const TopologyFileOptions o = options_for(NonbondedMethod::NoCutoff, 1.0);
  const auto error = [&](const std::string& text, const CharmmParameters& par) {
    return mdsim_test::input_error_of([&] { (void)read_charmm_psf_text(text, "x.psf", par, o); });
  };
  CHECK(error("REMARK not a psf\n", params).find("x.psf:1: not a PSF file") == 0);
  CHECK(error(with(psf, "PSF EXT CMAP CHEQ", "PSF EXT CMAP CHEQ DRUDE"), params).find("x.psf:1: Drude polarisable") == 0);
  CHECK(error(with(psf, "2776 !NATOM", "2777 !NATOM"), params)
            .find("x.psf:8: !NATOM says 2777 atoms, but the section has 2776 lines") == 0);
  CHECK(error(with(psf, "2735 !NBOND", "2736 !NBOND"), params).find("x.psf:2786: !NBOND says 2736 entries of 2 atoms") == 0);
  CHECK(error(with(psf, "         2         1         3         1", "         2      2777         3         1"), params)
            .find("x.psf:2787: !NBOND entry 1: atom 2777 is out of range (1 to 2776)") == 0);
  CHECK(error(with(psf, "         0 !NNB", "         1 !NNB"), params).find("x.psf:4521: 1 explicit non-bonded exclusions") == 0);
  CHECK(error(with(psf, "ALA      N          72", "ALA      N          999"), params)
            .find("x.psf:9: atom type 999 of atom 1 (N of ALA 1, segment PROA) is not defined by a MASS line in") == 0);
  CharmmParameters no_bond = params;
  no_bond.bonds.erase(CharmmParameters::bond_key("CT1", "NH3"));
  CHECK(error(psf, no_bond)
            .find("x.psf:2788: no bond parameters for types NH3 - CT1 (atom 1 (N of ALA 1, segment PROA), atom 5 (CA of "
                  "ALA 1, segment PROA)) in") == 0);
  CharmmParameters no_cmap = params;
  no_cmap.cmaps.clear();
  CHECK(error(psf, no_cmap).find("x.psf:5542: no CMAP parameters for types C - NH1 - CT1 - C - NH1 - CT1 - C - NH1") == 0);
}
