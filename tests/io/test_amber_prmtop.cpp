// io/amber_prmtop and io/amber_coordinates against OpenMM 7.7: the shared topology references
// (tests/data/shared/topologies: energies by term and forces, Reference platform) and tests/data/amber
// (make_amber_reference.py: virtual sites, boxes, an implicit-solvent dipeptide, an LJ table that breaks the combining
// rule, a GAFF small molecule); every refusal names the file, the line and the %FLAG.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/evaluator.hpp"
#include "io/amber_coordinates.hpp"
#include "io/amber_prmtop.hpp"
#include "support/catch.hpp"
#include "support/flexible_systems.hpp"
#include "support/reference_data.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

using namespace mdsim;

namespace {

std::string shared_dir() { return std::string(MDSIM_TEST_DATA_DIR) + "/topologies/"; }
std::string amber_dir() { return std::string(MDSIM_SOURCE_DIR) + "/tests/data/amber/"; }

const mdsim_test::Json& amber_reference() {
  static const mdsim_test::Json ref = mdsim_test::read_json(amber_dir() + "amber_reference.json");
  return ref;
}

TopologyFileOptions options_for(NonbondedMethod method, double cutoff_nm) {
  return mdsim_test::flexible_topology_options(method, cutoff_nm, true);
}

// |a - b| within 1e-6 of |b|, or of 1 kJ/mol for a term below it.
bool energy_agrees(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

bool close(double a, double b, double relative = 1e-12) {
  return std::fabs(a - b) <= relative * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

void check_box(const Boxd& box, const mdsim_test::Json& rows, double tolerance_nm) {
  const Vec3d v[3] = {box.a, box.b, box.c};
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t k = 0; k < 3; ++k) {
      INFO("box row " << r << " component " << k);
      CHECK(std::fabs(v[r][static_cast<int>(k)] - rows[r][k].num()) <= tolerance_nm);
    }
}

EnergyTerms evaluate(const System& system, const std::vector<Vec3d>& positions, std::vector<Vec3d>& forces) {
  auto evaluator = make_evaluator(system, PlatformChoice{PlatformKind::Cpu, 0, ""}, PlatformConfig{});
  return evaluator->compute(positions, &forces);
}

void check_energies(const char* name, const EnergyTerms& e, const mdsim_test::Json& ref,
                    std::vector<std::pair<const char*, double>> terms) {
  for (const auto& [term, value] : terms) {
    const double want = ref[term].num();
    INFO(name << " " << term << ": mdsim " << value << ", OpenMM " << want);
    std::printf("%-20s %-21s mdsim %.10f OpenMM %.10f difference %.3g\n", name, term, value, want, value - want);
    CHECK(energy_agrees(value, want));
  }
  (void)e;
}

void check_forces(const char* name, const std::vector<Vec3d>& got, const std::vector<Vec3d>& want) {
  REQUIRE(got.size() == want.size());
  const double rms = mdsim_test::relative_rms_difference(got, want);
  std::printf("%-20s forces: relative RMS difference %.3g, largest |dF| %.3g kJ/mol/nm\n", name, rms,
              mdsim_test::max_abs_difference(got, want));
  CHECK(rms <= 1e-6);
}

}  // namespace

TEST_CASE("alanine dipeptide in water: System, Topology and energies by term equal OpenMM 7.7's") {
  const mdsim_test::Json ref = mdsim_test::read_json(shared_dir() + "reference/amber_ala2_explicit.json");
  const TopologyFileModel m = read_amber_prmtop(shared_dir() + "inputs/alanine-dipeptide-explicit.prmtop",
                                                options_for(NonbondedMethod::PME, 1.0));
  const System& s = m.system;
  const mdsim_test::Json& counts = ref["counts"];
  CHECK(s.num_particles() == 2269);
  CHECK(s.bonds.size() == static_cast<std::size_t>(counts["bond"].num()));
  CHECK(s.angles.size() == static_cast<std::size_t>(counts["angle"].num()));
  CHECK(s.torsions.size() == static_cast<std::size_t>(counts["torsion"].num()));
  CHECK(s.exceptions.size() == static_cast<std::size_t>(counts["exceptions"].num()));
  CHECK(std::count_if(s.exceptions.begin(), s.exceptions.end(), [](const NonbondedException& e) {
          return e.charge_product_e2 != 0.0 || e.epsilon_kj_per_mol != 0.0;
        }) == static_cast<long>(counts["exceptions_nonzero"].num()));
  CHECK(s.constraints.empty());
  CHECK_FALSE(s.lj_types.has_value());
  CHECK(m.topology.residues.size() == static_cast<std::size_t>(counts["residues"].num()));
  CHECK(m.topology.chains.size() == 1);
  CHECK(m.topology.bonds.size() == static_cast<std::size_t>(counts["topology_bonds"].num()));
  CHECK(m.topology.residues[0].name == "ACE");
  CHECK(m.topology.residues[3].name == "WAT");  // names as written, as the PDB reader keeps them
  CHECK(m.topology.atoms[1].name == "CH3");
  CHECK(m.topology.atoms[1].element == "C");
  CHECK(m.topology.atoms[0].element == "H");
  REQUIRE(s.box.has_value());
  check_box(*s.box, ref["box_nm"], 1e-12);

  const CoordinateFile crd = read_amber_coordinates(shared_dir() + "inputs/alanine-dipeptide-explicit.inpcrd", 2269);
  const std::vector<Vec3d> positions =
      mdsim_test::read_h5_vec3(shared_dir() + "reference/amber_ala2_explicit.h5", "positions_nm");
  CHECK(mdsim_test::max_abs_difference(crd.positions_nm, positions) < 1e-12);
  REQUIRE(crd.box.has_value());
  check_box(*crd.box, ref["box_nm"], 1e-12);
  CHECK(crd.velocities_nm_per_ps.empty());

  std::vector<Vec3d> forces;
  const EnergyTerms e = evaluate(s, positions, forces);
  check_energies("amber_ala2_explicit", e, ref["energies_kj_per_mol"],
                 {{"bond", e.bond},
                  {"angle", e.angle},
                  {"torsion", e.torsion},
                  {"nonbonded_direct", e.nonbonded_direct},
                  {"nonbonded_reciprocal", e.nonbonded_reciprocal},
                  {"dispersion_correction", e.dispersion_correction},
                  {"total", e.total}});
  check_forces("amber_ala2_explicit", forces,
               mdsim_test::read_h5_vec3(shared_dir() + "reference/amber_ala2_explicit.h5", "forces_kj_per_mol_nm/total"));
}

TEST_CASE("TIP4P extra points become OpenMM's virtual sites; the truncated octahedron its reduced box") {
  const TopologyFileModel m =
      read_amber_prmtop(shared_dir() + "inputs/peptide_with_tip4p.prmtop", options_for(NonbondedMethod::PME, 0.5));
  const mdsim_test::Json& want = amber_reference()["peptide_tip4p"];
  const std::vector<VirtualSite>& sites = m.system.virtual_sites;
  REQUIRE(sites.size() == 15);
  REQUIRE(want["virtual_sites"].size() == 15);
  for (std::size_t k = 0; k < sites.size(); ++k) {
    const mdsim_test::Json& w = want["virtual_sites"][k];
    INFO("site " << k);
    CHECK(sites[k].particle == static_cast<int>(w["particle"].num()));
    CHECK(sites[k].type == VirtualSiteType::ThreeParticleAverage);
    CHECK(sites[k].num_parents == 3);
    for (std::size_t p = 0; p < 3; ++p) {
      CHECK(sites[k].parents[p] == static_cast<int>(w["parents"][p].num()));
      CHECK(close(sites[k].weights[p], w["weights"][p].num()));
    }
    CHECK(m.system.mass_amu[static_cast<std::size_t>(sites[k].particle)] == 0.0);
  }
  REQUIRE(m.system.box.has_value());
  check_box(*m.system.box, want["box_nm"], 1e-12);
  const CoordinateFile crd = read_amber_coordinates(shared_dir() + "inputs/peptide_with_tip4p.inpcrd", 85);
  REQUIRE(crd.box.has_value());
  check_box(*crd.box, want["box_nm"], 1e-12);

  const mdsim_test::Json ref = mdsim_test::read_json(shared_dir() + "reference/amber_peptide_tip4p.json");
  CHECK(m.system.bonds.size() == static_cast<std::size_t>(ref["counts"]["bond"].num()));
  CHECK(m.system.angles.size() == static_cast<std::size_t>(ref["counts"]["angle"].num()));
  CHECK(m.system.torsions.size() == static_cast<std::size_t>(ref["counts"]["torsion"].num()));
  CHECK(m.system.exceptions.size() == static_cast<std::size_t>(ref["counts"]["exceptions"].num()));
  const std::string h5 = shared_dir() + "reference/amber_peptide_tip4p.h5";
  std::vector<Vec3d> forces;
  const EnergyTerms e = evaluate(m.system, mdsim_test::read_h5_vec3(h5, "positions_nm"), forces);
  check_energies("amber_peptide_tip4p", e, ref["energies_kj_per_mol"],
                 {{"bond", e.bond},
                  {"angle", e.angle},
                  {"torsion", e.torsion},
                  {"nonbonded_direct", e.nonbonded_direct},
                  {"nonbonded_reciprocal", e.nonbonded_reciprocal},
                  {"total", e.total}});
  check_forces("amber_peptide_tip4p", forces, mdsim_test::read_h5_vec3(h5, "forces_kj_per_mol_nm/total"));
}

TEST_CASE("an implicit-solvent dipeptide without a box: energies and forces without cutoff equal OpenMM 7.7's") {
  const TopologyFileModel m =
      read_amber_prmtop(amber_dir() + "alanine-dipeptide-implicit.prmtop", options_for(NonbondedMethod::NoCutoff, 1.0));
  CHECK_FALSE(m.system.box.has_value());
  const mdsim_test::Json& want = amber_reference()["ala2_implicit"];
  CHECK(m.system.exceptions.size() == static_cast<std::size_t>(want["exceptions"].num()));
  const CoordinateFile crd = read_amber_coordinates(amber_dir() + "alanine-dipeptide-implicit.inpcrd", 22);
  CHECK_FALSE(crd.box.has_value());
  std::vector<Vec3d> forces;
  const EnergyTerms e = evaluate(m.system, crd.positions_nm, forces);
  check_energies("amber_ala2_implicit", e, want["energies_kj_per_mol"],
                 {{"bond", e.bond},
                  {"angle", e.angle},
                  {"torsion", e.torsion},
                  {"nonbonded_direct", e.nonbonded_direct},
                  {"total", e.total}});
  check_forces("amber_ala2_implicit", forces, mdsim_test::json_vec3_list(want["forces_kj_per_mol_nm"]));
}

TEST_CASE("a GAFF small molecule (phenol: ca, oh, ha, ho types; tleap output) gives OpenMM 7.7's energies and forces") {
  const TopologyFileModel m =
      read_amber_prmtop(amber_dir() + "phenol_gaff.prmtop", options_for(NonbondedMethod::NoCutoff, 1.0));
  const mdsim_test::Json& want = amber_reference()["phenol_gaff"];
  CHECK(m.system.num_particles() == 13);
  CHECK(m.system.exceptions.size() == static_cast<std::size_t>(want["exceptions"].num()));
  CHECK(m.system.torsions.size() == static_cast<std::size_t>(want["torsions"].num()));
  CHECK(m.topology.atoms[6].element == "O");
  const CoordinateFile crd = read_amber_coordinates(amber_dir() + "phenol_gaff.inpcrd", 13);
  std::vector<Vec3d> forces;
  const EnergyTerms e = evaluate(m.system, crd.positions_nm, forces);
  check_energies("amber_phenol_gaff", e, want["energies_kj_per_mol"],
                 {{"bond", e.bond},
                  {"angle", e.angle},
                  {"torsion", e.torsion},
                  {"nonbonded_direct", e.nonbonded_direct},
                  {"total", e.total}});
  check_forces("amber_phenol_gaff", forces, mdsim_test::json_vec3_list(want["forces_kj_per_mol_nm"]));
}

TEST_CASE("a CMAP term (AMBER's grid from -180 degrees, phi the row) gives OpenMM 7.7's energy and forces") {
  const TopologyFileModel m =
      read_amber_prmtop(amber_dir() + "alanine-dipeptide-cmap.prmtop", options_for(NonbondedMethod::NoCutoff, 1.0));
  REQUIRE(m.system.cmap_maps.size() == 1);
  CHECK(m.system.cmap_maps[0].size == 24);
  REQUIRE(m.system.cmap_torsions.size() == 1);
  const std::array<int, 8> atoms{4, 6, 8, 14, 6, 8, 14, 16};
  CHECK(m.system.cmap_torsions[0].atoms() == atoms);
  const mdsim_test::Json& want = amber_reference()["ala2_cmap"];
  const CoordinateFile crd = read_amber_coordinates(amber_dir() + "alanine-dipeptide-implicit.inpcrd", 22);
  std::vector<Vec3d> forces;
  const EnergyTerms e = evaluate(m.system, crd.positions_nm, forces);
  check_energies("amber_ala2_cmap", e, want["energies_kj_per_mol"], {{"cmap", e.cmap}, {"total", e.total}});
  check_forces("amber_ala2_cmap", forces, mdsim_test::json_vec3_list(want["forces_kj_per_mol_nm"]));
}

TEST_CASE("an LJ table that breaks the combining rule becomes System::lj_types as OpenMM's tabulated force") {
  const TopologyFileModel m =
      read_amber_prmtop(amber_dir() + "ff14ipq.parm7", options_for(NonbondedMethod::PME, 0.9));
  const mdsim_test::Json& want = amber_reference()["ff14ipq"];
  REQUIRE(m.system.lj_types.has_value());
  const LjTypeTable& t = *m.system.lj_types;
  const int n = static_cast<int>(want["num_types"].num());
  REQUIRE(t.num_types == n);
  for (std::size_t k = 0; k < want["table"].size(); ++k) {
    const mdsim_test::Json& w = want["table"][k];
    const auto i = static_cast<std::size_t>(w["t1"].num()), j = static_cast<std::size_t>(w["t2"].num());
    INFO("types " << i << ", " << j);
    CHECK(close(t.c12_kj_per_mol_nm12[i * static_cast<std::size_t>(n) + j], w["c12"].num(), 1e-12));
    CHECK(close(t.c6_kj_per_mol_nm6[i * static_cast<std::size_t>(n) + j], w["c6"].num(), 1e-12));
  }
  for (std::size_t k = 0; k < 10; ++k) CHECK(t.particle_type[k] == static_cast<int>(want["particle_type_first"][k].num()));
  CHECK(std::all_of(m.system.epsilon_kj_per_mol.begin(), m.system.epsilon_kj_per_mol.end(),
                    [](double e) { return e == 0.0; }));
  REQUIRE(m.system.exceptions.size() == static_cast<std::size_t>(want["num_exceptions"].num()));
  for (std::size_t k = 0; k < 3; ++k) {
    const mdsim_test::Json& w = want["exceptions"][k];
    const NonbondedException& e = m.system.exceptions[k == 2 ? m.system.exceptions.size() - 1 : k];
    INFO("exception " << k);
    CHECK(e.i == static_cast<int>(w[0].num()));
    CHECK(e.j == static_cast<int>(w[1].num()));
    CHECK(close(e.charge_product_e2, w[2].num(), 1e-12));
    CHECK(close(e.sigma_nm, w[3].num(), 1e-12));
    CHECK(close(e.epsilon_kj_per_mol, w[4].num(), 1e-12));
  }
  REQUIRE(m.notes.size() == 1);
  const CoordinateFile crd = read_amber_coordinates(amber_dir() + "ff14ipq.rst7", 2797);
  REQUIRE(crd.box.has_value());
  // Energies: bonded terms here; the nonbonded ones need the platform's pair-specific LJ (System::lj_types).
  std::vector<Vec3d> forces;
  const EnergyTerms e = evaluate(m.system, crd.positions_nm, forces);
  const mdsim_test::Json& ref = want["energies_kj_per_mol"];
  check_energies("amber_ff14ipq", e, ref, {{"bond", e.bond}, {"angle", e.angle}, {"torsion", e.torsion}});
  const double nonbonded = ref["nonbonded_direct"].num() + ref["custom_nonbonded"].num() + ref["nonbonded_reciprocal"].num();
  std::printf("amber_ff14ipq        nonbonded mdsim %.6f OpenMM %.6f difference %.3g\n", e.nonbonded, nonbonded,
              e.nonbonded - nonbonded);
  CHECK(energy_agrees(e.nonbonded, nonbonded));
}

TEST_CASE("AMBER coordinates: velocities and box by line count, atom-count mismatch and NetCDF refused") {
  const auto dir = mdsim_test::scratch("coordinates");
  const std::string path = (dir / "three.rst7").string();
  std::ofstream(path) << "three atoms\n    3  10.000000\n"
                         "   1.0000000   2.0000000   3.0000000   4.0000000   5.0000000   6.0000000\n"
                         "   7.0000000   8.0000000   9.0000000\n"
                         "   0.1000000   0.2000000   0.3000000   0.4000000   0.5000000   0.6000000\n"
                         "   0.7000000   0.8000000   0.9000000\n"
                         "  30.0000000  31.0000000  32.0000000  90.0000000  90.0000000  90.0000000\n";
  const CoordinateFile c = read_amber_coordinates(path, 3);
  REQUIRE(c.positions_nm.size() == 3);
  CHECK(c.positions_nm[2].z == Catch::Approx(0.9).epsilon(1e-15));
  REQUIRE(c.velocities_nm_per_ps.size() == 3);
  CHECK(c.velocities_nm_per_ps[1].x == Catch::Approx(0.04 * 20.455).epsilon(1e-15));
  REQUIRE(c.box.has_value());
  CHECK(c.box->c.z == Catch::Approx(3.2).epsilon(1e-15));
  CHECK(mdsim_test::input_error_of([&] { read_amber_coordinates(path, 4); }) ==
        path + ":2: has 3 atoms, the topology has 4: the coordinates and the topology must describe the same atoms in "
               "the same order");
  const std::string short_path = (dir / "short.rst7").string();
  std::ofstream(short_path) << "three atoms\n    3\n   1.0000000   2.0000000   3.0000000   4.0000000   5.0000000   "
                               "6.0000000\n";
  CHECK(mdsim_test::input_error_of([&] { read_amber_coordinates(short_path, 3); })
            .find(short_path + ":3: has 3 lines, which does not fit 3 atoms") == 0);
  const std::string netcdf = (dir / "restart.ncrst").string();
  std::ofstream(netcdf) << "CDF\x01 binary";
  CHECK(mdsim_test::input_error_of([&] { read_amber_coordinates(netcdf, 3); }).find("NetCDF") != std::string::npos);
}

namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

int line_of(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

std::string error_of(const std::string& text, NonbondedMethod method = NonbondedMethod::NoCutoff) {
  return mdsim_test::input_error_of([&] { read_amber_prmtop_text(text, "bad.prmtop", options_for(method, 1.0)); });
}

}  // namespace

TEST_CASE("damaged and unsupported prmtops are refused at the %FLAG and line at fault") {
  const std::string text = mdsim_test::read_text(amber_dir() + "alanine-dipeptide-implicit.prmtop");
  // Truncated in the middle of the bond list: that flag's count.
  const std::size_t flag = text.find("%FLAG BONDS_WITHOUT_HYDROGEN");
  const std::size_t data = text.find('\n', text.find('\n', flag) + 1) + 1;  // after its %FORMAT line
  const std::string cut = text.substr(0, text.find('\n', data) + 1);         // one line of ten values
  CHECK(error_of(cut) == "bad.prmtop:" + std::to_string(line_of(cut, "%FLAG BONDS_WITHOUT_HYDROGEN")) +
                             ": %FLAG BONDS_WITHOUT_HYDROGEN: has 10 values, expected 27 (3 x MBONA of %FLAG "
                             "POINTERS); the file is truncated or inconsistent with %FLAG POINTERS");
  // POINTERS says 13 bonds with hydrogen (NBONH), the list has 12.
  const std::string pointers = replaced(text, "      22       7      12", "      22       7      13");
  CHECK(error_of(pointers) == "bad.prmtop:" + std::to_string(line_of(text, "%FLAG BONDS_INC_HYDROGEN")) +
                                  ": %FLAG BONDS_INC_HYDROGEN: has 36 values, expected 39 (3 x NBONH of %FLAG "
                                  "POINTERS); the file is truncated or inconsistent with %FLAG POINTERS");
  // An atom pointer beyond the 22 atoms.
  const std::string index = replaced(text, "      12      15       1      12", "      12     990       1      12");
  CHECK(error_of(index) == "bad.prmtop:" + std::to_string(line_of(text, "%FLAG BONDS_WITHOUT_HYDROGEN") + 2) +
                               ": %FLAG BONDS_WITHOUT_HYDROGEN: atom pointer 990 is not an atom: expected 3 (index - "
                               "1) for an atom index 1 to NATOM = 22 (negative here is not allowed)");
  // A value that is not a number.
  const std::string garbage = replaced(text, "  1.00800000E+00  1.20100000E+01", "  1.00800000E+00  1.2010x000E+01");
  CHECK(error_of(garbage) == "bad.prmtop:" + std::to_string(line_of(text, "%FLAG MASS") + 2) +
                                 ": %FLAG MASS: value 2 '1.2010x000E+01' is not a number");
  // A missing flag.
  const std::size_t mass = text.find("%FLAG MASS"), after = text.find("%FLAG", mass + 5);
  const std::string no_mass = text.substr(0, mass) + text.substr(after);
  CHECK(error_of(no_mass).find(": %FLAG MASS is missing") != std::string::npos);
  // 12-6-4 C coefficients.
  const std::string ccoef = text + "%FLAG LENNARD_JONES_CCOEF\n%FORMAT(5E16.8)\n  0.00000000E+00\n";
  CHECK(error_of(ccoef) == "bad.prmtop:" + std::to_string(line_of(ccoef, "%FLAG LENNARD_JONES_CCOEF")) +
                               ": %FLAG LENNARD_JONES_CCOEF: the 12-6-4 Lennard-Jones C coefficients (ion models of "
                               "Li/Merz) are not supported yet: build the system without them or use OpenMM");
  // Polarisable.
  CHECK(error_of(text + "%FLAG IPOL\n%FORMAT(1I8)\n       1\n").find("IPOL is not 0: polarisable") != std::string::npos);
  // A periodic method without a box.
  CHECK(error_of(text, NonbondedMethod::PME).find("IFBOX is 0") != std::string::npos);
  // Old style and empty.
  CHECK(error_of("ACE\n  22 7 12\n").find("bad.prmtop:1: not a new-style AMBER prmtop") == 0);
  CHECK(error_of("") == "bad.prmtop: not an AMBER prmtop: no %FLAG line (an empty file, or an old-style prmtop, which "
                        "is not supported)");
}

// Found by fuzzing (fuzz/amber_prmtop.cpp, fuzz/amber_coordinates.cpp; fuzz/regressions/amber_*): an LJ A/B pair whose
// radius overflows gave an infinite sigma, a periodicity of 1e300 reached a float-to-int conversion (a POINTERS count
// near 2^63 overflowing NTYPES^2: fuzz/regressions/amber_prmtop/pointers-*), and an inpcrd atom count near 2^63 overflowed (NATOM + 1) / 2.
TEST_CASE("prmtop and inpcrd values that overflow are refused at their line") {
  const std::string text = mdsim_test::read_text(amber_dir() + "alanine-dipeptide-implicit.prmtop");
  const int acoef = line_of(text, "%FLAG LENNARD_JONES_ACOEF");
  const std::string lj = replaced(replaced(text, "  7.51607703E+03", "  1.0000000E+300"), "  2.17257828E+01",
                                  "  1.0000000E-300");
  CHECK(error_of(lj).find("bad.prmtop:" + std::to_string(acoef + 2) + ": %FLAG LENNARD_JONES_ACOEF: type ") == 0);
  CHECK(error_of(lj).find("give no finite Lennard-Jones radius and depth") != std::string::npos);
  const int periodicity = line_of(text, "%FLAG DIHEDRAL_PERIODICITY");
  CHECK(error_of(replaced(text, "  1.00000000E+00  2.00000000E+00  2.00000000E+00", "             NaN  2.00000000E+00"
                                                                                   "  2.00000000E+00")) ==
        "bad.prmtop:" + std::to_string(periodicity + 2) + ": %FLAG DIHEDRAL_PERIODICITY: value 1 'NaN' is not a finite "
                                                          "number");
  CHECK(error_of(replaced(text, "  1.00000000E+00  2.00000000E+00  2.00000000E+00", "  1.0000000E+300  2.00000000E+00"
                                                                                   "  2.00000000E+00"))
            .find(": %FLAG DIHEDRAL_PERIODICITY: dihedral type 1 has periodicity 1e+300") != std::string::npos);
  CHECK(mdsim_test::input_error_of([] { read_amber_coordinates_text("t\n9223372036854775807\n", "x.inpcrd", -1); }) ==
        "x.inpcrd:2: gives 9223372036854775807 atoms, but the file has only 2 lines (two atoms a line): the file is "
        "truncated or its atom count is wrong");
  CHECK(mdsim_test::input_error_of([] {
          read_amber_coordinates_text("t\n 1\n         nan   2.0000000   3.0000000\n", "x.inpcrd", -1);
        }).find("x.inpcrd:3:1: expected positions") == 0);
}
