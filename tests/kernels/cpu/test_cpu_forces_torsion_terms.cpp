// CPU reference platform against OpenMM 7.7's Reference platform for the RB torsion (RBTorsionForce), the
// CHARMM harmonic improper (CustomTorsionForce "k*dtheta^2; dtheta = min(diff, 2*pi-diff); diff =
// abs(theta-theta0)") and CMAP (CMAPTorsionForce, three maps of sizes 24, 24, 10): alanine dipeptide in six
// perturbed configurations (tests/support/torsion_terms_reference.hpp), each term's energy to 1e-9 relative
// and its forces to 1e-9 relative RMS, selected one at a time and all together.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/cpu/cpu_forces.hpp"
#include "support/catch.hpp"
#include "support/torsion_terms_reference.hpp"

using namespace mdsim;
using mdsim_test::Json;

TEST_CASE("RB torsions, harmonic impropers and CMAP match OpenMM", "[cpu][openmm]") {
  const Json& ref = mdsim_test::torsion_terms_reference();
  const System s = mdsim_test::torsion_terms_system(ref);
  REQUIRE(s.rb_torsions.size() == 41);
  REQUIRE(s.impropers.size() == 14);
  REQUIRE(s.cmap_torsions.size() == 4);
  CpuForceEvaluator ev(s);
  double worst_energy = 0.0, worst_forces = 0.0;
  for (size_t c = 0; c < ref["configurations"].size(); ++c) {
    const Json& conf = ref["configurations"][c];
    const std::vector<Vec3d> x = mdsim_test::json_vec3_list(conf["positions"]);
    std::vector<Vec3d> sum_forces(x.size());
    double sum_energy = 0.0;
    for (const auto& kind : mdsim_test::torsion_term_kinds()) {
      INFO("configuration " << c << ", " << kind.name);
      const Json& want = conf["results"][kind.name];
      std::vector<Vec3d> f;
      const EnergyTerms e = ev.compute(x, &f, kind.mask);
      const std::vector<Vec3d> want_f = mdsim_test::json_vec3_list(want["forces"]);
      const double de = mdsim_test::relative_difference(e.*kind.energy, want["energy"].num());
      const double df = mdsim_test::relative_rms_difference(f, want_f);
      std::printf("configuration %zu %-10s energy %.12f (OpenMM %.12f) rel %.1e, forces rel RMS %.1e\n", c, kind.name,
                  e.*kind.energy, want["energy"].num(), de, df);
      CHECK(de < 1e-9);
      CHECK(df < 1e-9);
      CHECK(e.total == e.*kind.energy);
      worst_energy = std::max(worst_energy, de);
      worst_forces = std::max(worst_forces, df);
      sum_energy += want["energy"].num();
      for (size_t i = 0; i < x.size(); ++i) sum_forces[i] += want_f[i];
    }
    std::vector<Vec3d> f;
    const EnergyTerms all = ev.compute(x, &f);
    CHECK(all.total == Catch::Approx(sum_energy).epsilon(1e-9));
    CHECK(all.torsion == 0.0);
    CHECK(mdsim_test::relative_rms_difference(f, sum_forces) < 1e-9);
  }
  std::printf("worst: energy rel %.1e, forces rel RMS %.1e\n", worst_energy, worst_forces);
}
