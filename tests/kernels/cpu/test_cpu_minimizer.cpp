// L-BFGS minimiser (kernels/cpu/cpu_minimizer): exact minimum of a tiny analytic system, constrained
// minimisation of alanine dipeptide to a small force tolerance (stationarity checked independently by
// finite differences along constraint-preserving directions), the iteration limit, input errors.
#include <cmath>
#include <random>
#include <string>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cpu/cpu_minimizer.hpp"
#include "platform/context.hpp"
#include "support/catch.hpp"
#include "support/reference_systems.hpp"

using namespace mdsim;
using mdsim::test::vacuum_model;

namespace {

// Three particles, bonds 0-1 and 1-2 and an angle at 1; no nonbonded interactions.
System bent_molecule() {
  System s;
  s.mass_amu = {12.0, 14.0, 16.0};
  s.charge_e = {0, 0, 0};
  s.sigma_nm = {0.3, 0.3, 0.3};
  s.epsilon_kj_per_mol = {0, 0, 0};
  s.bonds = {{0, 1, 0.15, 2.0e5}, {1, 2, 0.13, 3.0e5}};
  s.angles = {{0, 1, 2, 1.9, 400.0}};
  s.exceptions = {{0, 1, 0, 1, 0}, {1, 2, 0, 1, 0}, {0, 2, 0, 1, 0}};
  s.nonbonded.method = NonbondedMethod::NoCutoff;
  return s;
}

}  // namespace

TEST_CASE("minimiser finds the exact minimum of a small bonded molecule") {
  const System s = bent_molecule();
  CpuForceEvaluator evaluator(s);
  CpuConstraints constraints(s, s.mass_amu);
  std::vector<Vec3d> x{{0.0, 0.0, 0.0}, {0.17, 0.02, 0.01}, {0.25, 0.12, -0.03}};
  const MinimizationResult r = cpu_minimize(evaluator, s, constraints, x, 1e-4, 0, 1e-6);
  INFO("E " << r.initial_energy << " -> " << r.final_energy << " in " << r.iterations << " iterations, max force "
            << r.max_force_kj_per_mol_nm);
  CHECK(r.converged);
  CHECK(r.max_force_kj_per_mol_nm < 1e-4);
  CHECK(r.final_energy < 1e-9);
  CHECK(norm(x[1] - x[0]) == Catch::Approx(0.15).epsilon(1e-8));
  CHECK(norm(x[2] - x[1]) == Catch::Approx(0.13).epsilon(1e-8));
  const double cos_angle = dot(x[0] - x[1], x[2] - x[1]) / (norm(x[0] - x[1]) * norm(x[2] - x[1]));
  CHECK(std::acos(cos_angle) == Catch::Approx(1.9).epsilon(1e-7));
}

TEST_CASE("minimiser holds constraints: a constrained bond keeps its length, the rest relaxes") {
  System s = bent_molecule();
  s.bonds.erase(s.bonds.begin());        // 0-1 becomes a constraint of a different length
  s.constraints = {{0, 1, 0.11}};
  CpuForceEvaluator evaluator(s);
  CpuConstraints constraints(s, s.mass_amu);
  std::vector<Vec3d> x{{0.0, 0.0, 0.0}, {0.17, 0.02, 0.01}, {0.25, 0.12, -0.03}};
  const MinimizationResult r = cpu_minimize(evaluator, s, constraints, x, 1e-4, 0, 1e-8);
  CHECK(r.converged);
  CHECK(norm(x[1] - x[0]) == Catch::Approx(0.11).epsilon(1e-8));
  CHECK(norm(x[2] - x[1]) == Catch::Approx(0.13).epsilon(1e-8));
  const double cos_angle = dot(x[0] - x[1], x[2] - x[1]) / (norm(x[0] - x[1]) * norm(x[2] - x[1]));
  CHECK(std::acos(cos_angle) == Catch::Approx(1.9).epsilon(1e-7));
  CHECK(r.final_energy < 1e-9);
}

TEST_CASE("constrained minimisation of alanine dipeptide reaches a stationary point") {
  const Model m = vacuum_model("hbonds");
  const double tolerance = 0.5;  // kJ/mol/nm
  DynamicsSettings settings;
  settings.integrator.constraint_tolerance = 1e-8;
  auto ctx = make_cpu_context(m.system, settings);
  ctx->set_positions(m.positions_nm);
  const MinimizationResult r = ctx->minimize(tolerance, 0);
  INFO("E " << r.initial_energy << " -> " << r.final_energy << " kJ/mol in " << r.iterations
            << " iterations, max force " << r.max_force_kj_per_mol_nm);
  CHECK(r.converged);
  CHECK(r.max_force_kj_per_mol_nm < tolerance);
  CHECK(r.final_energy < r.initial_energy);
  const SimulationState st = ctx->state(StateRequest{true, false, true, true});
  CHECK(st.potential.total == Catch::Approx(r.final_energy).epsilon(1e-12));
  CpuConstraints check(m.system, m.system.mass_amu);
  CHECK(check.max_relative_deviation(st.positions_nm) <= 1e-8);

  // Independent stationarity check: along random directions kept on the constraint surface, the
  // central finite difference of the energy is bounded by the force tolerance.
  std::mt19937_64 rng(1);
  std::normal_distribution<double> n(0.0, 1.0);
  const double h = 1e-5;
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<Vec3d> d(st.positions_nm.size());
    for (auto& v : d) v = Vec3d(n(rng), n(rng), n(rng));
    check.apply_velocities(st.positions_nm, d, 1e-12);  // tangent direction
    double dnorm = 0;
    for (auto& v : d) dnorm += norm2(v);
    dnorm = std::sqrt(dnorm);
    auto energy_at = [&](double step) {
      std::vector<Vec3d> x(st.positions_nm.size());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = st.positions_nm[i] + d[i] * (step / dnorm);
      check.apply_positions(st.positions_nm, x, 1e-13);
      return cpu_compute(m.system, x, nullptr).total;
    };
    const double slope = (energy_at(h) - energy_at(-h)) / (2 * h);  // kJ/mol/nm along a unit 3N-vector
    INFO("directional derivative " << slope);
    // |f . d| <= |f| <= sqrt(N) max_i |f_i|
    CHECK(std::fabs(slope) < std::sqrt(22.0) * tolerance);
  }
}

TEST_CASE("minimiser honours max_iterations and rejects bad arguments") {
  const Model m = vacuum_model("hbonds");
  DynamicsSettings settings;
  auto ctx = make_cpu_context(m.system, settings);
  ctx->set_positions(m.positions_nm);
  const MinimizationResult r = ctx->minimize(1e-3, 7);
  CHECK(r.iterations <= 7);
  CHECK_FALSE(r.converged);
  CHECK(r.final_energy < r.initial_energy);
  REQUIRE_THROWS_AS(ctx->minimize(0.0, 0), InputError);
  REQUIRE_THROWS_AS(ctx->minimize(10.0, -1), InputError);
}

TEST_CASE("minimiser: a rigid water crowded by an ion (a failed retraction shrinks the step, not NaN)") {
  // A chloride 0.19 nm from a water oxygen (as an ion placed on a crowded water site by solvation): the
  // first long line-search steps distort the water beyond what the rigid-water retraction restores, which used
  // to end the minimisation with NaN positions.
  const std::string text = std::string("system:\n  structure: ") + MDSIM_SOURCE_DIR +
                           "/tests/data/minimize_water_chloride.pdb\n  nonbonded_method: no_cutoff\n"
                           "  constraints: hbonds\n  rigid_water: true\n";
  const Model m = build_model(parse_config(text, "water_chloride.yaml", "."));
  CpuForceEvaluator evaluator(m.system);
  CpuConstraints constraints(m.system, m.system.mass_amu);
  std::vector<Vec3d> x = m.positions_nm;
  const MinimizationResult r = cpu_minimize(evaluator, m.system, constraints, x, 1.0, 0, 1e-6);
  INFO("E " << r.initial_energy << " -> " << r.final_energy << " in " << r.iterations << " iterations, max force "
            << r.max_force_kj_per_mol_nm);
  CHECK(r.converged);
  CHECK(r.final_energy < -100.0);
  for (const Vec3d& p : x) CHECK(std::isfinite(p.x + p.y + p.z));
  CHECK(norm(x[1] - x[0]) == Catch::Approx(0.09572).epsilon(1e-5));
}
