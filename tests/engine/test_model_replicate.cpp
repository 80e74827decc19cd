// engine/model's replicate_model with every bonded term type: each copy's terms shifted onto its own atoms,
// the CMAP maps shared (map indices unchanged), and each term's energy the copies' sum; the pair-specific LJ
// table (System::lj_types) shared, each copy's particles keeping their types.
#include <array>
#include <string>
#include <vector>

#include "engine/model.hpp"
#include "io/system_xml.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"
#include "support/system_xml_cases.hpp"
#include "support/torsion_terms_reference.hpp"

using namespace mdsim;

TEST_CASE("replicate_model copies RB torsions, impropers and CMAP torsions with their maps", "[engine]") {
  const mdsim_test::Json& ref = mdsim_test::torsion_terms_reference();
  Model in;
  in.system = mdsim_test::torsion_terms_system(ref);
  in.system.box = Boxd{Vec3d(3.0, 0.0, 0.0), Vec3d(0.0, 3.0, 0.0), Vec3d(0.0, 0.0, 3.0)};
  in.positions_nm = mdsim_test::json_vec3_list(ref["configurations"][0]["positions"]);
  const int n = in.system.num_particles();
  const Model out = replicate_model(in, {2, 1, 1});
  const System& s = out.system;
  REQUIRE(s.num_particles() == 2 * n);
  REQUIRE(s.rb_torsions.size() == 2 * in.system.rb_torsions.size());
  REQUIRE(s.impropers.size() == 2 * in.system.impropers.size());
  REQUIRE(s.cmap_torsions.size() == 2 * in.system.cmap_torsions.size());
  REQUIRE(s.cmap_maps.size() == in.system.cmap_maps.size());
  CHECK(s.cmap_maps[1].energy_kj_per_mol == in.system.cmap_maps[1].energy_kj_per_mol);
  const std::size_t m = in.system.cmap_torsions.size();
  for (std::size_t t = 0; t < m; ++t) {
    CHECK(s.cmap_torsions[m + t].map == in.system.cmap_torsions[t].map);
    for (std::size_t k = 0; k < 8; ++k) CHECK(s.cmap_torsions[m + t].atom[k] == in.system.cmap_torsions[t].atom[k] + n);
  }
  CHECK(s.rb_torsions.back().l == in.system.rb_torsions.back().l + n);
  CHECK(s.impropers.back().i == in.system.impropers.back().i + n);
  const EnergyTerms one = cpu_compute(in.system, in.positions_nm, nullptr);
  const EnergyTerms two = cpu_compute(s, out.positions_nm, nullptr);
  CHECK(two.rb_torsion == Catch::Approx(2 * one.rb_torsion).epsilon(1e-12));
  CHECK(two.improper == Catch::Approx(2 * one.improper).epsilon(1e-12));
  CHECK(two.cmap == Catch::Approx(2 * one.cmap).epsilon(1e-12));
}

TEST_CASE("replicate_model tiles the LJ types (NBFIX) and the Urey-Bradley terms of a CHARMM System", "[engine]") {
  Model in;
  in.system = read_system_xml(mdsim_test::system_xml_data() + "system_xml_charmm_ala3.system.xml.gz").system;
  in.positions_nm = mdsim_test::read_h5_vec3(
      std::string(MDSIM_SOURCE_DIR) + "/tests/data/shared/topologies/reference/charmm_ala3_solv.h5", "positions_nm");
  REQUIRE(in.system.lj_types.has_value());
  REQUIRE(!in.system.urey_bradleys.empty());
  const int n = in.system.num_particles();
  const Model out = replicate_model(in, {2, 1, 1});
  const System& s = out.system;
  REQUIRE(s.num_particles() == 2 * n);
  REQUIRE(s.lj_types.has_value());
  const LjTypeTable& one = *in.system.lj_types;
  const LjTypeTable& two = *s.lj_types;
  CHECK(two.num_types == one.num_types);
  CHECK(two.c12_kj_per_mol_nm12 == one.c12_kj_per_mol_nm12);
  CHECK(two.c6_kj_per_mol_nm6 == one.c6_kj_per_mol_nm6);
  REQUIRE(two.particle_type.size() == static_cast<std::size_t>(2 * n));
  for (std::size_t a = 0; a < static_cast<std::size_t>(n); ++a) {
    CHECK(two.particle_type[a] == one.particle_type[a]);
    CHECK(two.particle_type[a + static_cast<std::size_t>(n)] == one.particle_type[a]);
  }
  REQUIRE(s.urey_bradleys.size() == 2 * in.system.urey_bradleys.size());
  CHECK(s.urey_bradleys.back().k == in.system.urey_bradleys.back().k + n);
  CHECK(s.bonds.size() == 2 * in.system.bonds.size());
  // The real-space pairs (through the table; alpha depends on the cutoff only) and the bonded terms of two copies
  // side by side in the doubled box: twice one copy's.
  const unsigned terms = kTermBonded | kTermNonbondedDirect;
  const EnergyTerms e1 = cpu_compute_terms(in.system, in.positions_nm, nullptr, terms);
  const EnergyTerms e2 = cpu_compute_terms(s, out.positions_nm, nullptr, terms);
  CHECK(e1.urey_bradley > 0.0);
  CHECK(e2.urey_bradley == Catch::Approx(2 * e1.urey_bradley).epsilon(1e-12));
  CHECK(e2.bond == Catch::Approx(2 * e1.bond).epsilon(1e-12));
  CHECK(e2.nonbonded_direct == Catch::Approx(2 * e1.nonbonded_direct).epsilon(1e-10));
}
