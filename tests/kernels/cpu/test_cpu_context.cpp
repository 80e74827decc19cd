// The CPU Context (kernels/cpu/cpu_context): reproducibility (same seed, same trajectory), bit-exact
// continuation from (positions, velocities, box, step, time, barostat state), seed choice, degrees
// of freedom, initial velocities, the second-order accuracy of the Verlet (leapfrog) integrator with
// its on-step kinetic energy, constraint satisfaction, and the input errors it reports.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_context.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "platform/barostat.hpp"
#include "platform/context.hpp"
#include "platform/velocities.hpp"
#include "support/catch.hpp"
#include "support/dynamics_settings.hpp"
#include "support/reference_systems.hpp"
#include "support/thrown.hpp"
#include "support/vectors.hpp"

using namespace mdsim;
using mdsim::test::system_model;
using mdsim_test::bitwise_equal;
using mdsim_test::langevin;

namespace {

StateRequest everything() { return StateRequest{true, true, true, true}; }

}  // namespace

TEST_CASE("same seed gives the same Langevin trajectory; another seed a different one") {
  const Model m = system_model("ala2_vacuum", "  constraints: hbonds\n");
  auto run = [&](std::uint64_t seed) {
    auto ctx = make_cpu_context(m.system, langevin(seed));
    ctx->set_positions(m.positions_nm);
    ctx->apply_constraints(1e-6);
    ctx->set_velocities_to_temperature(300.0, 0);
    ctx->step(300);
    return ctx->state(everything());
  };
  const SimulationState a = run(2024), b = run(2024), c = run(2025);
  CHECK(a.step == 300);
  CHECK(a.time_ps == Catch::Approx(0.6));
  CHECK(bitwise_equal(a.positions_nm, b.positions_nm));
  CHECK(bitwise_equal(a.velocities_nm_per_ps, b.velocities_nm_per_ps));
  CHECK_FALSE(bitwise_equal(a.positions_nm, c.positions_nm));
}

TEST_CASE("a run continued from a saved state reproduces the uninterrupted run bit for bit") {
  SECTION("LangevinMiddle, peptide in vacuum, hbonds") {
    const Model m = system_model("ala2_vacuum", "  constraints: hbonds\n");
    const DynamicsSettings settings = langevin(77);
    auto a = make_cpu_context(m.system, settings);
    a->set_positions(m.positions_nm);
    a->apply_constraints(1e-6);
    a->set_velocities_to_temperature(300.0, 0);
    a->step(150);
    const SimulationState mid = a->state(everything());
    a->step(150);
    const SimulationState end_a = a->state(everything());

    auto b = make_cpu_context(m.system, settings);
    b->set_positions(mid.positions_nm);
    b->set_velocities(mid.velocities_nm_per_ps);
    b->set_step(mid.step, mid.time_ps);
    b->step(150);
    const SimulationState end_b = b->state(everything());
    CHECK(end_b.step == end_a.step);
    CHECK(end_b.time_ps == end_a.time_ps);
    CHECK(bitwise_equal(end_a.positions_nm, end_b.positions_nm));
    CHECK(bitwise_equal(end_a.velocities_nm_per_ps, end_b.velocities_nm_per_ps));
    CHECK(end_a.potential.total == end_b.potential.total);
  }
  SECTION("LangevinMiddle with Monte Carlo barostat, water box, SETTLE + CCMA") {
    const Model m = system_model("ala2_water", "  constraints: hbonds\n  rigid_water: true\n");
    DynamicsSettings settings = langevin(99);
    settings.barostat = BarostatConfig{1.0, 300.0, 5};
    auto a = make_cpu_context(m.system, settings);
    a->set_positions(m.positions_nm);
    a->apply_constraints(1e-6);
    a->set_velocities_to_temperature(300.0, 0);
    a->step(20);
    const SimulationState mid = a->state(everything());
    const std::vector<double> baro_mid = a->barostat_state();
    a->step(20);
    const SimulationState end_a = a->state(everything());
    REQUIRE(baro_mid.size() == 5);
    CHECK(baro_mid[3] == 3.0);  // moves before integrating steps 6, 11, 16 (after 5, 10, 15 completed)
    CHECK(a->barostat_state()[3] == 7.0);
    CHECK(end_a.box.volume() != m.system.box->volume());  // some move was accepted

    auto b = make_cpu_context(m.system, settings);
    b->set_box(mid.box);
    b->set_positions(mid.positions_nm);
    b->set_velocities(mid.velocities_nm_per_ps);
    b->set_step(mid.step, mid.time_ps);
    b->set_barostat_state(baro_mid);
    b->step(20);
    const SimulationState end_b = b->state(everything());
    CHECK(bitwise_equal(end_a.positions_nm, end_b.positions_nm));
    CHECK(bitwise_equal(end_a.velocities_nm_per_ps, end_b.velocities_nm_per_ps));
    CHECK(std::memcmp(&end_a.box, &end_b.box, sizeof(Boxd)) == 0);
    CHECK(a->barostat_state() == b->barostat_state());
  }
}

TEST_CASE("the centre-of-mass motion is removed at the steps remove_cm_motion_interval divides, as OpenMM's") {
  // OpenMM's CMMotionRemover of frequency k removes the motion before each step whose step count is a multiple of
  // k. The context with interval 3 against one that removes nothing, its motion removed by hand at those steps:
  // the same trajectory bit for bit, for both integrators; and not that of removal at every step.
  const Model m = system_model("ala2_vacuum", "  constraints: hbonds\n");
  for (const IntegratorType type : {IntegratorType::LangevinMiddle, IntegratorType::Verlet}) {
    INFO(to_string(type));
    DynamicsSettings every = langevin(5);
    every.integrator.type = type;
    DynamicsSettings third = every, none = every;
    third.remove_cm_motion_interval = 3;
    none.remove_cm_motion = false;
    CHECK(third.removes_cm_motion_at(6));
    CHECK_FALSE(third.removes_cm_motion_at(7));
    CHECK_FALSE(none.removes_cm_motion_at(0));
    auto a = make_cpu_context(m.system, third), b = make_cpu_context(m.system, none),
         c = make_cpu_context(m.system, every);
    a->set_positions(m.positions_nm);
    a->apply_constraints(1e-6);
    a->set_velocities_to_temperature(300.0, 9);
    const SimulationState start = a->state(StateRequest{true, true, false, false});
    for (Context* ctx : {b.get(), c.get()}) {
      ctx->set_positions(start.positions_nm);
      ctx->set_velocities(start.velocities_nm_per_ps);
    }
    a->step(10);
    c->step(10);
    for (int step = 0; step < 10; ++step) {
      if (step % 3 == 0) {
        std::vector<Vec3d> v = b->state(StateRequest{false, true, false, false}).velocities_nm_per_ps;
        std::vector<double> inverse_mass(m.system.mass_amu.size());
        for (std::size_t i = 0; i < inverse_mass.size(); ++i)
          inverse_mass[i] = m.system.mass_amu[i] > 0.0 ? 1.0 / m.system.mass_amu[i] : 0.0;
        remove_com_velocity(v, m.system.mass_amu, inverse_mass);
        b->set_velocities(v);
      }
      b->step(1);
    }
    const SimulationState sa = a->state(everything()), sb = b->state(everything()), sc = c->state(everything());
    CHECK(bitwise_equal(sa.positions_nm, sb.positions_nm));
    CHECK(bitwise_equal(sa.velocities_nm_per_ps, sb.velocities_nm_per_ps));
    CHECK_FALSE(bitwise_equal(sa.velocities_nm_per_ps, sc.velocities_nm_per_ps));
    CHECK(sa.degrees_of_freedom == sc.degrees_of_freedom);  // 3 removed all the same, as OpenMM
  }
  DynamicsSettings bad = langevin(5);
  bad.remove_cm_motion_interval = 0;
  CHECK(mdsim_test::input_error_of([&] { make_cpu_context(m.system, bad); }) ==
        "remove_cm_motion_interval must be a positive number of steps, got 0");
}

TEST_CASE("seed 0 chooses a nonzero seed and reports it") {
  const Model m = system_model("ala2_vacuum", "  constraints: none\n");
  auto a = make_cpu_context(m.system, langevin(0));
  auto b = make_cpu_context(m.system, langevin(0));
  CHECK(a->seed() != 0);
  CHECK(b->seed() != 0);
  CHECK(a->seed() != b->seed());
  // Running with the reported seed repeats the run.
  auto c = make_cpu_context(m.system, langevin(a->seed()));
  for (auto* ctx : {a.get(), c.get()}) {
    ctx->set_positions(m.positions_nm);
    ctx->set_velocities_to_temperature(300.0, 0);
    ctx->step(20);
  }
  CHECK(bitwise_equal(a->state({}).positions_nm, c->state({}).positions_nm));
}

TEST_CASE("degrees of freedom and initial velocities") {
  const Model m = system_model("ala2_water", "  constraints: hbonds\n  rigid_water: true\n");
  REQUIRE(m.system.constraints.size() == 2259);  // shared/reference/ala2_water.json counts
  CHECK(degrees_of_freedom(m.system, false) == 4548);  // ala2_water.dynamics.json (no COM remover)
  CHECK(degrees_of_freedom(m.system, true) == 4545);
  auto ctx = make_cpu_context(m.system, langevin(5));
  ctx->set_positions(m.positions_nm);
  ctx->apply_constraints(1e-6);
  ctx->set_velocities_to_temperature(300.0, 0);
  const SimulationState st = ctx->state(everything());
  CHECK(st.degrees_of_freedom == 4545);
  // Maxwell-Boltzmann over 4545 dof: T has a relative spread sqrt(2/4545) = 2.1%.
  INFO("initial temperature " << st.temperature_k << " K");
  CHECK(std::fabs(st.temperature_k - 300.0) < 5 * 300.0 * std::sqrt(2.0 / 4545));
  Vec3d momentum(0, 0, 0);
  for (std::size_t i = 0; i < st.velocities_nm_per_ps.size(); ++i)
    momentum += st.velocities_nm_per_ps[i] * m.system.mass_amu[i];
  CHECK(norm(momentum) < 1e-9);
  // Velocities satisfy the constraints.
  double worst = 0.0;
  for (const auto& c : m.system.constraints) {
    const Vec3d r = st.positions_nm[c.i] - st.positions_nm[c.j];
    worst = std::max(worst, std::fabs(dot(st.velocities_nm_per_ps[c.i] - st.velocities_nm_per_ps[c.j], r)) / norm2(r));
  }
  CHECK(worst <= 1e-6);
  // Forces and energies of state() are the evaluator's.
  std::vector<Vec3d> f;
  const EnergyTerms e = cpu_compute(m.system, st.positions_nm, &f);
  CHECK(st.potential.total == Catch::Approx(e.total).epsilon(1e-12));
  double df = 0;
  for (std::size_t i = 0; i < f.size(); ++i) df = std::max(df, norm(f[i] - st.forces_kj_per_mol_nm[i]));
  CHECK(df < 1e-9);
}

TEST_CASE("Verlet (leapfrog) conserves energy to second order in the time step") {
  // Peptide in vacuum (smooth NoCutoff energy), hbonds. The total energy with the on-step kinetic
  // energy (v + dt/2 F/m, constrained) fluctuates as O(dt^2): halving dt must divide the
  // fluctuation by ~4. A first-order error (e.g. half-step velocities used as they are) gives ~2.
  const Model m = system_model("ala2_vacuum", "  constraints: hbonds\n");
  auto thermalised = [&] {
    auto ctx = make_cpu_context(m.system, langevin(11, 0.001));
    ctx->set_positions(m.positions_nm);
    ctx->apply_constraints(1e-10);
    ctx->minimize(50.0, 200);
    ctx->set_velocities_to_temperature(300.0, 0);
    ctx->step(500);
    return ctx->state(everything());
  }();
  auto fluctuation = [&](double dt, int steps, int every) {
    DynamicsSettings s;
    s.integrator.type = IntegratorType::Verlet;
    s.integrator.timestep_ps = dt;
    s.integrator.constraint_tolerance = 1e-10;
    auto ctx = make_cpu_context(m.system, s);
    ctx->set_positions(thermalised.positions_nm);
    ctx->set_velocities(thermalised.velocities_nm_per_ps);
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int i = 0; i < steps / every; ++i) {
      ctx->step(every);
      const SimulationState st = ctx->state(StateRequest{true, false, false, true});
      const double e = st.potential.total + st.kinetic_kj_per_mol;
      sum += e;
      sum2 += e * e;
      ++n;
    }
    return std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
  };
  const double coarse = fluctuation(0.001, 2000, 4);  // 2 ps
  const double fine = fluctuation(0.0005, 4000, 8);   // the same 2 ps
  INFO("total-energy fluctuation: dt 1 fs " << coarse << " kJ/mol, dt 0.5 fs " << fine << " kJ/mol, ratio "
                                             << coarse / fine);
  CHECK(coarse < 0.5);
  CHECK(coarse / fine > 3.0);
  CHECK(coarse / fine < 5.5);
}

TEST_CASE("constraints hold after every step and after apply_constraints") {
  const Model m = system_model("ala2_vacuum", "  constraints: allbonds\n");
  CpuConstraints check(m.system, m.system.mass_amu);
  for (IntegratorType type : {IntegratorType::LangevinMiddle, IntegratorType::Verlet}) {
    DynamicsSettings s = langevin(3, 0.002);
    s.integrator.type = type;
    s.integrator.constraint_tolerance = 1e-5;
    auto ctx = make_cpu_context(m.system, s);
    ctx->set_positions(m.positions_nm);
    ctx->apply_constraints(1e-5);
    CHECK(check.max_relative_deviation(ctx->state({}).positions_nm) <= 1e-5);
    ctx->set_velocities_to_temperature(300.0, 0);
    double worst = 0.0;
    for (int i = 0; i < 200; ++i) {
      ctx->step(1);
      worst = std::max(worst, check.max_relative_deviation(ctx->state({}).positions_nm));
    }
    INFO(to_string(type) << ": largest relative constraint deviation over 200 steps " << worst);
    CHECK(worst <= 1e-5);
  }
}

TEST_CASE("context input errors") {
  const Model m = system_model("ala2_vacuum", "  constraints: hbonds\n");
  DynamicsSettings bad = langevin(1);
  bad.integrator.timestep_ps = 0.0;
  REQUIRE_THROWS_AS(make_cpu_context(m.system, bad), InputError);
  bad = langevin(1);
  bad.integrator.friction_per_ps = -1.0;
  REQUIRE_THROWS_AS(make_cpu_context(m.system, bad), InputError);
  bad = langevin(1);
  bad.integrator.constraint_tolerance = 0.0;
  REQUIRE_THROWS_AS(make_cpu_context(m.system, bad), InputError);
  bad = langevin(1);
  bad.barostat = BarostatConfig{};
  REQUIRE_THROWS_AS(make_cpu_context(m.system, bad), InputError);
  CHECK(mdsim_test::message_of([&] { make_cpu_context(m.system, bad); }).find("periodic box") != std::string::npos);

  auto ctx = make_cpu_context(m.system, langevin(1));
  REQUIRE_THROWS_AS(ctx->step(1), RuntimeError);  // no positions yet
  REQUIRE_THROWS_WITH(ctx->set_positions(std::vector<Vec3d>(5)), "positions: 5 given, but the system has 22 particles");
  REQUIRE_THROWS_AS(ctx->set_box(Boxd{}), InputError);  // not periodic
  REQUIRE_THROWS_AS(ctx->set_barostat_state({1.0, 2.0}), InputError);
  CHECK(ctx->barostat_state().empty());

  // Non-finite input is refused; a blown-up state is reported, not propagated silently.
  std::vector<Vec3d> broken = m.positions_nm;
  broken[3].x = std::nan("");
  REQUIRE_THROWS_WITH(ctx->set_positions(broken), "positions: particle 3 has a non-finite coordinate");
  std::vector<Vec3d> overlapping = m.positions_nm;
  overlapping[21] = overlapping[0];  // two non-bonded atoms on top of each other: infinite forces
  ctx->set_positions(overlapping);
  REQUIRE_THROWS_WITH(ctx->step(1), "the simulation became unstable at step 1: an atom's position is not finite or "
                                    "more than 1e6 nm from the origin; a smaller time step or an energy minimisation "
                                    "first may help");
}

TEST_CASE("a barostat state from a checkpoint is checked before its counts are converted") {
  System s;
  s.mass_amu = {16.0, 1.0};
  s.charge_e = {0.0, 0.0};
  s.sigma_nm = {0.3, 0.1};
  s.epsilon_kj_per_mol = {0.5, 0.0};
  s.bonds.push_back({0, 1, 0.1, 1000.0});
  Boxd box{};
  box.a = Vec3d(3, 0, 0), box.b = Vec3d(0, 3, 0), box.c = Vec3d(0, 0, 3);
  s.box = box;
  s.nonbonded.method = NonbondedMethod::PME;
  MonteCarloBarostat barostat(s, BarostatConfig{});
  barostat.set_state({0.01, 3, 1, 1000, 400});
  CHECK(barostat.state() == std::vector<double>{0.01, 3, 1, 1000, 400});
  const std::vector<std::vector<double>> bad = {
      {0.01, 1e300, 0, 0, 0},        // attempts beyond int
      {0.01, 3, 4, 10, 1},           // more acceptances than attempts
      {0.01, 3, 1, 1e20, 1},         // total beyond 2^53
      {0.01, 3, 1, 10, 11},          // more total acceptances than attempts
      {0.01, 2.5, 1, 10, 1},         // not a whole count
      {std::nan(""), 3, 1, 10, 1},   // move size not finite
      {0.01, std::nan(""), 1, 10, 1},
  };
  for (const std::vector<double>& state : bad) {
    INFO(state[0] << " " << state[1] << " " << state[2] << " " << state[3] << " " << state[4]);
    REQUIRE_THROWS_AS(barostat.set_state(state), InputError);
  }
  CHECK(barostat.state() == std::vector<double>{0.01, 3, 1, 1000, 400});  // unchanged by the refusals
}

TEST_CASE("an atom flung to huge but finite coordinates in a periodic box ends in a clear error, not a crash") {
  // ala2_water with PME: one water oxygen given a velocity so large (1e10, 1e30, 1e300 nm/ps) that its next
  // position is ~1e7, ~1e27 or ~1e297 nm away. Neither the cell list nor PME may turn such a coordinate into an
  // out-of-range index (the ASan/UBSan build runs this too); the run stops with the instability error.
  const Model m = system_model("ala2_water", "  cutoff: 1.0 nm\n  constraints: none\n  rigid_water: false\n");
  for (const double speed : {1e10, 1e30, 1e300}) {
    INFO(speed);
    auto ctx = make_cpu_context(m.system, langevin(5));
    ctx->set_positions(m.positions_nm);
    std::vector<Vec3d> v(m.positions_nm.size(), Vec3d(0, 0, 0));
    v[40] = Vec3d(speed, -speed, speed);
    ctx->set_velocities(v);
    std::string message;
    try {
      ctx->step(20);
    } catch (const RuntimeError& e) {
      message = e.what();
    }
    CHECK(message.find("the simulation became unstable at step") != std::string::npos);
  }
}
