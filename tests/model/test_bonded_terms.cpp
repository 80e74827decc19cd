// The bonded terms as code treats them alike (System::for_each_bonded, evaluate_bonded,
// cpu_bonded_energy): every term type visited in BondedTermTypes' order, its forces against a central
// finite difference of its energy, its atoms checked by validate_system with a message naming the
// type, and molecules found along its atoms. The physics of the RB torsion and the harmonic improper in
// detail: tests/physics/test_physics_functions.cpp; CMAP's: tests/model/test_cmap.cpp; the Urey-Bradley term
// (a bond's physics in its own energy term) against a hand-computed case below.
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "common/errors.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "model/cmap.hpp"
#include "model/molecules.hpp"
#include "platform/barostat.hpp"
#include "platform/nonbonded_plan.hpp"
#include "model/system.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

// A 6 x 6 CMAP grid with an uneven surface (kJ/mol).
CmapMap small_map() {
  CmapMap map;
  map.size = 6;
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 6; ++i) map.energy_kj_per_mol.push_back(2.0 + std::sin(1.0 * i + 0.3) * std::cos(2.0 * j) + 0.1 * ((i * 7 + j * 3) % 5));
  return map;
}

// Five atoms in a bent, twisted chain (nm) with at least one term of each type over them.
System chain_system() {
  System s;
  s.mass_amu = {12.0, 12.0, 14.0, 16.0, 12.0};
  s.charge_e = {0.0, 0.0, 0.0, 0.0, 0.0};
  s.sigma_nm = {0.3, 0.3, 0.3, 0.3, 0.3};
  s.epsilon_kj_per_mol = {0.0, 0.0, 0.0, 0.0, 0.0};
  s.nonbonded.method = NonbondedMethod::NoCutoff;
  s.bonds.push_back({0, 1, 0.14, 3.0e5});
  s.bonds.push_back({2, 3, 0.13, 4.0e5});
  s.angles.push_back({0, 1, 2, 1.9, 400.0});
  s.torsions.push_back({0, 1, 2, 3, 3, 0.4, 2.5});
  s.torsions.push_back({0, 1, 2, 3, 1, 3.0, 1.2});
  s.rb_torsions.push_back({0, 1, 2, 3, {9.28, 12.16, -13.12, -3.06, 26.24, -31.5}});
  s.impropers.push_back({1, 0, 2, 3, 0.2, 300.0});
  s.cmap_maps.push_back(small_map());
  s.cmap_torsions.push_back({{0, 1, 2, 3, 1, 2, 3, 4}, 0});
  s.urey_bradleys.push_back({0, 2, 0.23, 2.0e4});  // the outer atoms of angle 0-1-2
  return s;
}

std::vector<Vec3d> chain_positions() {
  return {Vec3d(0.0, 0.0, 0.0), Vec3d(0.152, 0.01, -0.02), Vec3d(0.2, 0.147, 0.03), Vec3d(0.33, 0.17, 0.12),
          Vec3d(0.35, 0.31, 0.09)};
}

// The System's shared tables (CMAP's), kept alive with their views.
struct Tables {
  explicit Tables(const System& s) : table(make_cmap_table(s.cmap_maps)), views(table.views(table.coefficients.data())) {}
  CmapTable table;
  std::vector<CmapMapView<double>> views;
  BondedTables<double> get() const { return {views.data()}; }
};

template <typename Term>
double energy_of(const std::vector<Term>& terms, const std::vector<Vec3d>& x, const Tables& tables) {
  return cpu_bonded_energy(terms, x, nullptr, tables.get());
}

}  // namespace

TEST_CASE("for_each_bonded visits every bonded list in BondedTermTypes' order", "[bonded]") {
  System s = chain_system();
  std::vector<std::string> visited;
  std::vector<std::size_t> sizes;
  s.for_each_bonded([&](const auto& terms) {
    visited.push_back(typeid(typename std::decay_t<decltype(terms)>::value_type).name());
    sizes.push_back(terms.size());
  });
  const std::vector<std::string> expected = {typeid(std::tuple_element_t<0, BondedTermTypes>).name(),
                                             typeid(std::tuple_element_t<1, BondedTermTypes>).name(),
                                             typeid(std::tuple_element_t<2, BondedTermTypes>).name(),
                                             typeid(std::tuple_element_t<3, BondedTermTypes>).name(),
                                             typeid(std::tuple_element_t<4, BondedTermTypes>).name(),
                                             typeid(std::tuple_element_t<5, BondedTermTypes>).name(),
                                             typeid(std::tuple_element_t<6, BondedTermTypes>).name()};
  CHECK(std::tuple_size_v<BondedTermTypes> == 7);
  CHECK(std::tuple_size_v<BondedTermTypes> == static_cast<std::size_t>(kNumBondedEnergies));
  CHECK(visited == expected);
  CHECK(sizes == std::vector<std::size_t>{2, 1, 2, 1, 1, 1, 1});
}

TEST_CASE("every bonded term type reports in its own energy term", "[bonded]") {
  const System s = chain_system();
  const EnergyTerms e = cpu_compute(s, chain_positions(), nullptr);
  const Tables tables(s);
  s.for_each_bonded([&](const auto& terms) {
    using Term = typename std::decay_t<decltype(terms)>::value_type;
    EnergyTerms alone;
    alone.bonded(Term::kEnergy) = 1.0;
    CHECK(alone.bonded_sum() == 1.0);
    CHECK(EnergyTerms(e).bonded(Term::kEnergy) == energy_of(terms, chain_positions(), tables));
    CHECK((kTermBonded & term_bit(Term::kEnergy)) != 0);
  });
  CHECK(e.rb_torsion != 0.0);
  CHECK(e.improper != 0.0);
  CHECK(e.cmap != 0.0);
  CHECK(e.urey_bradley != 0.0);
  CHECK(e.total == Catch::Approx(e.bond + e.angle + e.urey_bradley + e.torsion + e.rb_torsion + e.improper + e.cmap +
                                 e.nonbonded).epsilon(1e-14));
  // Selecting one term evaluates that one alone.
  const EnergyTerms cmap_only = cpu_compute_terms(s, chain_positions(), nullptr, kTermCmap);
  CHECK(cmap_only.cmap == e.cmap);
  CHECK(cmap_only.torsion == 0.0);
  CHECK(cmap_only.rb_torsion == 0.0);
  // The Urey-Bradley terms are not in the bond term, nor the bonds in theirs.
  const EnergyTerms ub_only = cpu_compute_terms(s, chain_positions(), nullptr, kTermUreyBradley);
  CHECK(ub_only.urey_bradley == e.urey_bradley);
  CHECK(ub_only.bond == 0.0);
  const EnergyTerms bonds_only = cpu_compute_terms(s, chain_positions(), nullptr, kTermBond);
  CHECK(bonds_only.urey_bradley == 0.0);
  CHECK(bonds_only.bond == e.bond);
}

TEST_CASE("Urey-Bradley: E = 1/2 k (r13 - r0)^2 on the outer atoms, forces along their line", "[bonded]") {
  // Atoms 0 and 2 at 0.3 nm (a 3-4-5 triangle), r0 0.25 nm, k 2e4 kJ/mol/nm^2: E = 1e4 * 0.05^2 = 25 kJ/mol,
  // |F| = k (r - r0) = 1000 kJ/mol/nm, pulling the two together; the vertex feels nothing.
  System s;
  s.mass_amu = {12.0, 12.0, 12.0};
  s.charge_e = {0.0, 0.0, 0.0};
  s.sigma_nm = {0.3, 0.3, 0.3};
  s.epsilon_kj_per_mol = {0.0, 0.0, 0.0};
  s.nonbonded.method = NonbondedMethod::NoCutoff;
  s.urey_bradleys.push_back({0, 2, 0.25, 2.0e4});
  const std::vector<Vec3d> x = {Vec3d(0.0, 0.0, 0.0), Vec3d(0.18, 0.0, 0.0), Vec3d(0.18, 0.24, 0.0)};
  std::vector<Vec3d> f;
  const EnergyTerms e = cpu_compute(s, x, &f);
  CHECK(e.urey_bradley == Catch::Approx(25.0).epsilon(1e-14));
  CHECK(e.bond == 0.0);
  CHECK(e.angle == 0.0);
  CHECK(e.total == Catch::Approx(25.0).epsilon(1e-14));
  CHECK(f[0].x == Catch::Approx(1000.0 * 0.6).epsilon(1e-13));  // toward atom 2: (0.18, 0.24) / 0.3
  CHECK(f[0].y == Catch::Approx(1000.0 * 0.8).epsilon(1e-13));
  CHECK(f[2].x == Catch::Approx(-1000.0 * 0.6).epsilon(1e-13));
  CHECK(f[2].y == Catch::Approx(-1000.0 * 0.8).epsilon(1e-13));
  CHECK(f[1].x == 0.0);
  CHECK(f[1].y == 0.0);
  // The same pair as a bond: the same energy, in the bond term.
  s.bonds.push_back({0, 2, 0.25, 2.0e4});
  const EnergyTerms both = cpu_compute(s, x, nullptr);
  CHECK(both.bond == e.urey_bradley);
  CHECK(both.total == Catch::Approx(50.0).epsilon(1e-14));
}

TEST_CASE("every bonded term type: forces are minus the energy gradient", "[bonded]") {
  const System s = chain_system();
  const std::vector<Vec3d> x0 = chain_positions();
  const Tables tables(s);
  s.for_each_bonded([&](const auto& terms) {
    const std::string name = terms.front().kName;
    std::vector<Vec3d> forces(x0.size());
    const double e = cpu_bonded_energy(terms, x0, &forces, tables.get());
    CHECK(std::isfinite(e));
    CHECK(e != 0.0);
    const double h = 1e-6;
    for (std::size_t a = 0; a < x0.size(); ++a)
      for (int d = 0; d < 3; ++d) {
        std::vector<Vec3d> xp = x0, xm = x0;
        xp[a][d] += h;
        xm[a][d] -= h;
        const double numeric = -(energy_of(terms, xp, tables) - energy_of(terms, xm, tables)) / (2 * h);
        INFO(name << " atom " << a << " axis " << d);
        CHECK(forces[a][d] == Catch::Approx(numeric).margin(1e-4 * (1.0 + std::fabs(numeric))));
      }
  });
}

TEST_CASE("cpu_bonded_energy adds forces and sums energies of its terms in order", "[bonded]") {
  const System s = chain_system();
  const std::vector<Vec3d> x = chain_positions();
  const Tables tables(s);
  // Two torsions on the same atoms: the list's energy is the sum of each term alone.
  const double both = energy_of(s.torsions, x, tables);
  const double first = energy_of(std::vector<PeriodicTorsionTerm>{s.torsions[0]}, x, tables);
  const double second = energy_of(std::vector<PeriodicTorsionTerm>{s.torsions[1]}, x, tables);
  CHECK(both == first + second);
  // Forces are added, not overwritten.
  std::vector<Vec3d> forces(x.size(), Vec3d(1.0, 2.0, 3.0));
  std::vector<Vec3d> alone(x.size());
  cpu_bonded_energy(s.bonds, x, &forces, tables.get());
  cpu_bonded_energy(s.bonds, x, &alone, tables.get());
  for (std::size_t a = 0; a < x.size(); ++a) CHECK(forces[a].x == alone[a].x + 1.0);
}

TEST_CASE("validate_system names the bonded term type and index of a bad atom", "[bonded]") {
  const auto message = [](System s) {
    try {
      validate_system(s);
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  System s = chain_system();
  CHECK(message(s) == "no error");
  s.bonds[1].j = 9;
  CHECK(message(s) == "system: bond 1 refers to particle 9, but the system has 5 particles");
  s = chain_system();
  s.angles[0].i = -1;
  CHECK(message(s) == "system: angle 0 refers to particle -1, but the system has 5 particles");
  s = chain_system();
  s.torsions[1].l = 5;
  CHECK(message(s) == "system: torsion 1 refers to particle 5, but the system has 5 particles");
  s = chain_system();
  s.rb_torsions[0].k = 7;
  CHECK(message(s) == "system: RB torsion 0 refers to particle 7, but the system has 5 particles");
  s = chain_system();
  s.impropers[0].i = -2;
  CHECK(message(s) == "system: improper 0 refers to particle -2, but the system has 5 particles");
  s = chain_system();
  s.cmap_torsions[0].atom[6] = 5;
  CHECK(message(s) == "system: CMAP torsion 0 refers to particle 5, but the system has 5 particles");
  s = chain_system();
  s.urey_bradleys[0].k = 6;
  CHECK(message(s) == "system: Urey-Bradley 0 refers to particle 6, but the system has 5 particles");
  // CMAP: the map a torsion names, and each map's grid.
  s = chain_system();
  s.cmap_torsions[0].map = 1;
  CHECK(message(s) == "system: CMAP torsion 0 refers to map 1, but the system has 1 maps");
  s = chain_system();
  s.cmap_maps[0].energy_kj_per_mol.pop_back();
  CHECK(message(s) == "system: CMAP map 0 of size 6 has 35 energies, not 36");
  s = chain_system();
  s.cmap_maps[0] = CmapMap{1, {0.0}};
  CHECK(message(s) == "system: CMAP map 0 has size 1; at least 2 is needed");
  s = chain_system();
  s.cmap_maps[0].energy_kj_per_mol[3] = std::nan("");
  CHECK(message(s) == "system: CMAP map 0 has a non-finite energy");
}

TEST_CASE("find_molecules joins atoms along every bonded term type", "[bonded]") {
  System s = chain_system();
  for (int extra = 0; extra < 4; ++extra) {  // atoms 5 .. 8
    s.mass_amu.push_back(1.0);
    s.charge_e.push_back(0.0);
    s.sigma_nm.push_back(0.1);
    s.epsilon_kj_per_mol.push_back(0.0);
  }
  s.bonds = {{0, 1, 0.1, 1.0}};     // 0-1
  s.angles = {};                    //
  s.torsions = {{1, 2, 3, 0, 1, 0.0, 1.0}};  // joins 1-2, 2-3, 3-0
  s.rb_torsions = {};
  s.impropers = {{4, 5, 4, 5, 0.0, 1.0}};   // joins 4-5
  s.cmap_torsions = {{{6, 7, 6, 7, 7, 6, 7, 8}, 0}};  // joins 6, 7, 8 (its two torsions are one term)
  s.urey_bradleys = {};
  std::vector<std::vector<int>> molecules = find_molecules(s);
  REQUIRE(molecules.size() == 3);
  CHECK(molecules[0] == std::vector<int>{0, 1, 2, 3});
  CHECK(molecules[1] == std::vector<int>{4, 5});
  CHECK(molecules[2] == std::vector<int>{6, 7, 8});
  s.urey_bradleys = {{3, 4, 0.2, 1.0}};  // joins 3-4
  molecules = find_molecules(s);
  REQUIRE(molecules.size() == 2);
  CHECK(molecules[0] == std::vector<int>{0, 1, 2, 3, 4, 5});
  // A Urey-Bradley pair links the same atoms as the bond it was read as before it had its own term: the same
  // molecule trees (parents and visiting order).
  System as_bond = s;
  as_bond.urey_bradleys = {};
  as_bond.bonds.push_back({3, 4, 0.2, 1.0});
  const MoleculeTrees a = molecule_trees(s), b = molecule_trees(as_bond);
  CHECK(a.parent == b.parent);
  CHECK(a.order == b.order);
}
