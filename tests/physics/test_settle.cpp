// SETTLE (physics/settle.hpp): exact rigid-water geometry after the position step, zero
// bond-direction relative velocities after the velocity step, momentum and centre of mass kept, and
// agreement with the independent iterative solver (CCMA in CpuConstraints, run to 1e-13) on the
// same three distance constraints.
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_constraints.hpp"
#include "physics/settle.hpp"
#include "model/system.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

constexpr double kOH = 0.09572, kAngle = 104.52 * 3.14159265358979323846 / 180.0;
const double kHH = 2.0 * kOH * std::sin(0.5 * kAngle);
constexpr double kMassO = 15.99943, kMassH = 1.007947;

// A rigid TIP3P water at `origin` in a random orientation.
std::vector<Vec3d> random_water(std::mt19937_64& rng, const Vec3d& origin) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vec3d u(n(rng), n(rng), n(rng));
  u = u / norm(u);
  Vec3d w(n(rng), n(rng), n(rng));
  w = w - u * dot(w, u);
  w = w / norm(w);
  const Vec3d h1 = origin + u * kOH;
  const Vec3d h2 = origin + (u * std::cos(kAngle) + w * std::sin(kAngle)) * kOH;
  return {origin, h1, h2};
}

System water_system(int waters, bool rigid, double mass_h2 = kMassH) {
  System s;
  for (int k = 0; k < waters; ++k) {
    const int o = 3 * k;
    for (double m : {kMassO, kMassH, mass_h2}) {
      s.mass_amu.push_back(m);
      s.charge_e.push_back(0.0);
      s.sigma_nm.push_back(0.3);
      s.epsilon_kj_per_mol.push_back(0.0);
    }
    s.constraints.push_back({o, o + 1, kOH});
    s.constraints.push_back({o, o + 2, kOH});
    s.constraints.push_back({o + 1, o + 2, kHH});
    if (rigid) s.rigid_waters.push_back({o, o + 1, o + 2, kOH, kHH});
  }
  s.nonbonded.method = NonbondedMethod::NoCutoff;
  return s;
}

Vec3d centre_of_mass(const std::vector<Vec3d>& x, const std::vector<double>& m) {
  Vec3d c(0, 0, 0);
  double total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    c += x[i] * m[i];
    total += m[i];
  }
  return c / total;
}

}  // namespace

TEST_CASE("SETTLE positions restore the rigid geometry exactly and match the iterative solution") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n(0.0, 1.0);
  const int waters = 50;
  std::vector<Vec3d> reference, moved;
  for (int k = 0; k < waters; ++k) {
    const auto w = random_water(rng, Vec3d(0.3 * k, 0.1 * (k % 7), -0.2 * (k % 3)));
    reference.insert(reference.end(), w.begin(), w.end());
  }
  // Unconstrained step: displacements of up to ~0.01 nm (velocities of several nm/ps over 2 fs).
  for (const Vec3d& r : reference) moved.push_back(r + Vec3d(n(rng), n(rng), n(rng)) * 0.004);

  const System rigid = water_system(waters, true);
  const System general = water_system(waters, false);
  std::vector<Vec3d> settled = moved;
  for (int k = 0; k < waters; ++k)
    settle_positions(reference[3 * k], reference[3 * k + 1], reference[3 * k + 2], settled[3 * k], settled[3 * k + 1],
                     settled[3 * k + 2], kMassO, kMassH, kOH, kHH);

  double worst = 0.0;
  for (int k = 0; k < waters; ++k) {
    const Vec3d& o = settled[3 * k];
    const Vec3d& h1 = settled[3 * k + 1];
    const Vec3d& h2 = settled[3 * k + 2];
    worst = std::max({worst, std::fabs(norm(h1 - o) - kOH) / kOH, std::fabs(norm(h2 - o) - kOH) / kOH,
                      std::fabs(norm(h2 - h1) - kHH) / kHH});
  }
  INFO("largest relative deviation after SETTLE " << worst);
  CHECK(worst < 1e-12);

  // Centre of mass of each water unchanged by the constraint displacements.
  for (int k = 0; k < waters; ++k) {
    const std::vector<Vec3d> before(moved.begin() + 3 * k, moved.begin() + 3 * k + 3);
    const std::vector<Vec3d> after(settled.begin() + 3 * k, settled.begin() + 3 * k + 3);
    const std::vector<double> m{kMassO, kMassH, kMassH};
    CHECK(norm(centre_of_mass(before, m) - centre_of_mass(after, m)) < 1e-14);
  }

  // The CpuConstraints dispatcher uses SETTLE for the flagged waters ...
  CpuConstraints with_settle(rigid, rigid.mass_amu);
  CHECK(with_settle.plan().num_settle() == waters);
  CHECK(with_settle.plan().num_ccma() == 0);
  std::vector<Vec3d> via_dispatcher = moved;
  with_settle.apply_positions(reference, via_dispatcher, 1e-6);
  for (std::size_t i = 0; i < moved.size(); ++i) CHECK(norm(via_dispatcher[i] - settled[i]) == 0.0);

  // ... and the same constraints solved iteratively (CCMA, no rigid-water flag) converge to the same
  // positions: SETTLE is the exact solution of the SHAKE/CCMA equations.
  CpuConstraints iterative(general, general.mass_amu);
  CHECK(iterative.plan().num_settle() == 0);
  CHECK(iterative.plan().num_ccma() == 3 * waters);
  std::vector<Vec3d> ccma = moved;
  iterative.apply_positions(reference, ccma, 1e-13);
  CHECK(iterative.last_converged());
  double largest_difference = 0.0;
  for (std::size_t i = 0; i < moved.size(); ++i) largest_difference = std::max(largest_difference, norm(ccma[i] - settled[i]));
  INFO("largest SETTLE - CCMA position difference (nm) " << largest_difference << " after " << iterative.last_iterations()
                                                          << " CCMA iterations");
  CHECK(largest_difference < 1e-11);
}

TEST_CASE("SETTLE velocities remove bond-direction relative motion, keep momentum, match CCMA") {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n(0.0, 1.0);
  const int waters = 40;
  for (double mass_h2 : {kMassH, 2.5}) {  // unequal hydrogen masses too (the velocity part allows any)
    INFO("second hydrogen mass " << mass_h2);
    std::vector<Vec3d> x, v;
    for (int k = 0; k < waters; ++k) {
      const auto w = random_water(rng, Vec3d(0.4 * k, 0.0, 0.1 * (k % 5)));
      x.insert(x.end(), w.begin(), w.end());
      for (int a = 0; a < 3; ++a) v.push_back(Vec3d(n(rng), n(rng), n(rng)) * 1.5);
    }
    const System general = water_system(waters, false, mass_h2);
    std::vector<Vec3d> settled = v;
    for (int k = 0; k < waters; ++k)
      settle_velocities(x[3 * k], x[3 * k + 1], x[3 * k + 2], settled[3 * k], settled[3 * k + 1], settled[3 * k + 2],
                        1.0 / kMassO, 1.0 / kMassH, 1.0 / mass_h2);
    double worst_rate = 0.0;
    for (int k = 0; k < waters; ++k) {
      const int o = 3 * k;
      const int pairs[3][2] = {{o, o + 1}, {o, o + 2}, {o + 1, o + 2}};
      for (const auto& p : pairs) {
        const Vec3d r = x[p[1]] - x[p[0]];
        worst_rate = std::max(worst_rate, std::fabs(dot(settled[p[1]] - settled[p[0]], r)) / norm2(r));
      }
      Vec3d p_before(0, 0, 0), p_after(0, 0, 0);
      const double m[3] = {kMassO, kMassH, mass_h2};
      for (int a = 0; a < 3; ++a) {
        p_before += v[o + a] * m[a];
        p_after += settled[o + a] * m[a];
      }
      CHECK(norm(p_after - p_before) < 1e-12);
    }
    INFO("largest |v_ij . r_ij| / r^2 after SETTLE (1/ps) " << worst_rate);
    CHECK(worst_rate < 1e-12);

    CpuConstraints iterative(general, general.mass_amu);
    std::vector<Vec3d> ccma = v;
    iterative.apply_velocities(x, ccma, 1e-14);
    CHECK(iterative.last_converged());
    double largest_difference = 0.0;
    for (std::size_t i = 0; i < v.size(); ++i) largest_difference = std::max(largest_difference, norm(ccma[i] - settled[i]));
    INFO("largest SETTLE - CCMA velocity difference (nm/ps) " << largest_difference);
    CHECK(largest_difference < 1e-11);
  }
}

TEST_CASE("waters with unequal hydrogen masses fall back to CCMA") {
  const System s = [] {
    System w = water_system(2, true);
    w.mass_amu[2] = 2.0;  // first water's second hydrogen heavier
    return w;
  }();
  CpuConstraints c(s, s.mass_amu);
  CHECK(c.plan().num_settle() == 1);
  CHECK(c.plan().num_ccma() == 3);
}
