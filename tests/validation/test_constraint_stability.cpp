// Validation: constraints after every step, and the 4 fs time step with hydrogen mass
// repartitioning, on ala2_water (PME 1.0 nm, HBonds, rigid water: SETTLE for 749 waters, CCMA for
// the peptide's 12 X-H bonds).
//  - LangevinMiddle 2 fs, tolerance 1e-6: after every one of 250 steps the largest relative
//    deviation of all 2259 constraints is at most the tolerance.
//  - hydrogen_mass 1.5 amu, 4 fs, 3 ps (friction 5/ps so that the bath has re-heated the system
//    after the minimisation's potential-energy drop, which halves the initial 300 K within ~0.1 ps):
//    no NaN, constraints within the tolerance at every sampled step, and the temperature of the
//    last picosecond within 15 K of the 300 K bath (its spread over 4545 dof is 6 K).
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"

using namespace mdsim;

namespace {

Model water_model(const std::string& extra) {
  const std::string dir = MDSIM_TEST_DATA_DIR;
  return build_model(parse_config("system:\n  pdb: " + dir + "/systems/ala2_water.pdb\n"
                                  "  constraints: hbonds\n  rigid_water: true\n" + extra,
                                  "ala2_water.yaml", dir));
}

bool all_finite(const SimulationState& st) {
  for (const auto& v : st.positions_nm)
    if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) return false;
  return std::isfinite(st.potential.total) && std::isfinite(st.kinetic_kj_per_mol);
}

}  // namespace

TEST_CASE("constraints hold to the tolerance after every step (ala2_water, LangevinMiddle 2 fs)") {
  const Model model = water_model("");
  CpuConstraints check(model.system, model.system.mass_amu);
  const DynamicsSettings s = mdsim_test::langevin(8);
  auto ctx = make_cpu_context(model.system, s);
  ctx->set_positions(model.positions_nm);
  ctx->apply_constraints(1e-6);
  ctx->set_velocities_to_temperature(300.0, 0);
  double worst = check.max_relative_deviation(ctx->state({}).positions_nm);
  for (int i = 0; i < 250; ++i) {
    ctx->step(1);
    worst = std::max(worst, check.max_relative_deviation(ctx->state({}).positions_nm));
  }
  std::printf("[figure] ala2_water LangevinMiddle 2 fs, 250 steps: largest relative constraint deviation %.3g "
              "(tolerance 1e-6)\n", worst);
  CHECK(worst <= 1e-6);
}

TEST_CASE("4 fs with hydrogen mass repartitioning (1.5 amu) is stable on ala2_water") {
  const Model model = water_model("  hydrogen_mass: 1.5\n");
  const Model plain = water_model("");
  double total_mass = 0, plain_mass = 0;
  int heavier = 0;
  for (std::size_t i = 0; i < model.system.mass_amu.size(); ++i) {
    total_mass += model.system.mass_amu[i];
    plain_mass += plain.system.mass_amu[i];
    if (model.system.mass_amu[i] == 1.5) ++heavier;
  }
  CHECK(total_mass == Catch::Approx(plain_mass).epsilon(1e-12));  // repartitioning keeps the total
  CHECK(heavier == 12);                                            // the peptide's hydrogens (not water's)
  CpuConstraints check(model.system, model.system.mass_amu);
  DynamicsSettings s;
  s.integrator.timestep_ps = 0.004;
  s.integrator.friction_per_ps = 5.0;
  s.integrator.seed = 44;
  auto ctx = make_cpu_context(model.system, s);
  ctx->set_positions(model.positions_nm);
  ctx->minimize(10.0, 100);
  ctx->set_velocities_to_temperature(300.0, 0);
  double worst = 0, t_sum = 0;
  int t_count = 0;
  bool finite = true;
  for (int i = 0; i < 75; ++i) {  // 750 steps = 3 ps
    ctx->step(10);
    const SimulationState st = ctx->state(StateRequest{true, false, false, true});
    finite = finite && all_finite(st);
    if (!finite) break;
    worst = std::max(worst, check.max_relative_deviation(st.positions_nm));
    if (i >= 50) {
      t_sum += st.temperature_k;
      ++t_count;
    }
  }
  REQUIRE(finite);
  const double mean_t = t_sum / t_count;
  std::printf("[figure] ala2_water HMR 1.5 amu, 4 fs, 3 ps: mean T (last ps) %.1f K, largest relative constraint "
              "deviation %.3g\n", mean_t, worst);
  CHECK(worst <= 1e-6);
  CHECK(std::fabs(mean_t - 300.0) < 15.0);
}
