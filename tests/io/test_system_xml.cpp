// io/system_xml: serialized OpenMM Systems and States (tests/data/make_system_xml_reference.py, OpenMM 7.7). The
// System read from XML equals the one the template path builds from the same PDB + amber14 (counts, every parameter
// to 1e-12, term order); on the CPU platform its energies by term and forces equal OpenMM's Reference platform's (1e-6
// relative, 1e-6 kJ/mol below 1 kJ/mol); every refusal names the file, the line and the force.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/evaluator.hpp"
#include "engine/model.hpp"
#include "io/config.hpp"
#include "io/gro_reader.hpp"
#include "io/system_xml.hpp"
#include "model/system_analysis.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/scratch.hpp"
#include "support/system_xml_cases.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

using namespace mdsim;
using mdsim_test::SystemXmlCase;
using mdsim_test::xml_case;

namespace {

Model model_from(const std::string& text, const std::string& name) {
  return build_model(parse_config(text, name + ".yaml", "/"));
}

std::string vacuum_text() {
  std::string text;
  gzFile f = gzopen((mdsim_test::system_xml_data() + "system_xml_ala2_vacuum.system.xml").c_str(), "rb");
  REQUIRE(f != nullptr);
  char buffer[4096];
  for (int n; (n = gzread(f, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  gzclose(f);
  return text;
}

// The 1-based line of the first occurrence of `needle` in `text`.
int line_of(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

bool close(double a, double b, double relative = 1e-12) {
  return std::fabs(a - b) <= relative * std::max({std::fabs(a), std::fabs(b), 1e-300}) || a == b;
}

#define CHECK_CLOSE(a, b) CHECK(close((a), (b)))

bool same_positions(const std::vector<Vec3d>& a, const std::vector<Vec3d>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].x != b[i].x || a[i].y != b[i].y || a[i].z != b[i].z) return false;
  return true;
}

void check_equal_systems(const System& x, const System& t) {
  REQUIRE(x.num_particles() == t.num_particles());
  for (int i = 0; i < x.num_particles(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    INFO("particle " << i);
    CHECK_CLOSE(x.mass_amu[k], t.mass_amu[k]);
    CHECK_CLOSE(x.charge_e[k], t.charge_e[k]);
    CHECK_CLOSE(x.sigma_nm[k], t.sigma_nm[k]);
    CHECK_CLOSE(x.epsilon_kj_per_mol[k], t.epsilon_kj_per_mol[k]);
  }
  REQUIRE(x.bonds.size() == t.bonds.size());
  for (std::size_t k = 0; k < x.bonds.size(); ++k) {
    INFO("bond " << k);
    CHECK(x.bonds[k].atoms() == t.bonds[k].atoms());
    CHECK_CLOSE(x.bonds[k].length_nm, t.bonds[k].length_nm);
    CHECK_CLOSE(x.bonds[k].k_kj_per_mol_nm2, t.bonds[k].k_kj_per_mol_nm2);
  }
  REQUIRE(x.angles.size() == t.angles.size());
  for (std::size_t k = 0; k < x.angles.size(); ++k) {
    INFO("angle " << k);
    CHECK(x.angles[k].atoms() == t.angles[k].atoms());
    CHECK_CLOSE(x.angles[k].angle_rad, t.angles[k].angle_rad);
    CHECK_CLOSE(x.angles[k].k_kj_per_mol_rad2, t.angles[k].k_kj_per_mol_rad2);
  }
  REQUIRE(x.torsions.size() == t.torsions.size());
  for (std::size_t k = 0; k < x.torsions.size(); ++k) {
    INFO("torsion " << k);
    CHECK(x.torsions[k].atoms() == t.torsions[k].atoms());
    CHECK(x.torsions[k].periodicity == t.torsions[k].periodicity);
    CHECK_CLOSE(x.torsions[k].phase_rad, t.torsions[k].phase_rad);
    CHECK_CLOSE(x.torsions[k].k_kj_per_mol, t.torsions[k].k_kj_per_mol);
  }
  REQUIRE(x.exceptions.size() == t.exceptions.size());
  for (std::size_t k = 0; k < x.exceptions.size(); ++k) {
    INFO("exception " << k);
    CHECK(x.exceptions[k].i == t.exceptions[k].i);
    CHECK(x.exceptions[k].j == t.exceptions[k].j);
    CHECK_CLOSE(x.exceptions[k].charge_product_e2, t.exceptions[k].charge_product_e2);
    CHECK_CLOSE(x.exceptions[k].sigma_nm, t.exceptions[k].sigma_nm);
    CHECK_CLOSE(x.exceptions[k].epsilon_kj_per_mol, t.exceptions[k].epsilon_kj_per_mol);
  }
  REQUIRE(x.constraints.size() == t.constraints.size());
  for (std::size_t k = 0; k < x.constraints.size(); ++k) {
    INFO("constraint " << k);
    CHECK(x.constraints[k].i == t.constraints[k].i);
    CHECK(x.constraints[k].j == t.constraints[k].j);
    CHECK_CLOSE(x.constraints[k].distance_nm, t.constraints[k].distance_nm);
  }
  REQUIRE(x.rigid_waters.size() == t.rigid_waters.size());
  for (std::size_t k = 0; k < x.rigid_waters.size(); ++k) {
    INFO("rigid water " << k);
    CHECK(x.rigid_waters[k].oxygen == t.rigid_waters[k].oxygen);
    CHECK(x.rigid_waters[k].hydrogen1 == t.rigid_waters[k].hydrogen1);
    CHECK(x.rigid_waters[k].hydrogen2 == t.rigid_waters[k].hydrogen2);
    CHECK_CLOSE(x.rigid_waters[k].oh_distance_nm, t.rigid_waters[k].oh_distance_nm);
    CHECK_CLOSE(x.rigid_waters[k].hh_distance_nm, t.rigid_waters[k].hh_distance_nm);
  }
  const NonbondedSettings &a = x.nonbonded, &b = t.nonbonded;
  CHECK(a.method == b.method);
  CHECK_CLOSE(a.cutoff_nm, b.cutoff_nm);
  CHECK_CLOSE(a.ewald_tolerance, b.ewald_tolerance);
  CHECK(a.switch_distance_nm.has_value() == b.switch_distance_nm.has_value());
  if (a.switch_distance_nm && b.switch_distance_nm) CHECK_CLOSE(*a.switch_distance_nm, *b.switch_distance_nm);
  CHECK(a.dispersion_correction == b.dispersion_correction);
  CHECK_CLOSE(a.reaction_field_dielectric, b.reaction_field_dielectric);
  CHECK(a.pme_grid == b.pme_grid);
  REQUIRE(x.box.has_value() == t.box.has_value());
  if (x.box) {
    for (const auto& [u, v] : {std::pair{x.box->a, t.box->a}, {x.box->b, t.box->b}, {x.box->c, t.box->c}}) {
      CHECK_CLOSE(u.x, v.x);
      CHECK_CLOSE(u.y, v.y);
      CHECK_CLOSE(u.z, v.z);
    }
  }
}

// |a - b| within 1e-6 of |b|, or of 1 kJ/mol for a term below it.
bool energy_agrees(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

}  // namespace

TEST_CASE("a serialized System equals the template path's System for the same PDB and amber14") {
  for (const SystemXmlCase& c : mdsim_test::system_xml_cases()) {
    INFO(c.name);
    const Model xml = model_from(mdsim_test::system_xml_config(c), c.name);
    const Model tmpl = model_from(mdsim_test::template_config(c), c.name + "_template");
    check_equal_systems(xml.system, tmpl.system);
    const mdsim_test::Json& counts = mdsim_test::system_xml_reference(c.name)["counts"];
    CHECK(xml.system.num_particles() == static_cast<int>(counts["particles"].num()));
    CHECK(xml.system.bonds.size() == static_cast<std::size_t>(counts["bonds"].num()));
    CHECK(xml.system.angles.size() == static_cast<std::size_t>(counts["angles"].num()));
    CHECK(xml.system.torsions.size() == static_cast<std::size_t>(counts["torsions"].num()));
    CHECK(xml.system.exceptions.size() == static_cast<std::size_t>(counts["exceptions"].num()));
    CHECK(xml.system.constraints.size() == static_cast<std::size_t>(counts["constraints"].num()));
    CHECK(xml.system.rigid_waters.size() == (c.pdb == "ala2_water" ? 749u : 0u));
    // The structure keeps its names; its bonds are the System's (its chemical bonds, the water H-H aside).
    CHECK(xml.topology.atoms[1].name == tmpl.topology.atoms[1].name);
    CHECK(xml.topology.bonds.size() == tmpl.topology.bonds.size());
    CHECK(same_positions(xml.positions_nm, tmpl.positions_nm));
  }
}

TEST_CASE("energies by term and forces of serialized Systems equal OpenMM 7.7's on the CPU platform") {
  for (const SystemXmlCase& c : mdsim_test::system_xml_cases()) {
    INFO(c.name);
    const Model model = model_from(mdsim_test::system_xml_config(c), c.name);
    auto evaluator = make_evaluator(model.system, PlatformChoice{PlatformKind::Cpu, 0, ""}, PlatformConfig{});
    std::vector<Vec3d> forces;
    const EnergyTerms e = evaluator->compute(model.positions_nm, &forces);
    const mdsim_test::Json& ref = mdsim_test::system_xml_reference(c.name)["energies_kj_per_mol"];
    const std::pair<const char*, double> terms[] = {{"bond", e.bond},
                                                    {"angle", e.angle},
                                                    {"torsion", e.torsion},
                                                    {"nonbonded_direct", e.nonbonded_direct},
                                                    {"nonbonded_reciprocal", e.nonbonded_reciprocal},
                                                    {"dispersion_correction", e.dispersion_correction},
                                                    {"total", e.total}};
    for (const auto& [term, value] : terms) {
      INFO(term << ": mdsim " << value << ", OpenMM " << ref[term].num());
      std::printf("%-13s %-21s mdsim %.10f OpenMM %.10f difference %.3g\n", c.name.c_str(), term, value,
                  ref[term].num(), value - ref[term].num());
      CHECK(energy_agrees(value, ref[term].num()));
    }
    const std::vector<Vec3d> want = mdsim_test::read_h5_vec3(mdsim_test::system_xml_data() + "system_xml_reference.h5",
                                                             c.name + "/forces_kj_per_mol_nm");
    REQUIRE(want.size() == forces.size());
    double largest = 0.0, worst = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      largest = std::max(largest, norm(want[i]));
      worst = std::max(worst, norm(forces[i] - want[i]));
    }
    const double rms = mdsim_test::relative_rms_difference(forces, want);
    std::printf("%-13s forces: relative RMS difference %.3g, largest |dF| %.3g kJ/mol/nm (largest |F| %.1f)\n",
                c.name.c_str(), rms, worst, largest);
    CHECK(rms <= 1e-6);
    CHECK(worst <= 1e-6 * largest);
  }
}

TEST_CASE("a serialized State gives positions, velocities and the box") {
  const StateXml s = read_state_xml(mdsim_test::system_xml_data() + "system_xml_ala2_vacuum.state.xml");
  REQUIRE(s.positions_nm.size() == 22);
  CHECK(s.velocities_nm_per_ps.size() == 22);
  REQUIRE(s.box.has_value());
  CHECK(s.box->a.x == 2.0);
  const Model pdb = model_from(mdsim_test::system_xml_config(xml_case("ala2_vacuum")), "vacuum");
  CHECK(same_positions(s.positions_nm, pdb.positions_nm));

  // As coordinates: a topology made from the System (one residue, elements from masses), no box (NoCutoff).
  const Model state =
      model_from(mdsim_test::system_xml_config(xml_case("ala2_vacuum"), "",
                                               mdsim_test::system_xml_data() + "system_xml_ala2_vacuum.state.xml"),
                 "vacuum_state");
  CHECK(same_positions(state.positions_nm, pdb.positions_nm));
  CHECK_FALSE(state.system.box.has_value());
  REQUIRE(state.topology.residues.size() == 1);
  CHECK(state.topology.residues[0].name == "MOL");
  std::string elements;
  for (const TopologyAtom& a : state.topology.atoms) elements += a.element + " ";
  CHECK(elements == "H C H H C O N H C H C H H H C O N H C H H H ");
  CHECK(state.topology.bonds.size() == 21);
}

TEST_CASE("a State-made topology names waters and ions and undoes hydrogen mass repartitioning") {
  System s;
  s.mass_amu = {15.99943, 1.007947, 1.007947, 22.99, 12.011 - 3 * (3.024 - 1.007947), 3.024, 3.024, 3.024, 35.45};
  s.charge_e.assign(9, 0.0);
  s.sigma_nm.assign(9, 1.0);
  s.epsilon_kj_per_mol.assign(9, 0.0);
  s.constraints = {{0, 1, 0.09572}, {0, 2, 0.09572}, {1, 2, 0.15139}};
  s.bonds = {{4, 5, 0.109, 1.0}, {4, 6, 0.109, 1.0}, {4, 7, 0.109, 1.0}, {4, 8, 0.18, 1.0}};
  s.rigid_waters = find_rigid_waters(s);
  REQUIRE(s.rigid_waters.size() == 1);
  CHECK(s.rigid_waters[0].oxygen == 0);
  const Topology t = topology_from_system(s, std::vector<Vec3d>(9, Vec3d(0, 0, 0)), "state.xml");
  REQUIRE(t.residues.size() == 3);
  CHECK(t.residues[0].name == "HOH");
  CHECK(t.atoms[0].name == "O");
  CHECK(t.atoms[2].name == "H2");
  CHECK(t.residues[1].name == "NA");
  CHECK(t.residues[2].name == "MOL");
  CHECK(t.atoms[4].element == "C");
  CHECK(t.atoms[5].element == "H");
  CHECK(t.atoms[8].element == "Cl");
  CHECK(t.bonds.size() == 6);  // O-H twice (not H-H), C-H three times, C-Cl
  const ConstraintSummary summary = summarize_constraints(s);
  CHECK(summary.rigid_waters == 1);
  CHECK(summary.flexible_waters == 0);
  CHECK(system_constraint_mode(summary) == ConstraintMode::None);
  CHECK(summary.unconstrained_h_bonds);
}

TEST_CASE("what a serialized System cannot hold is refused at its line, naming the force") {
  const std::string text = vacuum_text();
  const std::string forces_end = "\t</Forces>";
  const std::string custom =
      "\t\t<Force energy=\"k*theta\" forceGroup=\"0\" name=\"CustomTorsionForce\" type=\"CustomTorsionForce\" "
      "usesPeriodic=\"0\" version=\"3\">\n\t\t\t<Torsions/>\n\t\t</Force>\n";
  const std::string with_custom = replaced(text, forces_end, custom + forces_end);
  CHECK(mdsim_test::input_error_of([&] { parse_system_xml(with_custom, "sys.xml"); }) ==
        "sys.xml:" + std::to_string(line_of(with_custom, "CustomTorsionForce")) +
            ": force 5 (CustomTorsionForce) is not supported yet: mdsim does not evaluate custom expressions (energy "
            "\"k*theta\"); mdsim reads HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce, RBTorsionForce, "
            "NonbondedForce, CMMotionRemover and MonteCarloBarostat");

  // ForceField's 1-4 LJ CustomBondForce goes into the exceptions of the same pairs, whose own LJ must be off
  // (tests/python/test_python_openmm.py runs a charmm36 System that has one against OpenMM's energy).
  const auto lj_pairs = [&](const std::string& p1, const std::string& p2) {
    return replaced(text, forces_end,
                    "\t\t<Force energy=\"4*epsilon*((sigma/r)^12-(sigma/r)^6)\" forceGroup=\"0\" type=\"CustomBondForce\" "
                    "usesPeriodic=\"0\" version=\"3\"><PerBondParameters><Parameter name=\"sigma\"/><Parameter "
                    "name=\"epsilon\"/></PerBondParameters><GlobalParameters/><EnergyParameterDerivatives/><Bonds>\n"
                    "<Bond p1=\"" + p1 + "\" p2=\"" + p2 + "\" param1=\"0.3\" param2=\"0.2\"/></Bonds></Force>\n" + forces_end);
  };
  const SystemXml paired = parse_system_xml(lj_pairs("0", "4"), "sys.xml");  // an exception with epsilon 0
  const auto pair04 = std::find_if(paired.system.exceptions.begin(), paired.system.exceptions.end(),
                                   [](const NonbondedException& e) { return e.i == 0 && e.j == 4; });
  REQUIRE(pair04 != paired.system.exceptions.end());
  CHECK((pair04->sigma_nm == 0.3 && pair04->epsilon_kj_per_mol == 0.2 && pair04->charge_product_e2 == 0.0));
  const std::string twice = lj_pairs("0", "5");
  CHECK(mdsim_test::input_error_of([&] { parse_system_xml(twice, "sys.xml"); }).find(
            "sys.xml:" + std::to_string(line_of(twice, "<Bond p1")) +
            ": force 5 (CustomBondForce, 1-4 LJ), pair 0-5: the NonbondedForce's exception has its own LJ") == 0);
  const std::string unpaired = lj_pairs("0", "21");
  CHECK(mdsim_test::input_error_of([&] { parse_system_xml(unpaired, "sys.xml"); }).find(
            "pair 0-21: the NonbondedForce has no exception for this pair") != std::string::npos);

  // An RBTorsionForce is read (OPLS, GROMACS type 3); its coefficients C0..C5 in kJ/mol.
  const std::string rb =
      replaced(text, forces_end,
               "\t\t<Force forceGroup=\"0\" type=\"RBTorsionForce\" usesPeriodic=\"0\" version=\"2\"><Torsions>"
               "<Torsion p1=\"0\" p2=\"1\" p3=\"4\" p4=\"5\" c0=\"1.5\" c1=\"-2\" c2=\"0.25\" c3=\"3\" c4=\"0\" "
               "c5=\"-0.5\"/></Torsions></Force>\n" +
                   forces_end);
  const SystemXml with_rb = parse_system_xml(rb, "sys.xml");
  REQUIRE(with_rb.system.rb_torsions.size() == 1);
  const RbTorsionTerm& t = with_rb.system.rb_torsions.front();
  CHECK((t.atoms() == std::array<int, 4>{0, 1, 4, 5}));
  CHECK((t.c_kj_per_mol == std::array<double, 6>{1.5, -2.0, 0.25, 3.0, 0.0, -0.5}));
  const std::string rb_periodic = replaced(rb, "type=\"RBTorsionForce\" usesPeriodic=\"0\"",
                                           "type=\"RBTorsionForce\" usesPeriodic=\"1\"");
  CHECK(mdsim_test::input_error_of([&] { parse_system_xml(rb_periodic, "sys.xml"); })
            .find("periodic boundary conditions for bonded terms") != std::string::npos);

  // A virtual site of a type mdsim does not hold: particle 21 (the last) becomes a SymmetrySite.
  const std::string last_particle = "\t\t<Particle mass=\"1.008\"/>\n\t</Particles>";
  const std::string site = replaced(text, last_particle,
                                    "\t\t<Particle mass=\"0\">\n\t\t\t<SymmetrySite p=\"18\"/>\n"
                                    "\t\t</Particle>\n\t</Particles>");
  CHECK(mdsim_test::input_error_of([&] { parse_system_xml(site, "sys.xml"); })
            .find("sys.xml:" + std::to_string(line_of(site, "<SymmetrySite")) +
                  ": particle 21 is a virtual site of type SymmetrySite, which mdsim does not support") == 0);

  // Damaged XML: the file's line and column.
  const std::string damaged = replaced(text, "<Particle mass=\"14.01\"/>", "<Particle mass=\"14.01\"");
  CHECK(mdsim_test::input_error_of([&] { parse_system_xml(damaged, "sys.xml"); }) ==
        "sys.xml:" + std::to_string(line_of(damaged, "<Particle mass=\"14.01\"") + 1) +
            ":3: malformed XML: not well-formed (invalid token)");
  const std::string cut = text.substr(0, text.find("<Exceptions>"));
  CHECK(mdsim_test::input_error_of([&] { parse_system_xml(cut, "sys.xml"); }).find("malformed XML: no element found") !=
        std::string::npos);
}

TEST_CASE("unsupported NonbondedForce settings, bad indices and the wrong root are refused") {
  const std::string text = vacuum_text();
  const int nonbonded = line_of(text, "name=\"NonbondedForce\"");
  const std::string at = "sys.xml:" + std::to_string(nonbonded) + ": force 2 (NonbondedForce): ";
  auto error = [](const std::string& t) { return mdsim_test::input_error_of([&] { parse_system_xml(t, "sys.xml"); }); };
  CHECK(error(replaced(text, "method=\"0\"", "method=\"3\"")) ==
        at + "Ewald summation (method 3) is not supported: create the System with nonbondedMethod=PME, the same "
             "physics within ewaldErrorTolerance");
  CHECK(error(replaced(text, "method=\"0\"", "method=\"5\"")) ==
        at + "LJPME (method 5: Lennard-Jones by particle-mesh Ewald) is not supported yet");
  CHECK(error(replaced(replaced(text, "method=\"0\"", "method=\"4\""), "alpha=\"0\"", "alpha=\"3\"")) ==
        at + "the PME parameters are set explicitly (alpha 3 /nm, grid 0 x 0 x 0: NonbondedForce.setPMEParameters), "
             "which mdsim does not support: it chooses them from the cutoff and ewaldErrorTolerance as OpenMM does "
             "when they are 0; create the System without setPMEParameters");
  CHECK(error(replaced(text, "exceptionsUsePeriodic=\"0\"", "exceptionsUsePeriodic=\"1\"")).find(at) == 0);
  CHECK(error(replaced(text, "<GlobalParameters/>",
                       "<GlobalParameters><Parameter default=\"1\" name=\"lambda\"/>"
                       "</GlobalParameters>")) ==
        "sys.xml:" + std::to_string(nonbonded + 1) +
            ": force 2 (NonbondedForce): global parameter 'lambda' is not supported: parameter offsets (alchemical "
            "changes) are not supported yet");
  const std::string bad_index = replaced(text, "p1=\"4\" p2=\"1\"", "p1=\"4\" p2=\"22\"");
  CHECK(error(bad_index) == "sys.xml:" + std::to_string(line_of(bad_index, "p2=\"22\"")) +
                                ": force 0 (HarmonicBondForce): <Bond> attribute `p2` = 22 is not a particle index: "
                                "the System has 22 particles (0 to 21)");
  CHECK(error("<State/>") ==
        "sys.xml:1: expected a serialized OpenMM System (root element <System>, from "
        "XmlSerializer.serialize(system)), found <State>; this is a serialized State: name it as "
        "system.coordinates");
  CHECK(error("") == "sys.xml:1:1: malformed XML: no element found");
}

TEST_CASE("a count mismatch between coordinates and System names both files and counts") {
  const SystemXmlCase& vacuum = xml_case("ala2_vacuum");
  const std::string water_pdb = std::string(MDSIM_TEST_DATA_DIR) + "/systems/ala2_water.pdb";
  const std::string text = mdsim_test::system_xml_config(vacuum, "", water_pdb);
  CHECK(mdsim_test::input_error_of([&] { model_from(text, "mismatch"); }) ==
        "mismatch.yaml:3:3: " + water_pdb + " has 2269 atoms, but the System in " + mdsim_test::system_xml_data() +
            vacuum.file +
            " has 22 particles: the coordinates and the System must describe the same atoms in the "
            "same order");
}

TEST_CASE("what a run should know about a serialized System is said in notes") {
  std::string text = vacuum_text();
  text = replaced(text, "<Particle mass=\"14.01\"/>", "<Particle mass=\"0\"/>");  // a fixed particle, as in OpenMM
  text = replaced(text, "frequency=\"1\" name=\"CMMotionRemover\"", "frequency=\"10\" name=\"CMMotionRemover\"");
  text = replaced(text, "forceGroup=\"0\" name=\"HarmonicAngleForce\"", "forceGroup=\"3\" name=\"HarmonicAngleForce\"");
  const SystemXml sx = parse_system_xml(text, "sys.xml");
  CHECK(sx.system.mass_amu[6] == 0.0);
  CHECK(sx.cm_motion_remover);
  CHECK(sx.cm_motion_interval == 10);  // honoured: the run removes the motion every 10 steps, as OpenMM
  REQUIRE(sx.notes.size() == 2);
  CHECK(sx.notes[0] == "force groups are ignored: mdsim reports the energy by term (bond, angle, torsion, nonbonded)");
  CHECK(sx.notes[1] == "1 particle of mass 0 stays fixed, as in OpenMM");

  // A barostat of a periodic System; one with frequency 0 is off.
  const SystemXml water = read_system_xml(mdsim_test::system_xml_data() + "system_xml_water_cutoff.system.xml.gz");
  REQUIRE(water.barostat.has_value());
  CHECK(water.barostat->pressure_bar == 1.0);
  CHECK(water.barostat->temperature_k == 300.0);
  CHECK(water.barostat->frequency == 25);
  CHECK(water.barostat->index == 5);
  REQUIRE(water.system.box.has_value());
  CHECK(water.system.box->a.x == 3.2853000000000003);
}

TEST_CASE("an RBTorsionForce serialized by OpenMM gives OpenMM's energy (OPLS-AA dipeptide from GROMACS)") {
  const std::string file = std::string(MDSIM_SOURCE_DIR) + "/tests/data/system_xml_oplsaa_rb.system.xml";
  const SystemXml xml = read_system_xml(file);
  REQUIRE(xml.system.rb_torsions.size() == 24);
  const CoordinateFile gro = read_gro(std::string(MDSIM_SOURCE_DIR) + "/tests/data/gromacs/oplsaa.gro");
  auto evaluator = make_evaluator(xml.system, PlatformChoice{PlatformKind::Cpu, 0, ""}, PlatformConfig{});
  const EnergyTerms e = evaluator->compute(gro.positions_nm, nullptr);
  // OpenMM's energy, written by tests/data/make_system_xml_rb.py into the file's comment.
  const std::string text = mdsim_test::read_text(file);
  const std::string marker = "(OpenMM 7.7 Reference): ";
  const double openmm = std::stod(text.substr(text.find(marker) + marker.size()));
  INFO("mdsim " << e.rb_torsion << " OpenMM " << openmm);
  CHECK(std::fabs(e.rb_torsion - openmm) <= 1e-6 * std::fabs(openmm));
  CHECK(std::fabs(e.total - openmm) <= 1e-6 * std::fabs(openmm));
}
