// The force-field generators of model/forcefield_generators.hpp one by one: each one's terms equal OpenMM's
// (tests/data/ff_*_openmm_terms.txt, the shared reference counts) and, bit for bit, the same part of what the
// whole build_system gives.
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"
#include "io/pdb_reader.hpp"
#include "model/forcefield_generators.hpp"
#include "support/catch.hpp"
#include "support/forcefield_fixtures.hpp"
#include "support/text_file.hpp"
#include "support/thrown.hpp"

using namespace mdsim;
using namespace mdsim::ffgen;
using mdsim_test::check_close;
using mdsim_test::OpenMMTerms;
using mdsim_test::read_terms;
using mdsim_test::amber14;
using mdsim_test::amber99sb;
using mdsim_test::input_error_of;
using mdsim_test::kData;
using mdsim_test::kReference;
using mdsim_test::kSystems;
using mdsim_test::tiny_topology;

namespace {

const ForceFieldData& tiny() {
  static const ForceFieldData ff = load_forcefields({kData + "ff_tiny.xml"}, "");
  return ff;
}

// A PDB file's topology with its bonds, as the callers of build_system make it.
Topology topology_with_bonds(const std::string& name, const ForceFieldData& ff) {
  Topology top = read_pdb(kSystems + name + ".pdb");
  create_topology_bonds(top, ff.standard);
  return top;
}

Topology tiny_with_bonds() {
  Topology top = tiny_topology();
  create_topology_bonds(top, tiny().standard);
  return top;
}

ForceFieldOptions options_for(const Topology& top, ConstraintMode constraints = ConstraintMode::None,
                              bool rigid_water = false) {
  ForceFieldOptions o;
  o.constraints = constraints;
  o.rigid_water = rigid_water;
  o.nonbonded.method = top.box ? NonbondedMethod::PME : NonbondedMethod::NoCutoff;
  return o;
}

// Terms as tuples, so that vectors of them compare exactly (every double to the last bit).
auto key(const HarmonicBondTerm& b) { return std::tuple{b.i, b.j, b.length_nm, b.k_kj_per_mol_nm2}; }
auto key(const HarmonicAngleTerm& a) { return std::tuple{a.i, a.j, a.k, a.angle_rad, a.k_kj_per_mol_rad2}; }
auto key(const PeriodicTorsionTerm& t) { return std::tuple{t.i, t.j, t.k, t.l, t.periodicity, t.phase_rad, t.k_kj_per_mol}; }
auto key(const NonbondedException& e) {
  return std::tuple{e.i, e.j, e.charge_product_e2, e.sigma_nm, e.epsilon_kj_per_mol};
}
auto key(const DistanceConstraint& c) { return std::tuple{c.i, c.j, c.distance_nm}; }
auto key(const RigidWater& w) {
  return std::tuple{w.oxygen, w.hydrogen1, w.hydrogen2, w.oh_distance_nm, w.hh_distance_nm};
}
template <class Term>
auto keys(const std::vector<Term>& terms) {
  std::vector<decltype(key(terms.front()))> out;
  for (const auto& t : terms) out.push_back(key(t));
  return out;
}

// Everything the bonded generators need before they run (what build_system prepares for them).
struct BondedSetup {
  BondedLists lists;
  ConstraintFlags flags;
  std::vector<char> rigid;
};
BondedSetup bonded_setup(const GeneratorInput& in) {
  BondedSetup s;
  s.lists = list_bonded_terms(in.topology, in.graph);
  s.rigid = rigid_water_residues(in.topology, in.names, in.options.rigid_water);
  s.flags = constraint_flags(in, s.rigid, s.lists.angles);
  return s;
}

struct SystemCase {
  const char* pdb;
  const ForceFieldData& (*ff)();
  const char* terms;  // OpenMM's term list in tests/data
};
const SystemCase kOpenMMCases[] = {{"ala2_vacuum", amber14, "ff_ala2_vacuum_openmm_terms.txt"},
                                   {"ala2_vacuum", amber99sb, "ff_ala2_vacuum_amber99sb_openmm_terms.txt"}};

}  // namespace

// ------------------------------------------------------------------------------------------ template matching

TEST_CASE("generators: template matching by bonded graph, independent of atom names and order", "[forcefield]") {
  const Topology top = tiny_with_bonds();
  const ForceFieldData& ff = tiny();
  const NormalisedNames names = normalise_names(top, ff.standard);
  const TemplateMatch m = match_templates(top, ff, names, make_atom_graph(top));
  CHECK(m.residue_template == std::vector<int>{0, 1});  // HPX, FRM (the override replaced the first FRM)
  CHECK(template_assignment(ff, m).residue_template == std::vector<std::string>{"HPX", "FRM"});

  // HPX in template order; FRM's atoms (OX1 HA CX1 HB) map to template atoms O, an H, C, the other H.
  CHECK(std::vector<int>(m.atom_template_index.begin(), m.atom_template_index.begin() + 4) ==
        std::vector<int>{0, 1, 2, 3});
  CHECK(m.atom_template_index[4] == 1);
  CHECK(m.atom_template_index[6] == 0);
  CHECK(std::set<int>{m.atom_template_index[5], m.atom_template_index[7]} == std::set<int>{2, 3});
  const auto type = [&](const char* name) { return ff.type_index.at(name); };
  CHECK(m.atom_type == std::vector<int>{type("t-HO"), type("t-OH"), type("t-OH"), type("t-HO"), type("t-O"),
                                        type("t-H"), type("t-C"), type("t-H")});
  for (int a = 0; a < top.num_atoms(); ++a) {
    const auto u = static_cast<std::size_t>(a);
    const auto& t = ff.templates[static_cast<std::size_t>(m.residue_template[static_cast<std::size_t>(top.atoms[u].residue)])];
    CHECK(m.atom_parameters[u] == &t.atoms[static_cast<std::size_t>(m.atom_template_index[u])].parameters);
  }
  CHECK(m.atom_parameters[6]->at("charge") == 0.6);
}

TEST_CASE("generators: template matching equals OpenMM's for alanine dipeptide and build_system's", "[forcefield]") {
  for (const SystemCase& c : kOpenMMCases) {
    const OpenMMTerms ref = read_terms(kData + c.terms);
    const Topology top = topology_with_bonds(c.pdb, c.ff());
    CHECK(static_cast<int>(top.bonds.size()) == ref.topology_bonds);
    const GeneratorInput in(top, c.ff(), options_for(top));
    CHECK(template_assignment(c.ff(), in.match).residue_template == ref.templates);
    // The matched atom types carry OpenMM's masses.
    for (int a = 0; a < top.num_atoms(); ++a)
      CHECK(c.ff().atom_types[static_cast<std::size_t>(in.type_of(a))].mass_amu ==
            Catch::Approx(ref.particles[static_cast<std::size_t>(a)][1]).epsilon(1e-12));
    TemplateAssignment whole;
    build_system(top, c.ff(), options_for(top), &whole);
    CHECK(whole.residue_template == ref.templates);
  }

  // Solvated: every water gets the HOH template.
  const Topology water = topology_with_bonds("ala2_water", amber14());
  const NormalisedNames names = normalise_names(water, amber14().standard);
  const TemplateMatch m = match_templates(water, amber14(), names, make_atom_graph(water));
  const auto assigned = template_assignment(amber14(), m).residue_template;
  int waters = 0;
  for (std::size_t r = 0; r < water.residues.size(); ++r)
    if (water.residues[r].name == "HOH") waters += assigned[r] == "HOH";
  CHECK(waters == 749);
}

TEST_CASE("generators: a topology without its bonds matches no template (create_topology_bonds first)",
          "[forcefield]") {
  Topology top = read_pdb(kSystems + "ala2_vacuum.pdb");
  REQUIRE(top.bonds.empty());
  const NormalisedNames names = normalise_names(top, amber14().standard);
  const std::string message = input_error_of([&] { match_templates(top, amber14(), names, make_atom_graph(top)); });
  CHECK(message.rfind(kSystems + "ala2_vacuum.pdb:2: no force field template matches residue ACE 1 (chain ' '): ", 0) ==
        0);
  CHECK(input_error_of([&] { build_system(top, amber14(), options_for(top)); }) == message);
}

// ------------------------------------------------------------------------------------------ per-particle parameters

TEST_CASE("generators: masses, charges, sigma, epsilon equal OpenMM's and build_system's", "[forcefield]") {
  for (const SystemCase& c : kOpenMMCases) {
    const OpenMMTerms ref = read_terms(kData + c.terms);
    const Topology top = topology_with_bonds(c.pdb, c.ff());
    const GeneratorInput in(top, c.ff(), options_for(top));
    System sys;
    assign_masses(in, sys);
    assign_nonbonded_parameters(in, sys);
    REQUIRE(sys.num_particles() == static_cast<int>(ref.particles.size()));
    for (int i = 0; i < sys.num_particles(); ++i) {
      const auto u = static_cast<std::size_t>(i);
      check_close({static_cast<double>(i), sys.mass_amu[u], sys.charge_e[u], sys.sigma_nm[u], sys.epsilon_kj_per_mol[u]},
                  ref.particles[u]);
    }
    const System whole = build_system(top, c.ff(), options_for(top));
    CHECK(sys.mass_amu == whole.mass_amu);
    CHECK(sys.charge_e == whole.charge_e);
    CHECK(sys.sigma_nm == whole.sigma_nm);
    CHECK(sys.epsilon_kj_per_mol == whole.epsilon_kj_per_mol);
  }
}

TEST_CASE("generators: per-particle parameters by type or class, charges from the template", "[forcefield]") {
  const Topology top = tiny_with_bonds();
  const ForceFieldOptions o = options_for(top);
  const GeneratorInput in(top, tiny(), o);
  System sys;
  assign_masses(in, sys);
  assign_nonbonded_parameters(in, sys);
  CHECK(sys.mass_amu == std::vector<double>{1.008, 16.0, 16.0, 1.008, 16.0, 1.008, 12.01, 1.008});
  // <UseAttributeFromResidue name="charge">: the matched template atom's charge (FRM's override: 0.6 / -0.6).
  CHECK(sys.charge_e == std::vector<double>{0.4, -0.4, -0.4, 0.4, -0.6, 0.0, 0.6, 0.0});
  // sigma/epsilon of class HX for both hydrogen types, by type for the others.
  CHECK(sys.sigma_nm == std::vector<double>{0.1, 0.3, 0.3, 0.1, 0.29, 0.1, 0.34, 0.1});
  CHECK(sys.epsilon_kj_per_mol == std::vector<double>{0.05, 0.6, 0.6, 0.05, 0.88, 0.05, 0.36, 0.05});

  // A type without <NonbondedForce> parameters, and a template atom without the charge it should give.
  ForceFieldData no_carbon = tiny();
  no_carbon.nonbonded_atoms.erase(no_carbon.nonbonded_atoms.begin() + 2);  // type t-C
  const GeneratorInput in2(top, no_carbon, o);
  CHECK(input_error_of([&] { assign_nonbonded_parameters(in2, sys); }) ==
        "tiny.pdb:7: atom 'CX1' of residue FRM 2 (chain 'A') has atom type 't-C', for which <NonbondedForce> defines "
        "no parameters");
  ForceFieldData no_charge = tiny();
  no_charge.templates[1].atoms[0].parameters.erase("charge");  // FRM's C
  const GeneratorInput in3(top, no_charge, o);
  CHECK(input_error_of([&] { assign_nonbonded_parameters(in3, sys); }) ==
        "tiny.pdb:7: atom 'CX1' of residue FRM 2 (chain 'A') has no charge (neither its type 't-C' in "
        "<NonbondedForce> nor its residue template gives one)");

  // Without a <NonbondedForce>: OpenMM's defaults and no exceptions.
  ForceFieldData no_nonbonded = tiny();
  no_nonbonded.has_nonbonded_force = false;
  const GeneratorInput in4(top, no_nonbonded, o);
  System plain;
  assign_nonbonded_parameters(in4, plain);
  add_exceptions(in4, plain);
  CHECK(plain.charge_e == std::vector<double>(8, 0.0));
  CHECK(plain.sigma_nm == std::vector<double>(8, 1.0));
  CHECK(plain.epsilon_kj_per_mol == std::vector<double>(8, 0.0));
  CHECK(plain.exceptions.empty());
}

// ------------------------------------------------------------------------------------------ bonds and angles

TEST_CASE("generators: bonded lists as OpenMM enumerates them", "[forcefield]") {
  const Topology top = tiny_with_bonds();
  const BondedLists lists = list_bonded_terms(top, make_atom_graph(top));
  using A3 = std::array<int, 3>;
  using A4 = std::array<int, 4>;
  CHECK(lists.angles == std::vector<A3>{{0, 1, 2}, {1, 2, 3}, {4, 6, 5}, {4, 6, 7}, {5, 6, 7}});
  CHECK(lists.propers == std::vector<A4>{{0, 1, 2, 3}});
  CHECK(lists.impropers == std::vector<A4>{{6, 4, 5, 7}});
}

TEST_CASE("generators: harmonic bonds equal OpenMM's and build_system's", "[forcefield]") {
  for (const SystemCase& c : kOpenMMCases) {
    const OpenMMTerms ref = read_terms(kData + c.terms);
    const Topology top = topology_with_bonds(c.pdb, c.ff());
    const GeneratorInput in(top, c.ff(), options_for(top));
    const BondedSetup setup = bonded_setup(in);
    ConstraintSet constraints;
    System sys;
    const std::vector<double> length_nm = add_bonds(in, setup.flags, constraints, sys);
    REQUIRE(sys.bonds.size() == ref.bonds.size());
    for (std::size_t n = 0; n < sys.bonds.size(); ++n) {
      const auto& b = sys.bonds[n];
      check_close({double(b.i), double(b.j), b.length_nm, b.k_kj_per_mol_nm2}, ref.bonds[n]);
      CHECK(length_nm[n] == b.length_nm);  // every topology bond has a term here, in topology order
    }
    CHECK(constraints.list().empty());
    CHECK(keys(sys.bonds) == keys(build_system(top, c.ff(), options_for(top)).bonds));
  }

  // Tiny: O-O by type, C=O by class; the definition naming an unknown class was dropped by the reader.
  const Topology top = tiny_with_bonds();
  const GeneratorInput in(top, tiny(), options_for(top));
  ConstraintSet constraints;
  System sys;
  add_bonds(in, bonded_setup(in).flags, constraints, sys);
  REQUIRE(sys.bonds.size() == 6);
  CHECK(key(sys.bonds[1]) == std::tuple{1, 2, 0.147, 300000.0});
  CHECK(key(sys.bonds[3]) == std::tuple{4, 6, 0.122, 500000.0});
}

TEST_CASE("generators: constrained bonds become constraints at the definition's length", "[forcefield]") {
  const Topology top = topology_with_bonds("ala2_vacuum", amber14());
  for (const bool flexible : {false, true}) {
    ForceFieldOptions o = options_for(top, ConstraintMode::HBonds);
    o.flexible_constraints = flexible;
    const GeneratorInput in(top, amber14(), o);
    const BondedSetup setup = bonded_setup(in);
    ConstraintSet constraints;
    System sys;
    const std::vector<double> length_nm = add_bonds(in, setup.flags, constraints, sys);
    std::size_t hbonds = 0;
    for (std::size_t b = 0; b < top.bonds.size(); ++b) {
      const auto [i, j] = top.bonds[b];
      const bool h = in.graph.element[static_cast<std::size_t>(i)] == "H" || in.graph.element[static_cast<std::size_t>(j)] == "H";
      CHECK(static_cast<bool>(setup.flags.bond[b]) == h);
      if (!h) continue;
      REQUIRE(hbonds < constraints.list().size());
      CHECK(key(constraints.list()[hbonds]) == std::tuple{i, j, length_nm[b]});
      ++hbonds;
    }
    CHECK(hbonds == 12);
    CHECK(constraints.list().size() == hbonds);
    CHECK(sys.bonds.size() == (flexible ? top.bonds.size() : top.bonds.size() - hbonds));
    const System whole = build_system(top, amber14(), o);
    CHECK(keys(sys.bonds) == keys(whole.bonds));
    CHECK(keys(constraints.list()) == keys(whole.constraints));
  }
}

TEST_CASE("generators: harmonic angles equal OpenMM's and build_system's", "[forcefield]") {
  for (const SystemCase& c : kOpenMMCases) {
    const OpenMMTerms ref = read_terms(kData + c.terms);
    const Topology top = topology_with_bonds(c.pdb, c.ff());
    const GeneratorInput in(top, c.ff(), options_for(top));
    const BondedSetup setup = bonded_setup(in);
    ConstraintSet constraints;
    System sys;
    const std::vector<double> length_nm = add_bonds(in, setup.flags, constraints, sys);
    add_angles(in, setup.lists.angles, setup.flags, length_nm, constraints, sys);
    REQUIRE(sys.angles.size() == ref.angles.size());
    for (std::size_t n = 0; n < sys.angles.size(); ++n) {
      const auto& a = sys.angles[n];
      check_close({double(a.i), double(a.j), double(a.k), a.angle_rad, a.k_kj_per_mol_rad2}, ref.angles[n]);
    }
    CHECK(keys(sys.angles) == keys(build_system(top, c.ff(), options_for(top)).angles));
  }
}

TEST_CASE("generators: HAngles constraints from bond lengths and the angle (law of cosines)", "[forcefield]") {
  const Topology top = topology_with_bonds("ala2_vacuum", amber14());
  const ForceFieldOptions o = options_for(top, ConstraintMode::HAngles);
  const GeneratorInput in(top, amber14(), o);
  const BondedSetup setup = bonded_setup(in);
  ConstraintSet constraints;
  System sys;
  const std::vector<double> length_nm = add_bonds(in, setup.flags, constraints, sys);
  CHECK(sys.bonds.empty());  // HAngles constrains every bond
  REQUIRE(constraints.list().size() == top.bonds.size());
  System unconstrained;
  {
    const ForceFieldOptions none = options_for(top);
    const GeneratorInput plain(top, amber14(), none);
    ConstraintSet unused;
    const BondedSetup s = bonded_setup(plain);
    add_angles(plain, s.lists.angles, s.flags, add_bonds(plain, s.flags, unused, unconstrained), unused, unconstrained);
  }
  add_angles(in, setup.lists.angles, setup.flags, length_nm, constraints, sys);
  // H-X-H angles (three methyls: 3 each, and none else in ala2) become constraints, the others keep their terms.
  std::size_t constrained = 0, next = top.bonds.size();
  for (const auto& a : unconstrained.angles) {
    const bool h1 = in.graph.element[static_cast<std::size_t>(a.i)] == "H";
    const bool h3 = in.graph.element[static_cast<std::size_t>(a.k)] == "H";
    if (!(h1 && h3)) continue;
    ++constrained;
    REQUIRE(next < constraints.list().size());
    const double l = 0.109;  // amber14 C-H (HC, H1)
    CHECK(key(constraints.list()[next]) ==
          std::tuple{a.i, a.k, std::sqrt(l * l + l * l - 2.0 * l * l * std::cos(a.angle_rad))});
    ++next;
  }
  CHECK(constrained == 9);
  CHECK(constraints.list().size() == top.bonds.size() + constrained);
  CHECK(sys.angles.size() == unconstrained.angles.size() - constrained);
  const System whole = build_system(top, amber14(), o);
  CHECK(keys(sys.angles) == keys(whole.angles));
  CHECK(keys(constraints.list()) == keys(whole.constraints));
}

// ------------------------------------------------------------------------------------------ torsions

TEST_CASE("generators: propers and impropers equal OpenMM's and build_system's", "[forcefield]") {
  for (const SystemCase& c : kOpenMMCases) {
    const OpenMMTerms ref = read_terms(kData + c.terms);
    const Topology top = topology_with_bonds(c.pdb, c.ff());
    const GeneratorInput in(top, c.ff(), options_for(top));
    const BondedLists lists = list_bonded_terms(top, in.graph);
    System propers, impropers;
    add_propers(in, lists.propers, propers);
    add_impropers(in, lists.impropers, impropers);
    // OpenMM lists propers, then impropers.
    REQUIRE(propers.torsions.size() + impropers.torsions.size() == ref.torsions.size());
    CHECK(impropers.torsions.size() == 4);  // the two amide groups' N and C
    for (std::size_t n = 0; n < ref.torsions.size(); ++n) {
      const bool proper = n < propers.torsions.size();
      const auto& t = proper ? propers.torsions[n] : impropers.torsions[n - propers.torsions.size()];
      check_close({double(t.i), double(t.j), double(t.k), double(t.l), double(t.periodicity), t.phase_rad,
                   t.k_kj_per_mol},
                  ref.torsions[n]);
    }
    // Both orderings (amber14: amber, amber99sb: default) put the centre atom third.
    for (const auto& t : impropers.torsions) CHECK(in.graph.bonded_to[static_cast<std::size_t>(t.k)].size() == 3);
    auto both = propers.torsions;
    both.insert(both.end(), impropers.torsions.begin(), impropers.torsions.end());
    CHECK(keys(both) == keys(build_system(top, c.ff(), options_for(top)).torsions));
  }
}

TEST_CASE("generators: proper priority and the improper ordering rules", "[forcefield]") {
  const Topology top = tiny_with_bonds();
  const ForceFieldOptions o = options_for(top);
  {
    // H1-O1-O2-H2: the class-specific proper beats the wildcard one that is listed first; its k = 0 term is dropped.
    const GeneratorInput in(top, tiny(), o);
    System sys;
    add_propers(in, list_bonded_terms(top, in.graph).propers, sys);
    REQUIRE(sys.torsions.size() == 1);
    CHECK(key(sys.torsions[0]) == std::tuple{0, 1, 2, 3, 1, 3.14, 5.0});
  }
  // FRM's improper (centre CX1 = 6; O = 4, hydrogens 5 and 7) under each ordering rule; the definition
  // (CX, *, *, OX) has wildcards.
  auto improper_terms = [&](ImproperOrdering ordering) {
    ForceFieldData ff = tiny();
    ff.impropers[0].ordering = ordering;
    const GeneratorInput in(top, ff, o);
    System sys;
    add_impropers(in, list_bonded_terms(top, in.graph).impropers, sys);
    return keys(sys.torsions);
  };
  using T = std::tuple<int, int, int, int, int, double, double>;
  // default, and charmm with wildcards: the two hydrogens (same element) by index, the centre, then O.
  CHECK(improper_terms(ImproperOrdering::Default) == std::vector<T>{{5, 7, 6, 4, 2, 3.14159, 10.0}});
  CHECK(improper_terms(ImproperOrdering::Charmm) == std::vector<T>{{5, 7, 6, 4, 2, 3.14159, 10.0}});
  // amber with wildcards: the hydrogens by their template atom index.
  const GeneratorInput in(top, tiny(), o);
  const bool ha_first = in.match.atom_template_index[5] < in.match.atom_template_index[7];
  const int h1 = ha_first ? 5 : 7, h2 = ha_first ? 7 : 5;
  CHECK(improper_terms(ImproperOrdering::Amber) == std::vector<T>{{h1, h2, 6, 4, 2, 3.14159, 10.0}});
  // smirnoff: centre first, the three neighbour orders.
  CHECK(improper_terms(ImproperOrdering::Smirnoff) ==
        std::vector<T>{{6, 5, 7, 4, 2, 3.14159, 10.0}, {6, 7, 4, 5, 2, 3.14159, 10.0}, {6, 4, 5, 7, 2, 3.14159, 10.0}});
}

// ------------------------------------------------------------------------------------------ exceptions

TEST_CASE("generators: exceptions equal OpenMM's and build_system's", "[forcefield]") {
  for (const SystemCase& c : kOpenMMCases) {
    const OpenMMTerms ref = read_terms(kData + c.terms);
    const Topology top = topology_with_bonds(c.pdb, c.ff());
    const GeneratorInput in(top, c.ff(), options_for(top));
    System sys;
    assign_nonbonded_parameters(in, sys);
    add_exceptions(in, sys);
    REQUIRE(sys.exceptions.size() == ref.exceptions.size());
    for (std::size_t n = 0; n < sys.exceptions.size(); ++n) {
      const auto& e = sys.exceptions[n];
      check_close({double(e.i), double(e.j), e.charge_product_e2, e.sigma_nm, e.epsilon_kj_per_mol}, ref.exceptions[n]);
    }
    CHECK(keys(sys.exceptions) == keys(build_system(top, c.ff(), options_for(top)).exceptions));
  }

  // Tiny: 1-2 and 1-3 pairs excluded, the one 1-4 pair (H1-H2) scaled by coulomb14scale 0.5 and lj14scale 0.25.
  const Topology top = tiny_with_bonds();
  const GeneratorInput in(top, tiny(), options_for(top));
  System sys;
  assign_nonbonded_parameters(in, sys);
  add_exceptions(in, sys);
  using E = std::tuple<int, int, double, double, double>;
  const std::vector<E> expected{{0, 1, 0.0, 1.0, 0.0}, {0, 2, 0.0, 1.0, 0.0}, {1, 2, 0.0, 1.0, 0.0},
                                {0, 3, 0.5 * 0.4 * 0.4, 0.5 * (0.1 + 0.1), 0.25 * std::sqrt(0.05 * 0.05)},
                                {1, 3, 0.0, 1.0, 0.0}, {2, 3, 0.0, 1.0, 0.0}, {4, 5, 0.0, 1.0, 0.0},
                                {4, 6, 0.0, 1.0, 0.0}, {5, 6, 0.0, 1.0, 0.0}, {4, 7, 0.0, 1.0, 0.0},
                                {5, 7, 0.0, 1.0, 0.0}, {6, 7, 0.0, 1.0, 0.0}};
  CHECK(keys(sys.exceptions) == expected);
}

// ------------------------------------------------------------------------------------------ constraints

TEST_CASE("generators: constraint set keeps one distance per pair", "[forcefield]") {
  ConstraintSet set;
  set.add(3, 1, 0.1);
  set.add(1, 3, 0.1);  // the same pair again: nothing added
  set.add(2, 5, 0.2);
  CHECK(keys(set.list()) == std::vector<std::tuple<int, int, double>>{{3, 1, 0.1}, {2, 5, 0.2}});
  CHECK(set.distance_nm(1, 3) == 0.1);
  CHECK(!set.distance_nm(1, 2));
  CHECK(input_error_of([&] { set.add(5, 2, 0.25); }) ==
        "two constraints between atoms 5 and 2 with different distances (0.2 and 0.25 nm)");
}

TEST_CASE("generators: rigid water: flags, constraints and SETTLE triples as OpenMM and build_system",
          "[forcefield]") {
  const Topology top = topology_with_bonds("ala2_water", amber14());
  const ForceFieldOptions o = options_for(top, ConstraintMode::HBonds, true);
  const GeneratorInput in(top, amber14(), o);
  const BondedSetup setup = bonded_setup(in);
  std::size_t waters = 0;
  for (std::size_t r = 0; r < top.residues.size(); ++r) {
    CHECK(static_cast<bool>(setup.rigid[r]) == (top.residues[r].name == "HOH"));
    waters += setup.rigid[r] != 0;
  }
  CHECK(waters == 749);
  CHECK(rigid_water_residues(top, in.names, false) == std::vector<char>(top.residues.size(), 0));

  ConstraintSet constraints;
  System sys;
  const std::vector<double> length_nm = add_bonds(in, setup.flags, constraints, sys);
  add_angles(in, setup.lists.angles, setup.flags, length_nm, constraints, sys);
  add_rigid_waters(in, setup.rigid, constraints, sys);
  const std::string json = mdsim_test::read_text(kReference + "ala2_water.json");
  const auto at = json.find("\"constraints_hbonds_rigidwater\":");
  REQUIRE(at != std::string::npos);
  CHECK(static_cast<double>(constraints.list().size()) == std::stod(json.substr(at + 32)));
  REQUIRE(sys.rigid_waters.size() == waters);
  for (const auto& w : sys.rigid_waters) {
    CHECK(w.oh_distance_nm == 0.09572);
    CHECK(w.hh_distance_nm == constraints.distance_nm(w.hydrogen1, w.hydrogen2));
    CHECK(w.hh_distance_nm == Catch::Approx(2 * 0.09572 * std::sin(1.82421813418 / 2)).epsilon(1e-9));
  }
  CHECK(sys.angles.size() == 36);  // the waters' angles are constrained and have no term; ala2's 36 remain
  const System whole = build_system(top, amber14(), o);
  CHECK(keys(constraints.list()) == keys(whole.constraints));
  CHECK(keys(sys.rigid_waters) == keys(whole.rigid_waters));
}

TEST_CASE("generators: hydrogen mass repartitioning moves mass from the bonded heavy atom", "[forcefield]") {
  const Topology top = topology_with_bonds("ala2_water", amber14());
  ForceFieldOptions o = options_for(top, ConstraintMode::HBonds, true);
  o.hydrogen_mass_amu = 4.0;
  const GeneratorInput in(top, amber14(), o);
  const std::vector<char> rigid = rigid_water_residues(top, in.names, true);
  System plain;
  assign_masses(in, plain);
  System sys = plain;
  repartition_hydrogen_masses(in, rigid, 4.0, sys);
  std::vector<double> expected = plain.mass_amu;
  for (auto [heavy, h] : top.bonds) {
    if (in.graph.element[static_cast<std::size_t>(heavy)] == "H") std::swap(heavy, h);
    if (in.graph.element[static_cast<std::size_t>(h)] != "H" || rigid[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(h)].residue)])
      continue;
    expected[static_cast<std::size_t>(heavy)] -= 4.0 - expected[static_cast<std::size_t>(h)];
    expected[static_cast<std::size_t>(h)] = 4.0;
  }
  CHECK(sys.mass_amu == expected);
  double before = 0.0, after = 0.0;
  for (std::size_t a = 0; a < plain.mass_amu.size(); ++a) {
    before += plain.mass_amu[a];
    after += sys.mass_amu[a];
    if (rigid[static_cast<std::size_t>(top.atoms[a].residue)]) CHECK(sys.mass_amu[a] == plain.mass_amu[a]);
  }
  CHECK(after == Catch::Approx(before).epsilon(1e-12));
  CHECK(sys.mass_amu == build_system(top, amber14(), o).mass_amu);

  System bad = plain;
  CHECK(input_error_of([&] { repartition_hydrogen_masses(in, rigid, 0.0, bad); }) ==
        "hydrogen mass 0 amu must be positive");
  bad = plain;
  const std::string heavy = input_error_of([&] { repartition_hydrogen_masses(in, rigid, 6.0, bad); });
  CHECK(heavy.rfind(kSystems + "ala2_water.pdb:", 0) == 0);
  CHECK(heavy.find(": hydrogen mass 6 amu leaves atom 'CH3' of residue ACE 1 (chain 'A') with mass ") !=
        std::string::npos);
}
