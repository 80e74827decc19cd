// model/system_copies' repeat_system on a System with virtual sites, rigid waters, constraints and exceptions (the
// TIP4P-Ew case): every list has each copy's entries shifted onto the copy's particles, the per-particle arrays
// repeat, and the settings and box are the System's.
#include <cstddef>

#include "model/system_copies.hpp"
#include "support/catch.hpp"
#include "support/tip4pew_case.hpp"

using namespace mdsim;

TEST_CASE("repeat_system shifts every list onto each copy's particles", "[model]") {
  System one = mdsim_test::tip4pew_system();
  REQUIRE(!one.virtual_sites.empty());
  REQUIRE(!one.exceptions.empty());
  // A rigid water and its constraints, as a config with rigid_water would add (the serialized System is flexible).
  const RigidWater& first = one.rigid_waters.emplace_back(RigidWater{one.virtual_sites[0].parents[0],
                                                                      one.virtual_sites[0].parents[1],
                                                                      one.virtual_sites[0].parents[2], 0.09572, 0.15139});
  one.constraints.push_back({first.oxygen, first.hydrogen1, 0.09572});
  one.constraints.push_back({first.oxygen, first.hydrogen2, 0.09572});
  const int n = one.num_particles();
  const System three = repeat_system(one, 3);
  REQUIRE(three.num_particles() == 3 * n);
  CHECK(three.charge_e[2 * static_cast<std::size_t>(n) + 5] == one.charge_e[5]);
  CHECK(three.mass_amu.back() == one.mass_amu.back());
  REQUIRE(three.exceptions.size() == 3 * one.exceptions.size());
  REQUIRE(three.constraints.size() == 3 * one.constraints.size());
  REQUIRE(three.rigid_waters.size() == 3 * one.rigid_waters.size());
  REQUIRE(three.virtual_sites.size() == 3 * one.virtual_sites.size());
  REQUIRE(three.bonds.size() == 3 * one.bonds.size());
  const std::size_t e = one.exceptions.size(), c = one.constraints.size(), w = one.rigid_waters.size();
  const std::size_t v = one.virtual_sites.size();
  CHECK(three.exceptions[2 * e].i == one.exceptions[0].i + 2 * n);
  CHECK(three.exceptions[2 * e].j == one.exceptions[0].j + 2 * n);
  CHECK(three.exceptions[e].charge_product_e2 == one.exceptions[0].charge_product_e2);
  CHECK(three.constraints[c + 1].i == one.constraints[1].i + n);
  CHECK(three.constraints[c + 1].distance_nm == one.constraints[1].distance_nm);
  CHECK(three.rigid_waters[2 * w].oxygen == one.rigid_waters[0].oxygen + 2 * n);
  CHECK(three.rigid_waters[2 * w].hydrogen2 == one.rigid_waters[0].hydrogen2 + 2 * n);
  CHECK(three.virtual_sites[v].particle == one.virtual_sites[0].particle + n);
  CHECK(three.virtual_sites[v].parents[1] == one.virtual_sites[0].parents[1] + n);
  CHECK(three.virtual_sites[v].weights == one.virtual_sites[0].weights);
  CHECK(three.bonds[2 * one.bonds.size()].j == one.bonds[0].j + 2 * n);
  CHECK(three.nonbonded.cutoff_nm == one.nonbonded.cutoff_nm);
  REQUIRE(three.box.has_value());
  CHECK(three.box->a.x == one.box->a.x);
  CHECK(repeat_system(one, 1).num_particles() == n);
  CHECK_THROWS(repeat_system(one, 0));
}
