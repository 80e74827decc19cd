// io/gromacs_top and io/gromacs_preprocessor: GROMACS topologies read into a System whose energies by term and forces
// on the CPU platform equal OpenMM 7.7's GromacsTopFile (tests/data/shared/topologies, and Debian's amber99sb-ildn,
// oplsaa and charmm27 through tests/data/make_gromacs_top_reference.py) or GROMACS's own totals where 7.7 differs;
// the preprocessor's conditionals, defines and includes; errors naming the file, line, record and what was expected.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/evaluator.hpp"
#include "io/gro_reader.hpp"
#include "io/gromacs_preprocessor.hpp"
#include "io/gromacs_top.hpp"
#include "support/catch.hpp"
#include "support/flexible_systems.hpp"
#include "support/reference_data.hpp"
#include "support/scratch.hpp"

using namespace mdsim;

namespace {

const std::string kShared = std::string(MDSIM_TEST_DATA_DIR) + "/topologies/";
const std::string kGmx = std::string(MDSIM_SOURCE_DIR) + "/tests/data/gromacs/";

TopologyFileOptions vacuum() { return mdsim_test::flexible_topology_options(NonbondedMethod::NoCutoff, 1.0, false); }

// |a - b| within 1e-6 of |b|, or of 1 kJ/mol for a term below it.
bool energy_agrees(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

struct Evaluated {
  EnergyTerms e;
  std::vector<Vec3d> forces;
};

Evaluated evaluate(const System& system, const std::vector<Vec3d>& positions) {
  auto evaluator = make_evaluator(system, PlatformChoice{PlatformKind::Cpu, 0, ""}, PlatformConfig{});
  Evaluated out;
  out.e = evaluator->compute(positions, &out.forces);
  return out;
}

void check_term(const std::string& name, const char* term, double mdsim, double openmm) {
  INFO(name << " " << term << ": mdsim " << mdsim << ", reference " << openmm);
  std::printf("%-16s %-12s mdsim %.10f reference %.10f difference %.3g\n", name.c_str(), term, mdsim, openmm,
              mdsim - openmm);
  CHECK(energy_agrees(mdsim, openmm));
}

void check_forces(const std::string& name, const std::vector<Vec3d>& got, const std::vector<Vec3d>& want) {
  REQUIRE(got.size() == want.size());
  const double rms = mdsim_test::relative_rms_difference(got, want);
  std::printf("%-16s forces: relative RMS difference %.3g\n", name.c_str(), rms);
  CHECK(rms <= 1e-6);
}

// OpenMM 7.7's GromacsTopFile puts [angles] function 5's Urey-Bradley part in a HarmonicBondForce, and the references
// sum every HarmonicBondForce into "bond"; mdsim reports it in its own urey_bradley term (System::urey_bradleys, not
// bonds): the two terms together equal the reference's bond.
void check_bond_and_urey_bradley(const std::string& name, const EnergyTerms& e, double openmm_bond) {
  check_term(name, "bond + urey_bradley", e.bond + e.urey_bradley, openmm_bond);
}

std::string thrown(const std::string& path, const TopologyFileOptions& options = vacuum()) {
  try {
    read_gromacs_top(path, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

bool have_gromacs_top() { return std::filesystem::is_directory("/usr/share/gromacs/top"); }

}  // namespace

TEST_CASE("gmx_apgr_nonbfix_pairs_comb2: energies by term and forces equal OpenMM 7.7's (= GROMACS's total)") {
  const TopologyFileModel m = read_gromacs_top(kShared + "inputs/apgr.nonbfix.pairs.comb2.top", vacuum());
  const CoordinateFile gro = read_gro(kShared + "inputs/apgr.gro");
  REQUIRE(m.system.num_particles() == 58);
  CHECK_FALSE(m.system.lj_types.has_value());
  CHECK(m.system.bonds.size() == 58);
  CHECK(m.system.urey_bradleys.size() == 43);
  CHECK(m.system.impropers.size() == 7);
  CHECK(m.topology.residues.size() == 4);
  CHECK(m.topology.chains.size() == 1);
  CHECK(m.topology.bonds.size() == 58);
  CHECK(m.topology.atoms[0].element == "N");
  const Evaluated r = evaluate(m.system, gro.positions_nm);
  const mdsim_test::Json ref = mdsim_test::read_json(kShared + "reference/gmx_apgr_nonbfix_pairs_comb2.json");
  const auto& e = ref["energies_kj_per_mol"];
  const std::string name = "apgr comb2";
  check_bond_and_urey_bradley(name, r.e, e["bond"].num());
  CHECK(r.e.urey_bradley > 0.0);
  check_term(name, "angle", r.e.angle, e["angle"].num());
  check_term(name, "torsion", r.e.torsion, e["torsion"].num());
  check_term(name, "improper", r.e.improper, e["improper"].num());
  check_term(name, "nonbonded", r.e.nonbonded_direct, e["nonbonded_direct"].num());
  check_term(name, "total", r.e.total, e["total"].num());
  check_forces(name, r.forces,
               mdsim_test::read_h5_vec3(kShared + "reference/gmx_apgr_nonbfix_pairs_comb2.h5", "forces_kj_per_mol_nm/total"));
}

TEST_CASE("apgr with generated pairs (gen-pairs, no [pairtypes]): GROMACS's total") {
  // OpenMM's TestGromacsTopFile.py quotes GROMACS's totals to 6 digits: agreement to half a unit of the last digit.
  const CoordinateFile gro = read_gro(kShared + "inputs/apgr.gro");
  const TopologyFileModel m = read_gromacs_top(kGmx + "apgr.nonbfix.nopairs.comb2.top", vacuum());
  CHECK_FALSE(m.system.lj_types.has_value());
  const Evaluated r = evaluate(m.system, gro.positions_nm);
  std::printf("apgr nopairs comb2 total mdsim %.4f GROMACS -909.637\n", r.e.total);
  CHECK(std::fabs(r.e.total - -909.637) <= 5e-4);
}

TEST_CASE("apgr with [nonbond_params], fudge factors or comb-rule 3: GROMACS's totals (OpenMM 7.7 differs)") {
  const CoordinateFile gro = read_gro(kShared + "inputs/apgr.gro");
  const std::pair<const char*, double> cases[] = {{"apgr.nbfix.pairs.comb2.top", -986.485},
                                                  {"apgr.nbfix.nopairs.comb2.fudge.top", -856.721},
                                                  {"apgr.nonbfix.pairs.comb3.top", -993.104}};
  for (const auto& [file, gromacs] : cases) {
    const Evaluated r = evaluate(read_gromacs_top(kGmx + file, vacuum()).system, gro.positions_nm);
    std::printf("%-36s total mdsim %.4f GROMACS %.3f\n", file, r.e.total, gromacs);
    INFO(file << ": mdsim " << r.e.total << ", GROMACS " << gromacs);
    CHECK(std::fabs(r.e.total - gromacs) <= 5e-4);
  }
}

TEST_CASE("apgr with [nonbond_params] or comb-rule 3 uses the pair-specific LJ table") {
  for (const char* file : {"apgr.nbfix.pairs.comb2.top", "apgr.nbfix.nopairs.comb2.fudge.top",
                           "apgr.nonbfix.pairs.comb3.top"}) {
    INFO(file);
    const TopologyFileModel m = read_gromacs_top(kGmx + file, vacuum());
    REQUIRE(m.system.lj_types.has_value());
    const LjTypeTable& t = *m.system.lj_types;
    CHECK(t.particle_type.size() == 58u);
    const auto n = static_cast<std::size_t>(t.num_types);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) CHECK(t.c6_kj_per_mol_nm6[a * n + b] == t.c6_kj_per_mol_nm6[b * n + a]);
    for (int i = 0; i < 58; ++i) CHECK(m.system.epsilon_kj_per_mol[static_cast<std::size_t>(i)] == 0.0);
  }
  // NC2-OC of [nonbond_params] (sigma 0.324019863788 nm, epsilon 0.648181096 kJ/mol): the table's entry.
  const TopologyFileModel m = read_gromacs_top(kGmx + "apgr.nbfix.pairs.comb2.top", vacuum());
  const LjTypeTable& t = *m.system.lj_types;
  int nc2 = -1, oc = -1;
  for (std::size_t k = 0; k < m.topology.atoms.size(); ++k) {
    if (m.topology.atoms[k].name == "NH1") nc2 = t.particle_type[k];
    if (m.topology.atoms[k].name == "OT1") oc = t.particle_type[k];
  }
  REQUIRE(nc2 >= 0);
  REQUIRE(oc >= 0);
  const double s6 = std::pow(0.324019863788, 6);
  const auto at = static_cast<std::size_t>(nc2 * t.num_types + oc);
  CHECK(std::fabs(t.c6_kj_per_mol_nm6[at] - 4 * 0.648181096 * s6) <= 1e-12 * 4 * 0.648181096 * s6);
  CHECK(std::fabs(t.c12_kj_per_mol_nm12[at] - 4 * 0.648181096 * s6 * s6) <= 1e-12 * 4 * 0.648181096 * s6 * s6);
}

TEST_CASE("gmx_bnz_vsite2: virtual sites and the LJ table equal OpenMM's") {
  const TopologyFileModel m = read_gromacs_top(kShared + "inputs/bnz.top", vacuum());
  const mdsim_test::Json ref = mdsim_test::read_json(kGmx + "gromacs_top_reference.json")["bnz"];
  REQUIRE(m.system.num_particles() == 26);
  REQUIRE(m.system.virtual_sites.size() == ref["virtual_sites"].size());
  for (std::size_t k = 0; k < m.system.virtual_sites.size(); ++k) {
    const VirtualSite& v = m.system.virtual_sites[k];
    const auto& w = ref["virtual_sites"][k];
    CHECK(v.type == VirtualSiteType::TwoParticleAverage);
    CHECK(v.particle == static_cast<int>(w["particle"].num()));
    CHECK(v.parents[0] == static_cast<int>(w["parents"][0].num()));
    CHECK(v.parents[1] == static_cast<int>(w["parents"][1].num()));
    CHECK(v.weights[0] == w["weights"][0].num());
    CHECK(v.weights[1] == w["weights"][1].num());
    CHECK(m.system.mass_amu[static_cast<std::size_t>(v.particle)] == 0.0);
  }
  REQUIRE(m.system.lj_types.has_value());
  const LjTypeTable& t = *m.system.lj_types;
  REQUIRE(t.num_types == static_cast<int>(ref["num_types"].num()));
  for (std::size_t i = 0; i < t.particle_type.size(); ++i) CHECK(t.particle_type[i] == static_cast<int>(ref["particle_type"][i].num()));
  for (std::size_t k = 0; k < t.c6_kj_per_mol_nm6.size(); ++k) {
    INFO("table entry " << k);
    CHECK(std::fabs(t.c6_kj_per_mol_nm6[k] - ref["c6_kj_per_mol_nm6"][k].num()) <= 1e-12 * t.c6_kj_per_mol_nm6[k] + 1e-300);
    CHECK(std::fabs(t.c12_kj_per_mol_nm12[k] - ref["c12_kj_per_mol_nm12"][k].num()) <= 1e-12 * t.c12_kj_per_mol_nm12[k] + 1e-300);
  }
  CHECK(m.topology.chains.size() == 2);
  CHECK(m.topology.atoms[12].element.empty());  // LP: atomic number 0
  // Energies with the sites placed (the reference positions) and forces (a site's share spread onto its parents).
  const std::string h5 = kShared + "reference/gmx_bnz_vsite2.h5";
  const Evaluated r = evaluate(m.system, mdsim_test::read_h5_vec3(h5, "positions_nm"));
  const mdsim_test::Json bnz_ref = mdsim_test::read_json(kShared + "reference/gmx_bnz_vsite2.json");
  const auto& e = bnz_ref["energies_kj_per_mol"];
  check_bond_and_urey_bradley("bnz", r.e, e["bond"].num());
  CHECK(m.system.urey_bradleys.size() == 2 * 18);  // each benzene's 18 angles are function 5 with kUB != 0
  CHECK(r.e.urey_bradley > 0.0);
  check_term("bnz", "angle", r.e.angle, e["angle"].num());
  check_term("bnz", "torsion", r.e.torsion, e["torsion"].num());
  check_term("bnz", "nonbonded", r.e.nonbonded_direct, e["nonbonded"].num());
  check_term("bnz", "total", r.e.total, e["total"].num());
  std::vector<Vec3d> want = mdsim_test::read_h5_vec3(h5, "forces_kj_per_mol_nm/total");
  std::vector<Vec3d> got = r.forces;
  for (const VirtualSite& v : m.system.virtual_sites) {  // compare the parents' rows only
    want[static_cast<std::size_t>(v.particle)] = Vec3d(0, 0, 0);
    got[static_cast<std::size_t>(v.particle)] = Vec3d(0, 0, 0);
  }
  check_forces("bnz", got, want);
  CHECK(m.topology.atoms[0].element == "C");
}

TEST_CASE("Debian's amber99sb-ildn, charmm27 and oplsaa through the preprocessor equal OpenMM 7.7's GromacsTopFile") {
  if (!have_gromacs_top()) {
    WARN("skipped: /usr/share/gromacs/top (Debian package gromacs-data) is absent");
    return;
  }
  const mdsim_test::Json ref = mdsim_test::read_json(kGmx + "gromacs_top_reference.json")["systems"];
  for (const char* ff : {"amber99sb-ildn", "charmm27", "oplsaa"}) {
    INFO(ff);
    const TopologyFileModel m = read_gromacs_top(kGmx + std::string(ff) + ".top", vacuum());
    const CoordinateFile gro = read_gro(kGmx + std::string(ff) + ".gro");
    const auto& want = ref[ff];
    REQUIRE(m.system.num_particles() == 22);
    for (std::size_t k = 0; k < 22; ++k) CHECK(m.topology.atoms[k].element == want["elements"][k].string);
    CHECK(m.position_restraints.empty());  // POSRES not defined
    const auto& e = want["energies_kj_per_mol"];
    const std::string name = ff;
    const Evaluated r = evaluate(m.system, gro.positions_nm);
    check_bond_and_urey_bradley(name, r.e, e["bond"].num());
    // OpenMM's HarmonicBondForce terms: the bonds and (charmm27) the Urey-Bradley terms.
    CHECK(m.system.bonds.size() + m.system.urey_bradleys.size() == want["counts"]["HarmonicBondForce"].num());
    CHECK(m.system.urey_bradleys.empty() == (std::string(ff) != "charmm27"));
    check_term(name, "angle", r.e.angle, e["angle"].num());
    check_term(name, "torsion", r.e.torsion, e["torsion"].num());
    if (e.has("improper")) check_term(name, "improper", r.e.improper, e["improper"].num());
    if (e.has("cmap")) check_term(name, "cmap", r.e.cmap, e["cmap"].num());
    if (e.has("rb_torsion")) check_term(name, "rb_torsion", r.e.rb_torsion, e["rb_torsion"].num());
    CHECK(m.system.lj_types.has_value() == (std::string(ff) == "oplsaa"));  // comb-rule 3: the LJ table
    check_term(name, "nonbonded", r.e.nonbonded_direct, e["nonbonded"].num());
    check_term(name, "total", r.e.total, e["total"].num());
    std::vector<Vec3d> forces;
    for (std::size_t k = 0; k < 22; ++k)
      forces.emplace_back(want["forces_kj_per_mol_nm"][k][0].num(), want["forces_kj_per_mol_nm"][k][1].num(),
                          want["forces_kj_per_mol_nm"][k][2].num());
    check_forces(name, r.forces, forces);
  }
}

TEST_CASE("OPLS-AA's TIP4P water ([virtual_sites3] function 1, FLEXIBLE): energies and forces as OpenMM's") {
  if (!have_gromacs_top()) {
    WARN("skipped: /usr/share/gromacs/top (Debian package gromacs-data) is absent");
    return;
  }
  // The reference is OpenMM's ForceField with tip4p.itp's parameters (7.7's GromacsTopFile cannot read
  // [virtual_sites3]; make_gromacs_top_reference.py tip4p_box).
  const mdsim_test::Json ref = mdsim_test::read_json(kGmx + "gromacs_top_reference.json");
  const mdsim_test::Json& want = ref["tip4p_box"];
  const TopologyFileModel m = read_gromacs_top(kGmx + "tip4p_box.top", vacuum());
  const int waters = static_cast<int>(want["waters"].num());
  REQUIRE(m.system.num_particles() == 4 * waters);
  REQUIRE(m.system.virtual_sites.size() == static_cast<std::size_t>(waters));
  const VirtualSite& v = m.system.virtual_sites.front();
  CHECK(v.type == VirtualSiteType::ThreeParticleAverage);
  CHECK(v.particle == 3);
  CHECK(std::fabs(v.weights[0] - (1.0 - 2 * 0.128012065)) < 1e-15);
  CHECK(m.system.bonds.size() == static_cast<std::size_t>(2 * waters));  // FLEXIBLE: bonds and an angle, no settles
  std::vector<Vec3d> x = read_gro(kGmx + "tip4p_box.gro").positions_nm;
  for (const VirtualSite& s : m.system.virtual_sites) x[static_cast<std::size_t>(s.particle)] += Vec3d(1, 1, 1);
  const Evaluated r = evaluate(m.system, x);
  const auto& e = want["energies_kj_per_mol"];
  check_term("tip4p_box", "bond", r.e.bond, e["bond"].num());
  check_term("tip4p_box", "angle", r.e.angle, e["angle"].num());
  check_term("tip4p_box", "nonbonded", r.e.nonbonded_direct, e["nonbonded"].num());
  check_term("tip4p_box", "total", r.e.total, e["total"].num());
  check_forces("tip4p_box", r.forces, mdsim_test::json_vec3_list(want["forces_kj_per_mol_nm"]));
}

TEST_CASE("position restraints are read under the define that guards them") {
  if (!have_gromacs_top()) {
    WARN("skipped: /usr/share/gromacs/top (Debian package gromacs-data) is absent");
    return;
  }
  TopologyFileOptions o = vacuum();
  o.defines = {{"POSRES", ""}};
  const TopologyFileModel m = read_gromacs_top(kGmx + "amber99sb-ildn.top", o);
  REQUIRE(m.position_restraints.size() == 10);  // the heavy atoms, as amber99sb-ildn_posre.itp lists them
  CHECK(m.position_restraints[0].atom == 0);    // atom 1 (CH3 of ACE)
  CHECK(m.position_restraints[1].atom == 4);    // atom 5 (C of ACE)
  CHECK(m.position_restraints[0].k_kj_per_mol_nm2[0] == 1000.0);
  CHECK(m.position_restraints[0].file.find("amber99sb-ildn_posre.itp") != std::string::npos);
  CHECK(m.position_restraints[0].guard == "POSRES");  // what the engine's notice names
}

TEST_CASE("preprocessor: nested conditionals, defines from options and the file, macros, continuation") {
  const mdsim_test::ScratchFolder& dir = mdsim_test::scratch_folder();
  std::filesystem::create_directories(dir.file("inc"));
  dir.write("inc/part.itp", "#ifdef OUTER\n  #ifndef INNER\nouter_only ; comment\n  #else\nboth\n  #endif\n#endif\n");
  const std::string top = dir.write("pp.top",
                                    "#define gb_1 0.1000 1.5700e+07\n#include \"part.itp\"\n[ bondtypes ]\n"
                                    "C H 2 gb_1 ; uses the macro\nxgb_1 gb_1x \\\n  continued\n#undef gb_1\ngb_1\n");
  GromacsPreprocessorOptions o;
  o.include_dirs = {dir.file("inc")};
  o.search_environment = false;
  o.defines = {{"OUTER", ""}};
  std::vector<GromacsLine> lines = preprocess_gromacs(top, o);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].text == "outer_only");
  CHECK(lines[0].guard == "OUTER and not INNER");  // the conditionals the line is under
  CHECK(lines[0].line == 3);
  CHECK(lines[0].file.find("part.itp") != std::string::npos);
  CHECK(lines[1].text == "[ bondtypes ]");
  CHECK(lines[1].guard.empty());
  CHECK(lines[2].text == "C H 2 0.1000 1.5700e+07");
  CHECK(lines[3].text == "xgb_1 gb_1x    continued");
  CHECK(lines[3].line == 5);
  CHECK(lines[4].text == "gb_1");
  o.defines.push_back({"INNER", "1"});
  lines = preprocess_gromacs(top, o);
  CHECK(lines[0].text == "both");
  CHECK(lines[0].guard == "OUTER and INNER");  // #ifndef INNER's #else
}

TEST_CASE("preprocessor errors: a missing include lists the folders searched; unbalanced conditionals") {
  const mdsim_test::ScratchFolder& dir = mdsim_test::scratch_folder();
  const std::string top = dir.write("missing.top", "; first\n#include \"nowhere.itp\"\n");
  GromacsPreprocessorOptions o;
  o.include_dirs = {"/extra/dir"};
  auto error_of = [&](const std::string& path) {  // the InputError's message ("" when none)
    try {
      preprocess_gromacs(path, o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string message = error_of(top);
  CHECK(message.find(top + ":2: #include \"nowhere.itp\": file not found; searched " +
                     std::filesystem::path(top).parent_path().string()) == 0);
  CHECK(message.find("/extra/dir, ") != std::string::npos);
  CHECK(message.find("/usr/share/gromacs/top") != std::string::npos);
  // (std::string::find, not Catch's Contains matcher: Catch2 v3 resolves Contains to its range matcher here)
  CHECK(error_of(dir.write("open.top", "#ifdef A\nx\n")).find("open.top:1: #ifdef A is not closed") !=
        std::string::npos);
  CHECK(error_of(dir.write("endif.top", "x\n#endif\n")).find("endif.top:2: #endif without") != std::string::npos);
}

TEST_CASE("topology errors name the file, the line, the record and the fix") {
  const mdsim_test::ScratchFolder& dir = mdsim_test::scratch_folder();
  const std::string head =
      "[ defaults ]\n1 2 yes 0.5 0.8333\n[ atomtypes ]\nCT 6 12.01 0.0 A 0.34 0.45\nHC 1 1.008 0.0 A 0.26 0.06\n"
      "[ bondtypes ]\nCT HC 1 0.109 284512.0\n[ moleculetype ]\nMOL 3\n[ atoms ]\n1 CT 1 MOL C1 1 -0.3\n"
      "2 HC 1 MOL H1 1 0.1\n3 CT 1 MOL C2 1 -0.3\n4 HC 1 MOL H2 1 0.1\n";
  const std::string tail = "[ system ]\nx\n[ molecules ]\nMOL 1\n";
  const std::string ok = dir.write("ok.top", head + "[ bonds ]\n1 2 1\n" + tail);
  CHECK(read_gromacs_top(ok, vacuum()).system.bonds.size() == 1);
  CHECK(thrown(dir.write("type.top", head + "5 XX 1 MOL Q 1 0\n" + tail)) ==
        dir.file("type.top") + ":15: [ atoms ]: unknown atom type \"XX\"; define it in [ atomtypes ] (or #include the "
                               "force field that does) before the molecule");
  const std::string dihedral = thrown(dir.write("dih.top", head + "[ dihedrals ]\n2 1 3 4 9\n" + tail));
  CHECK(dihedral.find(dir.file("dih.top") + ":16: no parameters for the dihedral 2-1-3-4: [ dihedraltypes ] has no "
                                            "line for the types HC CT CT HC (function 9)") == 0);
  CHECK(thrown(dir.write("func.top", head + "[ bonds ]\n1 2 3 0.1 1 2\n" + tail))
            .find(dir.file("func.top") + ":16: [ bonds ] function type 3 is not supported") == 0);
  CHECK(thrown(dir.write("mol.top", head + "[ system ]\nx\n[ molecules ]\nMOL 1\nWAT 2\n"))
            .find(dir.file("mol.top") + ":19: [ molecules ]: molecule type \"WAT\" is not defined (defined: MOL)") == 0);
  CHECK(thrown(dir.write("bond.top", head + "[ bonds ]\n1 3 1\n" + tail))
            .find("no parameters for the bond 1-3: [ bondtypes ] has no line for the types CT CT (function 1)") !=
        std::string::npos);
}

// Found by fuzzing (fuzz/gromacs_top.cpp; fuzz/regressions/gromacs_top/): a charge or mass of nan or inf was taken
// as a number, and a [molecules] count of 10^8 built molecules until memory ran out.
TEST_CASE("non-finite numbers and a [molecules] total over the atom limit are refused at their line") {
  const mdsim_test::ScratchFolder& dir = mdsim_test::scratch_folder();
  const std::string head =
      "[ defaults ]\n1 2 yes 0.5 0.8333\n[ atomtypes ]\nCT 6 12.01 0.0 A 0.34 0.45\n[ moleculetype ]\nMOL 3\n"
      "[ atoms ]\n";
  const std::string tail = "[ system ]\nx\n[ molecules ]\n";
  CHECK(thrown(dir.write("nan.top", head + "1 CT 1 MOL C1 1 nan\n" + tail + "MOL 1\n")) ==
        dir.file("nan.top") + ":8: field 7 \"nan\": expected the charge (e) (a number)");
  CHECK(thrown(dir.write("inf.top", head + "1 CT 1 MOL C1 1 0 inf\n" + tail + "MOL 1\n")).find(
            dir.file("inf.top") + ":8: field 8 \"inf\": expected") == 0);
  const std::string many = dir.write("many.top", head + "1 CT 1 MOL C1 1 0\n2 CT 1 MOL C2 1 0\n" + tail +
                                                     "MOL 3\nMOL 100000000\n");
  TopologyFileOptions limited = vacuum();
  limited.atom_limit = 10;
  CHECK(thrown(many, limited) == dir.file("many.top") + ":14: [ molecules ]: 100000000 MOL make at least 200000006 "
                                                        "atoms, but the coordinates have 10");
  const std::string huge = dir.write("huge.top", head + "1 CT 1 MOL C1 1 0\n2 CT 1 MOL C2 1 0\n" + tail +
                                                     "MOL 2000000000\n");
  CHECK(thrown(huge) == dir.file("huge.top") + ":13: [ molecules ]: 2000000000 MOL make at least 4000000000 atoms, "
                                               "more than 2^31 - 1");
}
