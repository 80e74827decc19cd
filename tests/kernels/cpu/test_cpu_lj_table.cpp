// Pair-specific LJ (System::lj_types) on the CPU platform against OpenMM 7.7's Reference platform
// (tests/data/make_lj_table_reference.py): five particles of two types, the 0-1 type pair off the combining rule,
// CutoffPeriodic 1.2 nm with switching from 0.9 nm (pairs below, inside and beyond the switching region), one
// exception with its own sigma/epsilon, and the long-range (dispersion) correction over type pairs with the
// switching integrals. OpenMM integrates that correction numerically (midpoint rule to 1e-5 relative change); mdsim
// exactly (Gauss-Legendre): they agree to 1e-6 relative. Also the table path against the combining-rule path when
// the table holds the combining rule's values.
#include <cmath>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/dispersion_correction.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"

using namespace mdsim;
using mdsim_test::Json;

namespace {

// The System of make_lj_table_reference.py, built by hand: the same types, table, exception and settings.
System tiny_table_system() {
  const double sigma[2] = {0.30, 0.35}, epsilon[2] = {0.50, 0.80}, off_sigma = 0.31, off_epsilon = 1.50;
  const int types[5] = {0, 1, 1, 0, 0};
  System s;
  LjTypeTable t;
  t.num_types = 2;
  for (int j = 0; j < 2; ++j)  // [i + 2 j] as OpenMM's Discrete2DFunction; symmetric
    for (int i = 0; i < 2; ++i) {
      const double sg = i == j ? sigma[i] : off_sigma, ep = i == j ? epsilon[i] : off_epsilon;
      t.c12_kj_per_mol_nm12.push_back(4 * ep * std::pow(sg, 12));
      t.c6_kj_per_mol_nm6.push_back(4 * ep * std::pow(sg, 6));
    }
  for (const int type : types) {
    s.mass_amu.push_back(12.0);
    s.charge_e.push_back(0.0);
    s.sigma_nm.push_back(0.3);
    s.epsilon_kj_per_mol.push_back(0.0);
    t.particle_type.push_back(type);
  }
  s.lj_types = t;
  s.exceptions.push_back({0, 1, 0.0, 0.25, 0.3});
  s.nonbonded.method = NonbondedMethod::CutoffPeriodic;
  s.nonbonded.cutoff_nm = 1.2;
  s.nonbonded.switch_distance_nm = 0.9;
  s.nonbonded.dispersion_correction = true;
  s.box = Boxd{Vec3d(3, 0, 0), Vec3d(0, 3, 0), Vec3d(0, 0, 3)};
  return s;
}

Json reference() { return mdsim_test::read_json(std::string(MDSIM_SOURCE_DIR) + "/tests/data/lj_table_reference.json"); }

}  // namespace

TEST_CASE("pair-specific LJ from a type table matches OpenMM, with switching and long-range correction", "[cpu]") {
  const Json ref = reference();
  const Json& e = ref["energies_kj_per_mol"];
  const System s = tiny_table_system();
  const std::vector<Vec3d> x = mdsim_test::json_vec3_list(ref["positions_nm"]);
  std::vector<Vec3d> forces;
  const EnergyTerms t = cpu_compute(s, x, &forces);
  const double lrc = e["long_range_correction"].num();
  INFO("dispersion correction: mdsim " << t.dispersion_correction << ", OpenMM " << lrc);
  CHECK(lrc != 0.0);
  CHECK(mdsim_test::relative_difference(t.dispersion_correction, lrc) <= 1e-6);
  // The pairs (table + exception) without the correction: exact in both, so 1e-10.
  const double pairs = e["custom_nonbonded"].num() - lrc + e["nonbonded"].num();
  INFO("pairs: mdsim " << t.nonbonded_direct - t.dispersion_correction << ", OpenMM " << pairs);
  CHECK(mdsim_test::relative_difference(t.nonbonded_direct - t.dispersion_correction, pairs) <= 1e-10);
  const double rms = mdsim_test::relative_rms_difference(forces, mdsim_test::json_vec3_list(ref["forces_kj_per_mol_nm"]));
  INFO("forces: relative RMS difference " << rms);
  CHECK(rms <= 1e-10);
}

TEST_CASE("a type table holding the combining rule's values gives the combining rule's energy and forces", "[cpu]") {
  System s = tiny_table_system();
  const double sigma[2] = {0.30, 0.35}, epsilon[2] = {0.50, 0.80};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const double sg = 0.5 * (sigma[i] + sigma[j]), ep = std::sqrt(epsilon[i] * epsilon[j]);
      s.lj_types->c12_kj_per_mol_nm12[std::size_t(i + 2 * j)] = 4 * ep * std::pow(sg, 12);
      s.lj_types->c6_kj_per_mol_nm6[std::size_t(i + 2 * j)] = 4 * ep * std::pow(sg, 6);
    }
  System rule = s;
  rule.lj_types.reset();
  for (int i = 0; i < rule.num_particles(); ++i) {
    const int type = s.lj_types->particle_type[std::size_t(i)];
    rule.sigma_nm[std::size_t(i)] = sigma[type];
    rule.epsilon_kj_per_mol[std::size_t(i)] = epsilon[type];
  }
  const std::vector<Vec3d> x = mdsim_test::json_vec3_list(reference()["positions_nm"]);
  std::vector<Vec3d> f_table, f_rule;
  const EnergyTerms a = cpu_compute(s, x, &f_table), b = cpu_compute(rule, x, &f_rule);
  CHECK(a.nonbonded_direct != 0.0);
  CHECK(mdsim_test::relative_difference(a.nonbonded_direct - a.dispersion_correction,
                                        b.nonbonded_direct - b.dispersion_correction) <= 1e-12);
  CHECK(mdsim_test::relative_difference(a.dispersion_correction, b.dispersion_correction) <= 1e-10);
  CHECK(mdsim_test::relative_rms_difference(f_table, f_rule) <= 1e-12);
}

TEST_CASE("a bad type table is refused before any evaluation", "[cpu]") {
  System s = tiny_table_system();
  s.lj_types->particle_type[2] = 2;
  CHECK_THROWS_AS(CpuForceEvaluator(s), RuntimeError);
  s = tiny_table_system();
  s.lj_types->c6_kj_per_mol_nm6[1] *= 2.0;  // (1, 0) no longer equals (0, 1)
  CHECK_THROWS_AS(CpuForceEvaluator(s), RuntimeError);
}
