// Force field XML reader, topology bonds, template matching and System building (io/forcefield_xml,
// model/forcefield). The generators one by one: test_forcefield_generators.cpp.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "model/forcefield.hpp"
#include "support/catch.hpp"
#include "support/forcefield_fixtures.hpp"
#include "support/scratch.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

namespace fs = std::filesystem;
using namespace mdsim;
using mdsim_test::check_close;
using mdsim_test::OpenMMTerms;
using mdsim_test::read_terms;
using mdsim_test::amber14;
using mdsim_test::amber99sb;
using mdsim_test::input_error_of;
using mdsim_test::kData;
using mdsim_test::kReference;
using mdsim_test::kSystems;
using mdsim_test::scratch_folder;
using mdsim_test::tiny_topology;

namespace {

// The number after "key": inside the "counts" object of a reference JSON file.
double json_count(const std::string& json, const std::string& key) {
  const auto counts = json.find("\"counts\"");
  REQUIRE(counts != std::string::npos);
  const auto at = json.find("\"" + key + "\":", counts);
  INFO(key);
  REQUIRE(at != std::string::npos);
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// Every term of our System equals OpenMM's (same order, atoms and parameters to the 10 digits stored).
void compare_with_openmm(const std::string& pdb, const ForceFieldData& ff, const std::string& terms_file) {
  const OpenMMTerms ref = read_terms(terms_file);
  Topology top = read_pdb(pdb);
  create_topology_bonds(top, ff.standard);
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::NoCutoff;
  TemplateAssignment assigned;
  const System sys = build_system(top, ff, o, &assigned);
  CHECK(static_cast<int>(top.bonds.size()) == ref.topology_bonds);
  CHECK(assigned.residue_template == ref.templates);
  REQUIRE(sys.num_particles() == static_cast<int>(ref.particles.size()));
  for (int i = 0; i < sys.num_particles(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    check_close({static_cast<double>(i), sys.mass_amu[u], sys.charge_e[u], sys.sigma_nm[u], sys.epsilon_kj_per_mol[u]},
                ref.particles[u]);
  }
  REQUIRE(sys.bonds.size() == ref.bonds.size());
  for (std::size_t n = 0; n < sys.bonds.size(); ++n) {
    const auto& b = sys.bonds[n];
    check_close({double(b.i), double(b.j), b.length_nm, b.k_kj_per_mol_nm2}, ref.bonds[n]);
  }
  REQUIRE(sys.angles.size() == ref.angles.size());
  for (std::size_t n = 0; n < sys.angles.size(); ++n) {
    const auto& a = sys.angles[n];
    check_close({double(a.i), double(a.j), double(a.k), a.angle_rad, a.k_kj_per_mol_rad2}, ref.angles[n]);
  }
  REQUIRE(sys.torsions.size() == ref.torsions.size());
  for (std::size_t n = 0; n < sys.torsions.size(); ++n) {
    const auto& t = sys.torsions[n];
    check_close({double(t.i), double(t.j), double(t.k), double(t.l), double(t.periodicity), t.phase_rad, t.k_kj_per_mol},
                ref.torsions[n]);
  }
  REQUIRE(sys.exceptions.size() == ref.exceptions.size());
  for (std::size_t n = 0; n < sys.exceptions.size(); ++n) {
    const auto& e = sys.exceptions[n];
    check_close({double(e.i), double(e.j), e.charge_product_e2, e.sigma_nm, e.epsilon_kj_per_mol}, ref.exceptions[n]);
  }
}

// A copy of a PDB file, keeping the lines for which `keep` returns true (it may edit them).
std::string modified_pdb(const std::string& source, const std::string& name,
                         const std::function<bool(std::string&)>& keep) {
  std::ifstream in(source);
  std::string out, line;
  while (std::getline(in, line))
    if (keep(line)) out += line + "\n";
  return scratch_folder().write(name, out);
}

int line_of(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  return 0;
}

}  // namespace

// ------------------------------------------------------------------------------------------ reader

TEST_CASE("bundled force field names resolve, else relative to the base folder", "[forcefield]") {
  const auto dirs = default_forcefield_dirs();
  REQUIRE(!dirs.empty());
  CHECK(fs::exists(resolve_forcefield_path("amber14-all.xml", "", dirs)));
  CHECK(fs::exists(resolve_forcefield_path("amber14/tip3p.xml", "", dirs)));
  CHECK(fs::exists(resolve_forcefield_path("amber99sb.xml", "", dirs)));
  CHECK(fs::path(resolve_forcefield_path("tip3p.xml", "", dirs)).parent_path().filename() == "forcefields");
  CHECK(fs::equivalent(resolve_forcefield_path("ff_tiny.xml", kData, dirs), kData + "ff_tiny.xml"));
  CHECK(fs::equivalent(resolve_forcefield_path(kData + "ff_tiny.xml", "/nonexistent", dirs), kData + "ff_tiny.xml"));

  const std::string message =
      input_error_of([&] { resolve_forcefield_path("amber15-nothere.xml", "/some/base", dirs); });
  CHECK(message.find("amber15-nothere.xml") != std::string::npos);
  CHECK(message.find("/some/base") != std::string::npos);
  CHECK(message.find(dirs.front()) != std::string::npos);
}

TEST_CASE("reader: types, templates, includes, override, type/class/wildcard specs", "[forcefield]") {
  const ForceFieldData ff = load_forcefields({kData + "ff_tiny.xml"}, "");
  REQUIRE(ff.files.size() == 2);  // the include is read relative to the including file
  CHECK(fs::path(ff.files[1]).filename() == "ff_tiny_types.xml");
  REQUIRE(ff.atom_types.size() == 5);
  CHECK(ff.atom_types[3].name == "t-HO");
  CHECK(ff.atom_types[3].atom_class == "HX");
  CHECK(ff.atom_types[3].element == "H");  // "h" in the file
  CHECK(ff.atom_types[0].mass_amu == 12.01);

  REQUIRE(ff.templates.size() == 3);  // HPX, FRM (override 1 replaced the first FRM), CHX
  CHECK(ff.templates[0].name == "HPX");
  CHECK(ff.templates[1].name == "FRM");
  CHECK(ff.templates[2].name == "CHX");
  CHECK(ff.templates[1].override_level == 1);
  CHECK(ff.templates[1].atoms[0].parameters.at("charge") == 0.6);
  CHECK(ff.templates[0].bonds == std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}});
  CHECK(ff.templates[1].bonds == std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}});
  CHECK(ff.templates[2].external_bonds == std::vector<int>{0, 0});  // by name and by index

  CHECK(ff.bonds.size() == 4);  // the bond naming the unknown class UNKNOWN is skipped, as OpenMM does
  CHECK(ff.bonds[0].atoms[0].kind == FFSpecKind::Class);
  CHECK(ff.bonds[1].atoms[1].kind == FFSpecKind::Type);
  CHECK(ff.bonds[1].length_nm == 0.147);
  REQUIRE(ff.propers.size() == 2);
  CHECK(ff.propers[0].atoms[0].kind == FFSpecKind::Wildcard);
  CHECK(ff.propers[0].periodicity == std::vector<int>{2, 3});
  CHECK(ff.propers[0].phase_rad == std::vector<double>{0.0, 0.5});
  CHECK(ff.propers[0].k_kj_per_mol == std::vector<double>{1.0, 2.0});
  REQUIRE(ff.impropers.size() == 1);
  CHECK(ff.impropers[0].ordering == ImproperOrdering::Default);
  CHECK(ff.has_nonbonded_force);
  CHECK(ff.coulomb14scale == 0.5);
  CHECK(ff.lj14scale == 0.25);
  CHECK(ff.nonbonded_from_residue == std::vector<std::string>{"charge"});
  REQUIRE(ff.nonbonded_atoms.size() == 4);
  CHECK(ff.nonbonded_atoms[0].values.count("charge") == 0);
  CHECK(ff.nonbonded_atoms[1].values.at("sigma") == 0.3);
  CHECK(ff.standard.loaded);
  CHECK(ff.standard.residue_aliases.at("WAT") == "HOH");
  CHECK(ff.standard.atom_aliases.at("ALA").at("HN") == "H");
}

TEST_CASE("reader: the bundled amber14 and amber99sb files", "[forcefield]") {
  const ForceFieldData& ff = amber14();
  CHECK(ff.files.size() == 6);  // amber14-all.xml, its 4 includes, amber14/tip3p.xml
  CHECK(std::abs(ff.coulomb14scale - 1.0 / 1.2) < 1e-12);
  CHECK(ff.lj14scale == 0.5);
  REQUIRE(!ff.impropers.empty());
  CHECK(ff.impropers.front().ordering == ImproperOrdering::Amber);
  std::set<std::string> names;
  for (const auto& t : ff.templates) names.insert(t.name);
  for (const char* n : {"ALA", "NALA", "CALA", "HID", "HIE", "HIP", "ACE", "NME", "HOH", "NA", "CL", "DA5", "POPC"})
    CHECK(names.count(n) == 1);
  const ForceFieldData& old = amber99sb();
  CHECK(old.impropers.front().ordering == ImproperOrdering::Default);
  CHECK(old.atom_types.size() == 1961 + 2);
}

TEST_CASE("reader: errors name the file and line", "[forcefield]") {
  const auto& s = scratch_folder();
  const std::string types = "<ForceField><AtomTypes><Type name=\"a\" class=\"A\" element=\"C\" mass=\"12\"/>"
                            "</AtomTypes></ForceField>\n";
  s.write("types.xml", types);

  const std::string bad_xml = s.write("bad_xml.xml", "<ForceField>\n <AtomTypes>\n  <Type name=\"a\"\n</ForceField>\n");
  CHECK(input_error_of([&] { load_forcefields({bad_xml}, ""); }).rfind(bad_xml + ":4:", 0) == 0);

  const std::string no_mass =
      s.write("no_mass.xml", "<ForceField>\n<AtomTypes>\n<Type name=\"a\" class=\"A\" element=\"C\"/>\n</AtomTypes>\n</ForceField>\n");
  CHECK(input_error_of([&] { load_forcefields({no_mass}, ""); }) == no_mass + ":3: <Type> needs the attribute `mass`");

  const std::string bad_number = s.write(
      "bad_number.xml",
      "<ForceField>\n<AtomTypes>\n<Type name=\"a\" class=\"A\" element=\"C\" mass=\"12x\"/>\n</AtomTypes>\n</ForceField>\n");
  CHECK(input_error_of([&] { load_forcefields({bad_number}, ""); }) ==
        bad_number + ":3: <Type> attribute `mass` = \"12x\" is not a number");

  const std::string unknown_type = s.write(
      "unknown_type.xml",
      "<ForceField>\n<Include file=\"types.xml\"/>\n<Residues>\n<Residue name=\"R\">\n<Atom name=\"X\" type=\"b\" "
      "charge=\"0\"/>\n</Residue>\n</Residues>\n</ForceField>\n");
  CHECK(input_error_of([&] { load_forcefields({unknown_type}, ""); }) ==
        unknown_type + ":5: residue template 'R' atom 'X' uses atom type 'b', which no <AtomTypes> defines");

  const std::string duplicate = s.write("duplicate.xml", types);
  const std::string dup_message = input_error_of([&] { load_forcefields({s.file("types.xml"), duplicate}, ""); });
  CHECK(dup_message.rfind(duplicate + ":1: atom type 'a' is defined twice (first at ", 0) == 0);

  const std::string amoeba = s.write("amoeba.xml", "<ForceField>\n<AmoebaMultipoleForce/>\n</ForceField>\n");
  CHECK(input_error_of([&] { load_forcefields({amoeba}, ""); })
            .rfind(amoeba + ":2: unsupported force field section <AmoebaMultipoleForce>", 0) == 0);

  const std::string missing_include = s.write("missing_include.xml", "<ForceField>\n<Include file=\"nothere.xml\"/>\n</ForceField>\n");
  const std::string inc_message = input_error_of([&] { load_forcefields({missing_include}, ""); });
  CHECK(inc_message.rfind(missing_include + ":2: included file 'nothere.xml' not found", 0) == 0);

  const std::string bad_bond = s.write(
      "bad_bond.xml",
      "<ForceField>\n<Include file=\"types.xml\"/>\n<Residues>\n<Residue name=\"R\">\n<Atom name=\"X\" type=\"a\"/>\n"
      "<Bond atomName1=\"X\" atomName2=\"Y\"/>\n</Residue>\n</Residues>\n</ForceField>\n");
  CHECK(input_error_of([&] { load_forcefields({bad_bond}, ""); }) ==
        bad_bond + ":6: atom name 'Y' not found in residue template 'R' (atoms: X)");

  const std::string wrong_root = s.write("wrong_root.xml", "<Residues/>\n");
  CHECK(input_error_of([&] { load_forcefields({wrong_root}, ""); }) ==
        wrong_root + ":1: expected an OpenMM force field file with root element <ForceField>, found <Residues>");
}

// ------------------------------------------------------------------------------------------ System building

TEST_CASE("tiny system: graph matching independent of names, terms as OpenMM builds them", "[forcefield]") {
  const ForceFieldData ff = load_forcefields({kData + "ff_tiny.xml"}, "");
  Topology top = tiny_topology();
  create_topology_bonds(top, ff.standard);
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::NoCutoff;
  TemplateAssignment assigned;
  const System sys = build_system(top, ff, o, &assigned);
  CHECK(assigned.residue_template == std::vector<std::string>{"HPX", "FRM"});
  CHECK(top.bonds == std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}, {4, 6}, {5, 6}, {6, 7}});

  CHECK(sys.mass_amu == std::vector<double>{1.008, 16.0, 16.0, 1.008, 16.0, 1.008, 12.01, 1.008});
  CHECK(sys.charge_e == std::vector<double>{0.4, -0.4, -0.4, 0.4, -0.6, 0.0, 0.6, 0.0});  // FRM: the override
  CHECK(sys.sigma_nm == std::vector<double>{0.1, 0.3, 0.3, 0.1, 0.29, 0.1, 0.34, 0.1});

  REQUIRE(sys.bonds.size() == 6);
  CHECK(sys.bonds[1].length_nm == 0.147);  // O-O by type
  CHECK(sys.bonds[3].length_nm == 0.122);  // C=O by class
  CHECK(sys.bonds[4].k_kj_per_mol_nm2 == 300000.0);

  REQUIRE(sys.angles.size() == 5);  // sorted (i, j, k) with i < k
  CHECK((sys.angles[2].i == 4 && sys.angles[2].j == 6 && sys.angles[2].k == 5));
  CHECK(sys.angles[2].angle_rad == 2.1);
  CHECK(sys.angles[4].angle_rad == 2.0);

  // The specific proper (class HX-OH-OH-HX, one nonzero term) beats the wildcard one; the improper's atoms
  // follow OpenMM's default ordering: the two outer H atoms by index, then the centre C, then O.
  REQUIRE(sys.torsions.size() == 2);
  CHECK((sys.torsions[0].i == 0 && sys.torsions[0].l == 3 && sys.torsions[0].periodicity == 1));
  CHECK(sys.torsions[0].phase_rad == 3.14);
  CHECK(sys.torsions[0].k_kj_per_mol == 5.0);
  CHECK((sys.torsions[1].i == 5 && sys.torsions[1].j == 7 && sys.torsions[1].k == 6 && sys.torsions[1].l == 4));
  CHECK(sys.torsions[1].periodicity == 2);
  CHECK(sys.torsions[1].k_kj_per_mol == 10.0);

  // 1-2 and 1-3 pairs excluded (sigma 1, as OpenMM); the single 1-4 pair H1-H2 scaled.
  REQUIRE(sys.exceptions.size() == 12);
  int scaled = 0;
  for (const auto& e : sys.exceptions) {
    if (e.i == 0 && e.j == 3) {
      ++scaled;
      CHECK(e.charge_product_e2 == Catch::Approx(0.5 * 0.4 * 0.4));
      CHECK(e.sigma_nm == Catch::Approx(0.1));
      CHECK(e.epsilon_kj_per_mol == Catch::Approx(0.25 * 0.05));
    } else {
      CHECK((e.charge_product_e2 == 0.0 && e.epsilon_kj_per_mol == 0.0 && e.sigma_nm == 1.0));
    }
    CHECK(e.i < e.j);
  }
  CHECK(scaled == 1);
  CHECK(sys.constraints.empty());
}

TEST_CASE("tiny system: HAngles constraints and hydrogen mass repartitioning", "[forcefield]") {
  const ForceFieldData ff = load_forcefields({kData + "ff_tiny.xml"}, "");
  Topology top = tiny_topology();
  create_topology_bonds(top, ff.standard);
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::NoCutoff;
  o.constraints = ConstraintMode::HAngles;
  o.hydrogen_mass_amu = 2.0;
  const System sys = build_system(top, ff, o);
  CHECK(sys.mass_amu[0] == Catch::Approx(2.0));
  CHECK(sys.mass_amu[1] == Catch::Approx(16.0 - 0.992));
  CHECK(sys.mass_amu[6] == Catch::Approx(12.01 - 2 * 0.992));
  double total = 0.0;
  for (double m : sys.mass_amu) total += m;
  CHECK(total == Catch::Approx(4 * 16.0 + 4 * 1.008 + 12.01 - 16.0));
  // All 6 bonds, plus H-O-O (H with an O vertex) and H-C-H angles as distances; no bond or angle terms left
  // except the O-C-H angles (one H, carbon vertex).
  REQUIRE(sys.constraints.size() == 9);
  CHECK(sys.bonds.empty());
  CHECK(sys.angles.size() == 2);
  const double l = 0.096, m = 0.147;
  CHECK(sys.constraints[6].distance_nm == Catch::Approx(std::sqrt(l * l + m * m - 2 * l * m * std::cos(1.75))));
  CHECK(sys.constraints[8].distance_nm == Catch::Approx(std::sqrt(2 * 0.109 * 0.109 * (1 - std::cos(2.0)))));
}

TEST_CASE("errors: several templates with different parameters, no box for PME, element without template",
          "[forcefield]") {
  Topology top;
  top.source = "ion.pdb";
  top.chains.push_back({"B", {0}});
  top.residues.push_back({"FE", 0, 7, ' ', {0}, 3});
  top.atoms.push_back({"FE", "Fe", 0, 1, 3});
  top.positions_nm.push_back({0, 0, 0});
  create_topology_bonds(top, amber14().standard);
  CHECK(top.bonds.empty());
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::NoCutoff;
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        "ion.pdb:3: residue FE 7 (chain 'B') matches several force field templates with different parameters (FE FE2); "
        "mdsim cannot choose between them");

  top.atoms[0].element = "Na";
  top.residues[0].name = "NA";
  o.nonbonded.method = NonbondedMethod::PME;
  CHECK(input_error_of([&] { build_system(top, amber14(), o); })
            .rfind("ion.pdb: a periodic nonbonded method (PME or CutoffPeriodic) needs a periodic box", 0) == 0);
  o.nonbonded.method = NonbondedMethod::NoCutoff;
  TemplateAssignment assigned;
  const System sys = build_system(top, amber14(), o, &assigned);
  CHECK(assigned.residue_template == std::vector<std::string>{"NA"});
  CHECK(sys.charge_e == std::vector<double>{1.0});

  Topology broken = top;
  broken.residues[0].atoms.push_back(5);
  CHECK(input_error_of([&] { create_topology_bonds(broken, amber14().standard); }) ==
        "ion.pdb: inconsistent topology: residue 0 lists atom 5, which does not belong to it");
  CHECK(input_error_of([&] { build_system(broken, amber14(), o); }) ==
        "ion.pdb: inconsistent topology: residue 0 lists atom 5, which does not belong to it");

  top.atoms[0].element = "Se";
  CHECK(input_error_of([&] { build_system(top, amber14(), o); })
            .rfind("ion.pdb:3: atom 'FE' of residue NA 7 (chain 'B') is element Se, which no residue template of the "
                   "force field (",
                   0) == 0);
}

TEST_CASE("every term and parameter equals OpenMM's for alanine dipeptide (amber14 and amber99sb)", "[forcefield]") {
  compare_with_openmm(kSystems + "ala2_vacuum.pdb", amber14(), kData + "ff_ala2_vacuum_openmm_terms.txt");
  compare_with_openmm(kSystems + "ala2_vacuum.pdb", amber99sb(), kData + "ff_ala2_vacuum_amber99sb_openmm_terms.txt");
}

TEST_CASE("reference systems: counts equal OpenMM's", "[forcefield]") {
  struct Case {
    const char* pdb;
    const char* json;
    bool bench;
  };
  for (const Case c : {Case{"ala2_vacuum", "ala2_vacuum", false}, Case{"ala2_water", "ala2_water", false},
                       Case{"villin_water", "villin_water", false}, Case{"dhfr", "dhfr", false},
                       Case{"dhfr", "dhfr_bench", true}}) {
    SECTION(c.json) {
      const std::string json = mdsim_test::read_text(kReference + c.json + ".json");
      const ForceFieldData& ff = c.bench ? amber99sb() : amber14();
      Topology top = read_pdb(kSystems + c.pdb + ".pdb");
      create_topology_bonds(top, ff.standard);
      ForceFieldOptions o;  // the reference settings: no constraints, flexible water
      o.constraints = ConstraintMode::None;
      o.rigid_water = false;
      o.nonbonded.method = top.box ? NonbondedMethod::PME : NonbondedMethod::NoCutoff;
      const System sys = build_system(top, ff, o);

      CHECK(sys.num_particles() == json_count(json, "atoms"));
      CHECK(static_cast<double>(top.bonds.size()) == json_count(json, "topology_bonds"));
      CHECK(static_cast<double>(sys.bonds.size()) == json_count(json, "bonds"));
      CHECK(static_cast<double>(sys.angles.size()) == json_count(json, "angles"));
      CHECK(static_cast<double>(sys.torsions.size()) == json_count(json, "torsion_terms"));
      CHECK(static_cast<double>(sys.exceptions.size()) == json_count(json, "exceptions"));
      int nonzero = 0;
      for (const auto& e : sys.exceptions) nonzero += (e.charge_product_e2 != 0.0 || e.epsilon_kj_per_mol != 0.0);
      CHECK(nonzero == json_count(json, "exceptions_nonzero"));
      double charge = 0.0;
      for (double q : sys.charge_e) charge += q;
      CHECK(std::fabs(charge - json_count(json, "net_charge")) < 1e-6);
      int waters = 0;
      for (const auto& r : top.residues) waters += r.name == "HOH";
      CHECK(waters == json_count(json, "waters"));
      CHECK(sys.constraints.empty());
      CHECK(sys.rigid_waters.empty());

      o.constraints = ConstraintMode::HBonds;
      o.rigid_water = true;
      const System rigid = build_system(top, ff, o);
      CHECK(static_cast<double>(rigid.constraints.size()) == json_count(json, "constraints_hbonds_rigidwater"));
      CHECK(static_cast<int>(rigid.rigid_waters.size()) == waters);
      // Constrained bonds and the rigid water angle carry no term.
      int hbonds = 0;
      for (const auto& [a, b] : top.bonds)
        hbonds += top.atoms[static_cast<std::size_t>(a)].element == "H" || top.atoms[static_cast<std::size_t>(b)].element == "H";
      CHECK(rigid.bonds.size() == sys.bonds.size() - static_cast<std::size_t>(hbonds));
      CHECK(rigid.angles.size() == sys.angles.size() - static_cast<std::size_t>(waters));
      for (const auto& w : rigid.rigid_waters) {
        CHECK(w.oh_distance_nm == 0.09572);
        CHECK(w.hh_distance_nm == Catch::Approx(0.15139).epsilon(1e-4));
      }
    }
  }
}

TEST_CASE("HIS variants resolve by their hydrogens (HID, HIE, HIP)", "[forcefield]") {
  Topology top = read_pdb(kSystems + "dhfr.pdb");
  create_topology_bonds(top, amber14().standard);
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::PME;
  TemplateAssignment assigned;
  build_system(top, amber14(), o, &assigned);
  std::vector<int> his;
  for (std::size_t r = 0; r < top.residues.size(); ++r)
    if (top.residues[r].name == "HIS") {
      his.push_back(static_cast<int>(r));
      CHECK(assigned.residue_template[r] == "HID");  // what OpenMM 7.7 assigns to all five HIS of this file
    }
  REQUIRE(his.size() == 5);
  CHECK(assigned.residue_template.front() == "NMET");
  std::size_t last_protein = 0;
  for (std::size_t r = 0; r < top.residues.size(); ++r)
    if (top.residues[r].name != "HOH") last_protein = r;
  CHECK(assigned.residue_template[last_protein] == "CARG");

  // Move the ring hydrogen of the first HIS from ND1 to NE2 (only its name changes: bonds come from names):
  // HIE. Then add a second ring hydrogen on ND1: HIP. The topology's bonds are made again after each change.
  auto& res = top.residues[static_cast<std::size_t>(his[0])];
  for (int a : res.atoms)
    if (top.atoms[static_cast<std::size_t>(a)].name == "HD1") top.atoms[static_cast<std::size_t>(a)].name = "HE2";
  create_topology_bonds(top, amber14().standard);
  build_system(top, amber14(), o, &assigned);
  CHECK(assigned.residue_template[static_cast<std::size_t>(his[0])] == "HIE");
  CHECK(assigned.residue_template[static_cast<std::size_t>(his[1])] == "HID");

  TopologyAtom extra = top.atoms[static_cast<std::size_t>(res.atoms.front())];
  extra.name = "HD1";
  extra.element = "H";
  res.atoms.push_back(top.num_atoms());
  top.atoms.push_back(extra);
  top.positions_nm.push_back(top.positions_nm[static_cast<std::size_t>(res.atoms.front())]);
  create_topology_bonds(top, amber14().standard);
  const System sys = build_system(top, amber14(), o, &assigned);
  CHECK(assigned.residue_template[static_cast<std::size_t>(his[0])] == "HIP");
  double charge = 0.0;
  for (double q : sys.charge_e) charge += q;
  CHECK(charge == Catch::Approx(-10.0).margin(1e-6));  // one more positive residue than the file's -11
}

TEST_CASE("a residue that matches no template: one line naming it, its first atom's line and the closest template",
          "[forcefield]") {
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::PME;

  // ALA 2 of chain A without its HA atom.
  const std::string src = kSystems + "ala2_water.pdb";
  const std::string no_ha = modified_pdb(src, "ala2_no_ha.pdb", [](std::string& line) {
    return !(line.size() > 20 && line.substr(12, 4) == " HA " && line.substr(17, 3) == "ALA");
  });
  Topology top = read_pdb(no_ha);
  create_topology_bonds(top, amber14().standard);
  const int n_line = line_of(no_ha, " N   ALA A   2");
  REQUIRE(n_line > 0);
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        no_ha + ":" + std::to_string(n_line) +
            ": residue ALA 2 (chain 'A') lacks 1 hydrogen (HA) of template ALA: run `mdsim prepare` to add them");

  // A water with an atom renamed and one missing.
  const std::string odd_water = modified_pdb(src, "ala2_odd_water.pdb", [](std::string& line) {
    if (line.find("HOH B   1") == std::string::npos || line.rfind("HETATM", 0) != 0) return true;
    if (line.substr(12, 4) == " H2 ") return false;
    if (line.substr(12, 4) == " H1 ") line.replace(12, 4, " HX ");
    return true;
  });
  top = read_pdb(odd_water);
  create_topology_bonds(top, amber14().standard);
  const std::string message = input_error_of([&] { build_system(top, amber14(), o); });
  CHECK(message.find(": no force field template matches residue HOH ") != std::string::npos);
  CHECK(message.find("closest template HOH: missing atoms [H1 H2], extra atoms [HX]; rename or remove the extra atoms") !=
        std::string::npos);

  // The N-terminal residue of DHFR without its extra terminal hydrogens: names fit MET, bonds do not.
  const std::string dhfr = kSystems + "dhfr.pdb";
  const std::string no_terminus = modified_pdb(dhfr, "dhfr_no_terminus.pdb", [](std::string& line) {
    return !(line.rfind("ATOM", 0) == 0 && line.substr(17, 3) == "MET" && line.substr(22, 4) == "   1" &&
             (line.substr(12, 4) == " H2 " || line.substr(12, 4) == " H3 "));
  });
  top = read_pdb(no_terminus);
  create_topology_bonds(top, amber14().standard);
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        no_terminus + ":" + std::to_string(line_of(no_terminus, "  N   MET     1")) +
            ": no force field template matches residue MET 1 (chain ' '): its atoms match template MET but its bonds "
            "differ (bonds to other residues: template at [N C], residue at [C]); a chain end may need its terminal "
            "atoms (e.g. OXT, H2/H3) or a cap");
}

TEST_CASE("a residue that matches no template says how to fix it: hydrogens, an unknown name, a heavy atom, an element",
          "[forcefield]") {
  ForceFieldOptions o;
  o.nonbonded.method = NonbondedMethod::PME;
  const std::string dhfr = kSystems + "dhfr.pdb";
  // The first ARG of DHFR as it comes from the Protein Data Bank: heavy atoms only. Its closest template is ARG (not
  // calcium, as the name-blind search once chose).
  std::string arg_number;
  {
    std::ifstream in(dhfr);
    for (std::string line; arg_number.empty() && std::getline(in, line);)
      if (line.rfind("ATOM", 0) == 0 && line.substr(17, 3) == "ARG") arg_number = line.substr(22, 4);
  }
  REQUIRE(!arg_number.empty());
  const std::string heavy_arg = modified_pdb(dhfr, "dhfr_heavy_arg.pdb", [&](std::string& line) {
    return !(line.rfind("ATOM", 0) == 0 && line.substr(17, 3) == "ARG" && line.substr(22, 4) == arg_number &&
             line.substr(76, 2) == " H");
  });
  Topology top = read_pdb(heavy_arg);
  create_topology_bonds(top, amber14().standard);
  const int arg_line = line_of(heavy_arg, " N   ARG  " + arg_number);
  REQUIRE(arg_line > 0);
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        heavy_arg + ":" + std::to_string(arg_line) + ": residue ARG " + std::to_string(std::stoi(arg_number)) +
            " (chain ' ') lacks 13 hydrogens (H, HA, HB2, ...) of template ARG: run `mdsim prepare` to add them");

  // An unknown ligand: no template has its name.
  const std::string src = kSystems + "ala2_water.pdb";
  const std::string ligand = modified_pdb(src, "ala2_ligand.pdb", [](std::string& line) {
    if (line.find("HOH B   1") != std::string::npos && line.rfind("HETATM", 0) == 0) {
      line.replace(17, 3, "LIG");
      line.replace(22, 4, " 401");
      if (line.substr(12, 4) == " O  ") line.replace(12, 4, " O1 ");
    }
    return true;
  });
  top = read_pdb(ligand);
  create_topology_bonds(top, amber14().standard);
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        ligand + ":" + std::to_string(line_of(ligand, "LIG B 401")) +
            ": no template for residue LIG 401 (chain 'B'): supply its force field XML (system.forcefield; for mdsim prepare, --forcefield)");

  // A misspelt residue name: its atoms are those of a template.
  const std::string misspelt = modified_pdb(src, "ala2_alx.pdb", [](std::string& line) {
    if (line.size() > 20 && line.substr(17, 3) == "ALA") line.replace(17, 3, "ALX");
    return true;
  });
  top = read_pdb(misspelt);
  create_topology_bonds(top, amber14().standard);
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        misspelt + ":" + std::to_string(line_of(misspelt, " N   ALX A   2")) +
            ": no template for residue ALX 2 (chain 'A'): supply its force field XML (system.forcefield; for mdsim prepare, --forcefield); its atoms "
            "are those of template ALA: a misspelt residue name?");

  // A residue missing a heavy atom: the atoms against its own template.
  const std::string no_cb = modified_pdb(src, "ala2_no_cb.pdb", [](std::string& line) {
    return !(line.size() > 20 && line.substr(12, 4) == " CB " && line.substr(17, 3) == "ALA");
  });
  top = read_pdb(no_cb);
  create_topology_bonds(top, amber14().standard);
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        no_cb + ":" + std::to_string(line_of(no_cb, " N   ALA A   2")) +
            ": no force field template matches residue ALA 2 (chain 'A'): closest template ALA: missing atoms [CB], "
            "extra atoms []; missing heavy atoms must be rebuilt (e.g. with PDBFixer) before `mdsim prepare` adds "
            "hydrogens");

  // A wrong element: named like the template, located at the atom.
  const std::string carbon_n = modified_pdb(src, "ala2_carbon_n.pdb", [](std::string& line) {
    if (line.size() > 77 && line.substr(12, 4) == " N  " && line.substr(17, 3) == "ALA") line.replace(76, 2, " C");
    return true;
  });
  top = read_pdb(carbon_n);
  create_topology_bonds(top, amber14().standard);
  CHECK(input_error_of([&] { build_system(top, amber14(), o); }) ==
        carbon_n + ":" + std::to_string(line_of(carbon_n, " N   ALA A   2")) +
            ": no force field template matches residue ALA 2 (chain 'A'): atom 'N' is element C in the file but N in "
            "template ALA; fix its element (columns 77-78 of a PDB file, type_symbol of an mmCIF)");
}
