// CCMA (kernels/cpu/cpu_constraints): positions and velocities converge to the requested relative
// tolerance for hbonds, allbonds and hangles (coupled constraints, triangles) on alanine dipeptide,
// in few iterations thanks to the inverse coupling matrix; inputs it must refuse.
#include <cmath>
#include <random>
#include <string>

#include "common/errors.hpp"
#include "engine/model.hpp"
#include "io/config.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "support/catch.hpp"
#include "support/reference_systems.hpp"

using namespace mdsim;
using mdsim::test::vacuum_model;

namespace {

double max_rate(const System& s, const std::vector<Vec3d>& x, const std::vector<Vec3d>& v) {
  double worst = 0.0;
  for (const auto& c : s.constraints) {
    const Vec3d r = x[static_cast<std::size_t>(c.i)] - x[static_cast<std::size_t>(c.j)];
    const Vec3d dv = v[static_cast<std::size_t>(c.i)] - v[static_cast<std::size_t>(c.j)];
    worst = std::max(worst, std::fabs(dot(dv, r)) / norm2(r));
  }
  return worst;
}

}  // namespace

TEST_CASE("CCMA converges to the tolerance for hbonds, allbonds and hangles") {
  for (const std::string mode : {"hbonds", "allbonds", "hangles"}) {
    const Model model = vacuum_model(mode);
    const System& s = model.system;
    CpuConstraints constraints(s, s.mass_amu);
    INFO(mode << ": " << s.constraints.size() << " constraints");
    REQUIRE(constraints.num_constraints() == static_cast<int>(s.constraints.size()));
    REQUIRE(constraints.plan().num_ccma() > 0);

    // A reference geometry on the constraint surface.
    std::vector<Vec3d> reference = model.positions_nm;
    constraints.apply_positions(model.positions_nm, reference, 1e-12);
    REQUIRE(constraints.last_converged());
    CHECK(constraints.max_relative_deviation(reference) <= 1e-12);

    std::mt19937_64 rng(3);
    std::normal_distribution<double> n(0.0, 1.0);
    for (double tolerance : {1e-4, 1e-6, 1e-10}) {
      // An unconstrained 2 fs step of thermal hydrogens: ~0.005 nm displacements.
      std::vector<Vec3d> x = reference;
      for (auto& p : x) p += Vec3d(n(rng), n(rng), n(rng)) * 0.003;
      const double before = constraints.max_relative_deviation(x);
      constraints.apply_positions(reference, x, tolerance);
      const double after = constraints.max_relative_deviation(x);
      INFO("tolerance " << tolerance << ": deviation " << before << " -> " << after << " in "
                        << constraints.last_iterations() << " iterations");
      CHECK(constraints.last_converged());
      CHECK(after <= tolerance * (1 + 1e-9));
      // The preconditioned iteration converges fast even for the coupled sets.
      CHECK(constraints.last_iterations() <= 40);

      std::vector<Vec3d> v(x.size());
      for (auto& u : v) u = Vec3d(n(rng), n(rng), n(rng)) * 2.0;
      Vec3d momentum_before(0, 0, 0), momentum_after(0, 0, 0);
      for (std::size_t i = 0; i < v.size(); ++i) momentum_before += v[i] * s.mass_amu[i];
      constraints.apply_velocities(x, v, tolerance);
      for (std::size_t i = 0; i < v.size(); ++i) momentum_after += v[i] * s.mass_amu[i];
      CHECK(constraints.last_converged());
      CHECK(max_rate(s, x, v) <= tolerance);
      CHECK(norm(momentum_after - momentum_before) < 1e-9);
    }
  }
}

TEST_CASE("constraint displacements are along the reference bond vectors (SHAKE's equations)") {
  // Two constraints sharing an atom: the solution moves each atom by a combination of the
  // reference bond vectors weighted by its inverse mass, so the mass-weighted displacements of the
  // outer atoms are parallel to their reference bonds.
  System s;
  s.mass_amu = {12.0, 1.0, 16.0};
  s.charge_e = {0, 0, 0};
  s.sigma_nm = {0.3, 0.3, 0.3};
  s.epsilon_kj_per_mol = {0, 0, 0};
  s.constraints = {{0, 1, 0.109}, {0, 2, 0.123}};
  s.angles = {{1, 0, 2, 2.0, 300.0}};
  CpuConstraints c(s, s.mass_amu);
  const std::vector<Vec3d> ref{{0, 0, 0}, {0.109, 0, 0}, {0.123 * std::cos(2.0), 0.123 * std::sin(2.0), 0}};
  std::vector<Vec3d> x{{0.002, -0.001, 0.001}, {0.115, 0.003, -0.002}, {0.123 * std::cos(2.0) - 0.004, 0.123 * std::sin(2.0), 0.003}};
  const std::vector<Vec3d> start = x;
  c.apply_positions(ref, x, 1e-14);
  CHECK(c.max_relative_deviation(x) < 1e-13);
  const Vec3d d1 = x[1] - start[1], d2 = x[2] - start[2];
  CHECK(norm(cross(d1, ref[1] - ref[0])) < 1e-14);
  CHECK(norm(cross(d2, ref[2] - ref[0])) < 1e-14);
  // Momentum conservation of the constraint displacements.
  Vec3d dp(0, 0, 0);
  for (int i = 0; i < 3; ++i) dp += (x[i] - start[i]) * s.mass_amu[i];
  CHECK(norm(dp) < 1e-14);
}

TEST_CASE("constraints refuse massless particles and bad indices") {
  System s;
  s.mass_amu = {12.0, 0.0};
  s.charge_e = {0, 0};
  s.sigma_nm = {0.3, 0.3};
  s.epsilon_kj_per_mol = {0, 0};
  s.constraints = {{0, 1, 0.1}};
  REQUIRE_THROWS_AS(CpuConstraints(s, s.mass_amu), RuntimeError);
  s.mass_amu[1] = 1.0;
  s.constraints = {{0, 5, 0.1}};
  REQUIRE_THROWS_AS(CpuConstraints(s, s.mass_amu), RuntimeError);
  s.constraints = {{0, 1, -0.1}};
  REQUIRE_THROWS_AS(CpuConstraints(s, s.mass_amu), RuntimeError);
}
