// engine/model's replicate_model with every bonded term type: each copy's terms shifted onto its own atoms,
// the CMAP maps shared (map indices unchanged), and each term's energy the copies' sum.
#include <array>
#include <vector>

#include "engine/model.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "support/catch.hpp"
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
