// The bonded terms as code treats them alike (System::for_each_bonded, evaluate_bonded,
// cpu_bonded_energy): every term type visited in BondedTermTypes' order, its forces against a central
// finite difference of its energy, its atoms checked by validate_system with a message naming the
// type, and molecules found along its atoms.
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "common/errors.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/barostat.hpp"
#include "platform/nonbonded_plan.hpp"
#include "model/system.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

// Four atoms in a bent, twisted chain (nm) with one term of each type over them.
System chain_system() {
  System s;
  s.mass_amu = {12.0, 12.0, 14.0, 16.0};
  s.charge_e = {0.0, 0.0, 0.0, 0.0};
  s.sigma_nm = {0.3, 0.3, 0.3, 0.3};
  s.epsilon_kj_per_mol = {0.0, 0.0, 0.0, 0.0};
  s.nonbonded.method = NonbondedMethod::NoCutoff;
  s.bonds.push_back({0, 1, 0.14, 3.0e5});
  s.bonds.push_back({2, 3, 0.13, 4.0e5});
  s.angles.push_back({0, 1, 2, 1.9, 400.0});
  s.torsions.push_back({0, 1, 2, 3, 3, 0.4, 2.5});
  s.torsions.push_back({0, 1, 2, 3, 1, 3.0, 1.2});
  return s;
}

std::vector<Vec3d> chain_positions() {
  return {Vec3d(0.0, 0.0, 0.0), Vec3d(0.152, 0.01, -0.02), Vec3d(0.2, 0.147, 0.03), Vec3d(0.33, 0.17, 0.12)};
}

template <typename Term>
double energy_of(const std::vector<Term>& terms, const std::vector<Vec3d>& x) {
  return cpu_bonded_energy(terms, x, nullptr);
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
                                             typeid(std::tuple_element_t<2, BondedTermTypes>).name()};
  CHECK(std::tuple_size_v<BondedTermTypes> == 3);
  CHECK(visited == expected);
  CHECK(sizes == std::vector<std::size_t>{2, 1, 2});
}

TEST_CASE("every bonded term type: forces are minus the energy gradient", "[bonded]") {
  const System s = chain_system();
  const std::vector<Vec3d> x0 = chain_positions();
  s.for_each_bonded([&](const auto& terms) {
    const std::string name = terms.front().kName;
    std::vector<Vec3d> forces(x0.size());
    const double e = cpu_bonded_energy(terms, x0, &forces);
    CHECK(std::isfinite(e));
    CHECK(e > 0.0);
    const double h = 1e-6;
    for (std::size_t a = 0; a < x0.size(); ++a)
      for (int d = 0; d < 3; ++d) {
        std::vector<Vec3d> xp = x0, xm = x0;
        xp[a][d] += h;
        xm[a][d] -= h;
        const double numeric = -(energy_of(terms, xp) - energy_of(terms, xm)) / (2 * h);
        INFO(name << " atom " << a << " axis " << d);
        CHECK(forces[a][d] == Catch::Approx(numeric).margin(1e-4 * (1.0 + std::fabs(numeric))));
      }
  });
}

TEST_CASE("cpu_bonded_energy adds forces and sums energies of its terms in order", "[bonded]") {
  const System s = chain_system();
  const std::vector<Vec3d> x = chain_positions();
  // Two torsions on the same atoms: the list's energy is the sum of each term alone.
  const double both = energy_of(s.torsions, x);
  const double first = energy_of(std::vector<PeriodicTorsionTerm>{s.torsions[0]}, x);
  const double second = energy_of(std::vector<PeriodicTorsionTerm>{s.torsions[1]}, x);
  CHECK(both == first + second);
  // Forces are added, not overwritten.
  std::vector<Vec3d> forces(x.size(), Vec3d(1.0, 2.0, 3.0));
  std::vector<Vec3d> alone(x.size());
  cpu_bonded_energy(s.bonds, x, &forces);
  cpu_bonded_energy(s.bonds, x, &alone);
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
  CHECK(message(s) == "system: bond 1 refers to particle 9, but the system has 4 particles");
  s = chain_system();
  s.angles[0].i = -1;
  CHECK(message(s) == "system: angle 0 refers to particle -1, but the system has 4 particles");
  s = chain_system();
  s.torsions[1].l = 4;
  CHECK(message(s) == "system: torsion 1 refers to particle 4, but the system has 4 particles");
}

TEST_CASE("find_molecules joins atoms along every bonded term type", "[bonded]") {
  System s = chain_system();
  s.mass_amu.push_back(1.0);  // a fifth, unbonded atom
  s.charge_e.push_back(0.0);
  s.sigma_nm.push_back(0.1);
  s.epsilon_kj_per_mol.push_back(0.0);
  s.bonds = {{0, 1, 0.1, 1.0}};     // 0-1
  s.angles = {};                    //
  s.torsions = {{1, 2, 3, 0, 1, 0.0, 1.0}};  // joins 1-2, 2-3, 3-0
  const std::vector<std::vector<int>> molecules = find_molecules(s);
  REQUIRE(molecules.size() == 2);
  CHECK(molecules[0] == std::vector<int>{0, 1, 2, 3});
  CHECK(molecules[1] == std::vector<int>{4});
}
