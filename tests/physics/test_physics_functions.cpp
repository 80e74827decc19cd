// physics: every interaction's analytic force against a central finite difference of its
// energy (CMAP's in tests/model/test_cmap.cpp, with its table), plus identities (Ewald split, B-spline partition of unity, switching end points) and the
// PME parameter choice against every OpenMM reference JSON (and its FFT-friendly rounding).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "physics/bonded.hpp"
#include "physics/bspline.hpp"
#include "physics/nonbonded.hpp"
#include "physics/pme_params.hpp"
#include "model/system.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"

using namespace mdsim;
using mdsim_test::Json;

namespace {

constexpr double kPi = 3.14159265358979323846;

Vec3d random_unit(std::mt19937_64& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  Vec3d v(g(rng), g(rng), g(rng));
  return v / norm(v);
}

// Central-difference gradient of f (a function of a list of points) with respect to point a, axis d.
template <typename F>
double numeric_derivative(F&& f, std::vector<Vec3d> pts, size_t a, int d, double h) {
  pts[a][d] += h;
  const double ep = f(pts);
  pts[a][d] -= 2 * h;
  const double em = f(pts);
  return (ep - em) / (2 * h);
}

// Checks forces (= -gradient) of an energy function of n points against finite differences.
template <typename E, typename Fc>
void check_forces(const std::vector<Vec3d>& pts, E&& energy, Fc&& forces, double h = 1e-6, double rel = 1e-6) {
  const std::vector<Vec3d> f = forces(pts);
  double scale = 0.0;
  for (const Vec3d& v : f) scale = std::max(scale, norm(v));
  Vec3d net;
  for (size_t a = 0; a < pts.size(); ++a) {
    net += f[a];
    for (int d = 0; d < 3; ++d) {
      const double fd = -numeric_derivative(energy, pts, a, d, h);
      INFO("point " << a << " axis " << d << " analytic " << f[a][d] << " numeric " << fd);
      CHECK(std::fabs(f[a][d] - fd) <= rel * scale + 1e-9);
    }
  }
  // translation invariance: forces sum to zero
  CHECK(norm(net) <= 1e-10 * (scale + 1.0));
}

// Reference B-spline by its defining recursion (independent of bspline_weights).
double cardinal_bspline(int n, double x) {
  if (n == 2) return (x >= 0.0 && x <= 2.0) ? 1.0 - std::fabs(x - 1.0) : 0.0;
  return (x * cardinal_bspline(n - 1, x) + (n - x) * cardinal_bspline(n - 1, x - 1.0)) / (n - 1);
}

}  // namespace

TEST_CASE("harmonic bond force is minus the gradient of its energy", "[physics]") {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    std::uniform_real_distribution<double> u(-0.3, 0.3);
    std::vector<Vec3d> pts = {Vec3d(u(rng), u(rng), u(rng)), Vec3d(u(rng), u(rng), u(rng))};
    const double r0 = 0.1 + 0.05 * (trial % 3), k = 1e5 + 3e4 * trial;
    auto energy = [&](const std::vector<Vec3d>& p) { return harmonic_bond(p[1] - p[0], r0, k).energy; };
    auto forces = [&](const std::vector<Vec3d>& p) {
      auto r = harmonic_bond(p[1] - p[0], r0, k);
      return std::vector<Vec3d>{r.force_i, r.force_j};
    };
    check_forces(pts, energy, forces);
  }
  // value: stretched by 0.01 nm with k = 2e5 -> 10 kJ/mol
  CHECK(harmonic_bond(Vec3d(0.11, 0, 0), 0.1, 2e5).energy == Catch::Approx(10.0).epsilon(1e-12));
}

TEST_CASE("harmonic angle force is minus the gradient of its energy", "[physics]") {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 30; ++trial) {
    const Vec3d j(0.01 * trial, -0.02, 0.03);
    const Vec3d i = j + random_unit(rng) * 0.1;
    const Vec3d k = j + random_unit(rng) * 0.14;
    const double theta0 = 1.9, kk = 400.0;
    auto energy = [&](const std::vector<Vec3d>& p) { return harmonic_angle(p[0] - p[1], p[2] - p[1], theta0, kk).energy; };
    auto forces = [&](const std::vector<Vec3d>& p) {
      auto r = harmonic_angle(p[0] - p[1], p[2] - p[1], theta0, kk);
      return std::vector<Vec3d>{r.force_i, r.force_j, r.force_k};
    };
    check_forces({i, j, k}, energy, forces);
  }
  // value: a right angle with theta0 = 100 deg
  const double t0 = 100.0 * kPi / 180.0;
  const auto r = harmonic_angle(Vec3d(0.1, 0, 0), Vec3d(0, 0.2, 0), t0, 500.0);
  CHECK(r.energy == Catch::Approx(0.5 * 500.0 * (kPi / 2 - t0) * (kPi / 2 - t0)).epsilon(1e-12));
  // collinear atoms give finite numbers
  const auto lin = harmonic_angle(Vec3d(0.1, 0, 0), Vec3d(-0.1, 0, 0), 1.9, 400.0);
  CHECK(std::isfinite(lin.energy));
  CHECK(std::isfinite(lin.force_i.x));
  CHECK(lin.energy == Catch::Approx(0.5 * 400.0 * (kPi - 1.9) * (kPi - 1.9)).epsilon(1e-12));
}

TEST_CASE("dihedral angle follows the IUPAC/OpenMM sign convention", "[physics]") {
  for (double phi : {-2.5, -1.0, -0.3, 0.0, 0.4, 1.2, 3.0}) {
    // j at the origin, k on +z, i on +x, l rotated by phi about +z
    const Vec3d i(1, 0, 0), j(0, 0, 0), k(0, 0, 1), l(std::cos(phi), std::sin(phi), 1);
    CHECK(dihedral_angle(j - i, k - j, l - k) == Catch::Approx(phi).margin(1e-14));
  }
}

TEST_CASE("periodic torsion force is minus the gradient of its energy", "[physics]") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> ph(-kPi, kPi);
  for (int trial = 0; trial < 40; ++trial) {
    const Vec3d a(0.0, 0.0, 0.0);
    const Vec3d b = a + random_unit(rng) * 0.15;
    const Vec3d c = b + random_unit(rng) * 0.15;
    const Vec3d d = c + random_unit(rng) * 0.15;
    const int n = 1 + trial % 6;
    const double phase = ph(rng), k = 2.0 + trial;
    auto energy = [&](const std::vector<Vec3d>& p) {
      return periodic_torsion(p[1] - p[0], p[2] - p[1], p[3] - p[2], n, phase, k).energy;
    };
    auto forces = [&](const std::vector<Vec3d>& p) {
      auto r = periodic_torsion(p[1] - p[0], p[2] - p[1], p[3] - p[2], n, phase, k);
      return std::vector<Vec3d>{r.force_i, r.force_j, r.force_k, r.force_l};
    };
    check_forces({a, b, c, d}, energy, forces, 1e-7, 1e-6);
    // zero net torque
    const auto r = periodic_torsion(b - a, c - b, d - c, n, phase, k);
    const Vec3d torque = cross(a, r.force_i) + cross(b, r.force_j) + cross(c, r.force_k) + cross(d, r.force_l);
    CHECK(norm(torque) < 1e-9 * (1.0 + norm(r.force_i) + norm(r.force_l)));
  }
  // value: phi = 60 deg, n = 3, phase 0: E = k (1 + cos 180) = 0; n = 1, phase 0.5: k (1 + cos(pi/3 - 0.5))
  const double phi = kPi / 3;
  const Vec3d i(1, 0, 0), j(0, 0, 0), k(0, 0, 1), l(std::cos(phi), std::sin(phi), 1);
  CHECK(periodic_torsion(j - i, k - j, l - k, 3, 0.0, 5.0).energy == Catch::Approx(0.0).margin(1e-12));
  CHECK(periodic_torsion(j - i, k - j, l - k, 1, 0.5, 5.0).energy ==
        Catch::Approx(5.0 * (1.0 + std::cos(phi - 0.5))).epsilon(1e-12));
}

// Four atoms of a random chain (bonds of 0.15 nm), as the torsion tests use them.
std::vector<Vec3d> random_chain(std::mt19937_64& rng) {
  std::vector<Vec3d> p{Vec3d(0.0, 0.0, 0.0)};
  for (int k = 0; k < 3; ++k) p.push_back(p.back() + random_unit(rng) * 0.15);
  return p;
}

TEST_CASE("Ryckaert-Bellemans torsion: OpenMM's energy, forces minus its gradient", "[physics]") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> coefficient(-10.0, 10.0);
  for (int trial = 0; trial < 40; ++trial) {
    const std::vector<Vec3d> p = random_chain(rng);
    double c[6];
    for (double& v : c) v = coefficient(rng);
    auto energy = [&](const std::vector<Vec3d>& q) { return rb_torsion(q[1] - q[0], q[2] - q[1], q[3] - q[2], c).energy; };
    auto forces = [&](const std::vector<Vec3d>& q) {
      auto r = rb_torsion(q[1] - q[0], q[2] - q[1], q[3] - q[2], c);
      return std::vector<Vec3d>{r.force_i, r.force_j, r.force_k, r.force_l};
    };
    check_forces(p, energy, forces, 1e-7, 1e-6);
    // E = sum C_n cos^n(phi - 180 deg), OpenMM's RBTorsionForce.
    const double psi = dihedral_angle(p[1] - p[0], p[2] - p[1], p[3] - p[2]) - kPi;
    double expected = 0.0;
    for (int n = 0; n < 6; ++n) expected += c[n] * std::pow(std::cos(psi), n);
    CHECK(energy(p) == Catch::Approx(expected).epsilon(1e-12).margin(1e-12));
  }
}

TEST_CASE("harmonic improper: k dtheta^2 the short way round, forces minus its gradient", "[physics]") {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> angle(-kPi, kPi);
  int wrapped = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::vector<Vec3d> p = random_chain(rng);
    const double theta0 = angle(rng), k = 50.0 + trial;
    const double theta = dihedral_angle(p[1] - p[0], p[2] - p[1], p[3] - p[2]);
    const double diff = std::fabs(theta - theta0);
    if (std::fabs(diff - kPi) < 1e-3) continue;  // the kink, where the force jumps
    wrapped += diff > kPi ? 1 : 0;
    auto energy = [&](const std::vector<Vec3d>& q) {
      return harmonic_improper(q[1] - q[0], q[2] - q[1], q[3] - q[2], theta0, k).energy;
    };
    auto forces = [&](const std::vector<Vec3d>& q) {
      auto r = harmonic_improper(q[1] - q[0], q[2] - q[1], q[3] - q[2], theta0, k);
      return std::vector<Vec3d>{r.force_i, r.force_j, r.force_k, r.force_l};
    };
    check_forces(p, energy, forces, 1e-7, 1e-6);
    // OpenMM's expression: k*dtheta^2; dtheta = min(diff, 2*pi-diff); diff = abs(theta-theta0) (no 1/2).
    const double dtheta = std::min(diff, 2 * kPi - diff);
    CHECK(energy(p) == Catch::Approx(k * dtheta * dtheta).epsilon(1e-12).margin(1e-12));
  }
  CHECK(wrapped > 5);  // both ways round were tested
  // Values: theta = 170 deg from theta0 = -170 deg is 20 degrees away, and pulled towards theta0 the short way.
  const double theta = 170.0 * kPi / 180.0;
  const Vec3d i(1, 0, 0), j(0, 0, 0), kk(0, 0, 1), l(std::cos(theta), std::sin(theta), 1);
  const auto r = harmonic_improper(j - i, kk - j, l - kk, -170.0 * kPi / 180.0, 100.0);
  CHECK(r.energy == Catch::Approx(100.0 * std::pow(20.0 * kPi / 180.0, 2)).epsilon(1e-12));
  // dE/dtheta < 0 (theta must grow through 180 deg to reach -170): the force on l points along
  // increasing theta, (-sin theta, cos theta, 0).
  CHECK(dot(r.force_l, Vec3d(-std::sin(theta), std::cos(theta), 0.0)) > 0.0);
}

TEST_CASE("RB torsion and harmonic improper in single precision", "[physics]") {
  const Vec3d b1(0.1, 0.02, 0.0), b2(0.0, 0.15, 0.01), b3(0.05, 0.0, 0.1);
  const Vec3f f1(b1), f2(b2), f3(b3);
  const double cd[6] = {9.28, 12.16, -13.12, -3.06, 26.24, -31.5};
  const float cf[6] = {9.28f, 12.16f, -13.12f, -3.06f, 26.24f, -31.5f};
  const auto rd = rb_torsion(b1, b2, b3, cd);
  const auto rf = rb_torsion(f1, f2, f3, cf);
  CHECK(rf.energy == Catch::Approx(rd.energy).epsilon(1e-5));
  CHECK(rf.force_l.x == Catch::Approx(rd.force_l.x).epsilon(1e-4));
  const auto id = harmonic_improper(b1, b2, b3, 2.9, 300.0);
  const auto iff = harmonic_improper(f1, f2, f3, 2.9f, 300.0f);
  CHECK(iff.energy == Catch::Approx(id.energy).epsilon(1e-5));
  CHECK(iff.force_i.y == Catch::Approx(id.force_i.y).epsilon(1e-4));
}

namespace {

// -dE/dr from a PairResult is f_over_r * r; compare with a central difference in r.
template <typename F>
void check_radial(F&& pair, double r, double rel = 1e-7, double h = 0.0) {
  if (h == 0.0) h = 1e-6 * r;
  const double numeric = -(pair(r + h).energy - pair(r - h).energy) / (2 * h);
  const double analytic = pair(r).f_over_r * r;
  INFO("r = " << r << " analytic " << analytic << " numeric " << numeric);
  CHECK(std::fabs(analytic - numeric) <= rel * std::max(1.0, std::fabs(numeric)));
}

}  // namespace

TEST_CASE("pair interactions: radial force matches the energy derivative", "[physics]") {
  const double alpha = 3.12;
  const ReactionField<double> rf = reaction_field_constants(0.9, 78.3);
  for (double r = 0.12; r < 1.2; r += 0.0731) {
    check_radial([](double x) { return lennard_jones(1.0 / (x * x), 0.3, 0.65); }, r);
    check_radial([](double x) { return coulomb_plain(-0.42, 1.0 / x); }, r);
    check_radial([&](double x) { return coulomb_reaction_field(0.37, x, 1.0 / x, rf); }, r);
    check_radial([&](double x) { return coulomb_ewald_direct(0.55, x, 1.0 / x, alpha); }, r);
    check_radial([&](double x) { return ewald_exclusion_correction(0.55, x, alpha); }, r);
    check_radial([](double x) { return exception_pair(0.2, 0.31, 0.4, x); }, r);
    check_radial([](double x) {
      return apply_switch(lennard_jones(1.0 / (x * x), 0.3, 0.65), switching_function(x, 0.7, 1.0), x);
    }, r);
  }
  // exclusion correction near r = 0 (Taylor branch) and across its branch point; E is even in r,
  // so a step larger than r still gives an exact central difference of its quadratic part
  for (double r : {1e-6, 1e-4, 0.5e-2 / alpha, 0.999e-2 / alpha, 1.001e-2 / alpha, 0.02})
    check_radial([&](double x) { return ewald_exclusion_correction(0.55, x, alpha); }, r, 1e-7, 1e-5);
}

TEST_CASE("pair interactions: values and identities", "[physics]") {
  const double alpha = 2.6, qq = -0.3;
  for (double r : {0.05, 0.1, 0.3, 0.9, 1.5}) {
    // erfc + erf = 1: direct-space Ewald minus the exclusion correction is plain Coulomb
    const auto direct = coulomb_ewald_direct(qq, r, 1.0 / r, alpha);
    const auto excl = ewald_exclusion_correction(qq, r, alpha);
    const auto plain = coulomb_plain(qq, 1.0 / r);
    CHECK(direct.energy - excl.energy == Catch::Approx(plain.energy).epsilon(1e-13));
    CHECK(direct.f_over_r - excl.f_over_r == Catch::Approx(plain.f_over_r).epsilon(1e-12));
    CHECK(plain.energy == Catch::Approx(kOneFourPiEps0 * qq / r).epsilon(1e-15));
  }
  // the Taylor branch joins the closed form continuously
  const double xb = 1e-2 / alpha;
  CHECK(ewald_exclusion_correction(qq, xb * (1 - 1e-9), alpha).energy ==
        Catch::Approx(ewald_exclusion_correction(qq, xb * (1 + 1e-9), alpha).energy).epsilon(1e-12));
  CHECK(ewald_exclusion_correction(qq, xb * (1 - 1e-9), alpha).f_over_r ==
        Catch::Approx(ewald_exclusion_correction(qq, xb * (1 + 1e-9), alpha).f_over_r).epsilon(1e-9));
  // r -> 0 limit and the self energy: -K qq 2 alpha/sqrt(pi)
  CHECK(ewald_exclusion_correction(qq, 0.0, alpha).energy == Catch::Approx(-kOneFourPiEps0 * qq * 2 * alpha / std::sqrt(kPi)).epsilon(1e-14));
  CHECK(ewald_self_energy(0.8, alpha) == Catch::Approx(-kOneFourPiEps0 * 0.64 * alpha / std::sqrt(kPi)).epsilon(1e-14));
  // LJ: minimum at 2^(1/6) sigma with depth -epsilon; zero at sigma
  const double rmin = std::pow(2.0, 1.0 / 6.0) * 0.3;
  CHECK(lennard_jones(1.0 / (rmin * rmin), 0.3, 0.7).energy == Catch::Approx(-0.7).epsilon(1e-13));
  CHECK(lennard_jones(1.0 / (rmin * rmin), 0.3, 0.7).f_over_r == Catch::Approx(0.0).margin(1e-10));
  CHECK(lennard_jones(1.0 / (0.3 * 0.3), 0.3, 0.7).energy == Catch::Approx(0.0).margin(1e-13));
  // Lorentz-Berthelot
  CHECK(combine_sigma(0.3, 0.2) == Catch::Approx(0.25));
  CHECK(combine_epsilon(0.4, 0.9) == Catch::Approx(0.6));
  // reaction field: OpenMM's constants; the potential vanishes at the cutoff
  const auto rf = reaction_field_constants(1.0, 78.3);
  CHECK(rf.k_rf == Catch::Approx(77.3 / 157.6).epsilon(1e-14));
  CHECK(rf.c_rf == Catch::Approx(3 * 78.3 / 157.6).epsilon(1e-14));
  CHECK(coulomb_reaction_field(0.5, 1.0, 1.0, rf).energy == Catch::Approx(0.0).margin(1e-12));
  // exception pair: plain Coulomb + LJ of its own parameters
  const auto ex = exception_pair(0.2, 0.31, 0.4, 0.35);
  CHECK(ex.energy == Catch::Approx(coulomb_plain(0.2, 1 / 0.35).energy + lennard_jones(1 / (0.35 * 0.35), 0.31, 0.4).energy).epsilon(1e-14));
}

TEST_CASE("switching function: OpenMM's polynomial, smooth at both ends", "[physics]") {
  const double rs = 0.7, rc = 1.0;
  CHECK(switching_function(0.5, rs, rc).s == 1.0);
  CHECK(switching_function(0.5, rs, rc).ds_dr == 0.0);
  CHECK(switching_function(rs, rs, rc).s == Catch::Approx(1.0));
  CHECK(switching_function(rc, rs, rc).s == Catch::Approx(0.0).margin(1e-15));
  CHECK(switching_function(rc, rs, rc).ds_dr == Catch::Approx(0.0).margin(1e-12));
  for (double r = 0.71; r < 1.0; r += 0.0137) {
    const double t = (r - rs) / (rc - rs);
    CHECK(switching_function(r, rs, rc).s == Catch::Approx(1 - 10 * t * t * t + 15 * t * t * t * t - 6 * std::pow(t, 5)).margin(1e-14));
    const double h = 1e-7;
    const double fd = (switching_function(r + h, rs, rc).s - switching_function(r - h, rs, rc).s) / (2 * h);
    CHECK(switching_function(r, rs, rc).ds_dr == Catch::Approx(fd).epsilon(1e-6).margin(1e-8));
  }
}

TEST_CASE("B-spline weights of order 5: values, partition of unity, derivatives", "[physics]") {
  for (double w = 0.0; w < 1.0; w += 0.0625 + 1e-3) {
    double theta[kPmeOrder], dtheta[kPmeOrder];
    bspline_weights<kPmeOrder, double>(w, theta, dtheta);
    double sum = 0.0, dsum = 0.0;
    for (int k = 0; k < kPmeOrder; ++k) {
      CHECK(theta[k] == Catch::Approx(cardinal_bspline(kPmeOrder, w + kPmeOrder - 1 - k)).margin(1e-15));
      sum += theta[k];
      dsum += dtheta[k];
      const double h = 1e-6;
      const double fd = (cardinal_bspline(kPmeOrder, w + h + kPmeOrder - 1 - k) -
                         cardinal_bspline(kPmeOrder, w - h + kPmeOrder - 1 - k)) / (2 * h);
      CHECK(dtheta[k] == Catch::Approx(fd).margin(1e-8));
    }
    CHECK(sum == Catch::Approx(1.0).epsilon(1e-14));
    CHECK(dsum == Catch::Approx(0.0).margin(1e-14));
  }
  double values[kPmeOrder];
  bspline_integer_values<kPmeOrder, double>(values);
  CHECK(values[0] == Catch::Approx(1.0 / 24));
  CHECK(values[1] == Catch::Approx(11.0 / 24));
  CHECK(values[2] == Catch::Approx(11.0 / 24));
  CHECK(values[3] == Catch::Approx(1.0 / 24));
  CHECK(values[4] == 0.0);
  // order 4 too (the template is generic)
  double t4[4], d4[4];
  bspline_weights<4, double>(0.3, t4, d4);
  for (int k = 0; k < 4; ++k) CHECK(t4[k] == Catch::Approx(cardinal_bspline(4, 0.3 + 3 - k)).margin(1e-15));
}

TEST_CASE("physics functions instantiate in single precision", "[physics]") {
  const auto b = harmonic_bond(Vec3f(0.11f, 0.0f, 0.0f), 0.1f, 2e5f);
  CHECK(b.energy == Catch::Approx(10.0).epsilon(1e-4));
  const auto e = coulomb_ewald_direct(0.5f, 0.4f, 2.5f, 3.0f);
  const auto ed = coulomb_ewald_direct(0.5, 0.4, 2.5, 3.0);
  CHECK(e.energy == Catch::Approx(ed.energy).epsilon(1e-5));
  const auto x = ewald_exclusion_correction(0.5f, 0.1f, 3.0f);
  CHECK(x.energy == Catch::Approx(ewald_exclusion_correction(0.5, 0.1, 3.0).energy).epsilon(1e-5));
  const auto t = periodic_torsion(Vec3f(0.1f, 0.02f, 0.0f), Vec3f(0.0f, 0.15f, 0.01f), Vec3f(0.05f, 0.0f, 0.1f), 2, 0.3f, 4.0f);
  const auto td = periodic_torsion(Vec3d(0.1, 0.02, 0.0), Vec3d(0.0, 0.15, 0.01), Vec3d(0.05, 0.0, 0.1), 2, 0.3, 4.0);
  CHECK(t.energy == Catch::Approx(td.energy).epsilon(1e-5));
  float th[kPmeOrder], dth[kPmeOrder];
  bspline_weights<kPmeOrder, float>(0.25f, th, dth);
  CHECK(th[0] + th[1] + th[2] + th[3] + th[4] == Catch::Approx(1.0).epsilon(1e-6));
}

// nonbonded_pair sums its terms as w = -r dE/dr with one multiply by 1/r^2 and takes 4 eps in the
// per-atom encoding: in double it must equal the separate functions above (which the exceptions and the
// finite-difference checks use), and its float form (A&S erfc, precomputed multiples of alpha) the double
// one to the float step's accuracy.
TEST_CASE("the pair step equals the sum of its terms, in double and in float", "[physics]") {
  const double alpha = 3.12, cutoff = 0.9, r_switch = 0.8, qq = -0.834 * 0.417;
  const PairConstants<double> k{cutoff, r_switch, pmath::scaled_erfc<double>(alpha),
                                reaction_field_constants(cutoff, 78.3)};
  const PairConstants<float> kf = pair_constants_as<float>(k);
  const LjParticle<double> a = lj_particle<double>(0.315, 0.636), b = lj_particle<double>(0.25, 0.2);
  const LjParticle<float> af = lj_particle<float>(0.315, 0.636), bf = lj_particle<float>(0.25, 0.2);
  const double sigma = combine_sigma(0.315, 0.25), eps = combine_epsilon(0.636, 0.2);
  CHECK(a.half_sigma_nm + b.half_sigma_nm == sigma);
  CHECK(a.two_sqrt_epsilon * b.two_sqrt_epsilon == Catch::Approx(4 * eps).epsilon(1e-15));
  auto sum = [](PairResult<double> x, const PairResult<double>& y) { return x += y; };
  int checked = 0;
  for (double r = 0.12; r < cutoff; r += 0.02, ++checked) {
    const double inv_r = 1.0 / r, r2 = r * r;
    const PairResult<double> lj = lennard_jones(inv_r * inv_r, sigma, eps);
    const PairResult<double> lj_switched = apply_switch(lj, switching_function(r, r_switch, cutoff), r);
    const PairResult<double> ewald = coulomb_ewald_direct(qq, r, inv_r, alpha);
    // Tolerances relative to the terms' sizes (the total force crosses zero near the LJ minimum).
    const double e_scale = std::abs(lj.energy) + kOneFourPiEps0 * std::abs(qq) * inv_r;
    const double f_scale = std::abs(lj.f_over_r) + 3 * kOneFourPiEps0 * std::abs(qq) * inv_r * inv_r * inv_r;
    auto same = [&](const PairResult<double>& got, const PairResult<double>& want, double tolerance) {
      CHECK(got.energy == Catch::Approx(want.energy).epsilon(0).margin(tolerance * e_scale));
      CHECK(got.f_over_r == Catch::Approx(want.f_over_r).epsilon(0).margin(tolerance * f_scale));
    };
    const double q_i = -0.834, q_j = 0.417;
    same(nonbonded_pair<double, CoulombMethod::Ewald, false, false>(r2, inv_r, q_i, q_j, a, b, k),
         sum(lj, ewald), 1e-14);
    same(nonbonded_pair<double, CoulombMethod::Ewald, true, false>(r2, inv_r, q_i, q_j, a, b, k),
         sum(lj_switched, ewald), 1e-14);
    same(nonbonded_pair<double, CoulombMethod::ReactionField, false, false>(r2, inv_r, q_i, q_j, a, b, k),
         sum(lj, coulomb_reaction_field(qq, r, inv_r, k.rf)), 1e-14);
    same(nonbonded_pair<double, CoulombMethod::Plain, false, false>(r2, inv_r, q_i, q_j, a, b, k),
         sum(lj, coulomb_plain(qq, inv_r)), 1e-14);
    // SKIP_ZERO: no LJ for epsilon 0, no Coulomb for a zero charge product.
    same(nonbonded_pair<double, CoulombMethod::Ewald, false, true>(r2, inv_r, qq, sigma, 0.0, k), ewald, 1e-14);
    same(nonbonded_pair<double, CoulombMethod::Ewald, false, true>(r2, inv_r, 0.0, sigma, 4 * eps, k), lj, 1e-14);
    // Float, as the CUDA tile kernel calls it (K folded into the charge product); at short range the LJ
    // powers carry a few float ulp (8e-7 of the term at 0.12 nm).
    const float rf = float(r), inv_rf = 1.0f / rf;
    const PairResult<float> pf = nonbonded_pair<float, CoulombMethod::Ewald, false, false, true>(
        rf * rf, inv_rf, float(kOneFourPiEps0) * float(q_i) * float(q_j), af.half_sigma_nm + bf.half_sigma_nm,
        af.two_sqrt_epsilon * bf.two_sqrt_epsilon, kf);
    same({double(pf.energy), double(pf.f_over_r)}, sum(lj, ewald), 2e-6);
  }
  CHECK(checked == 39);
}

TEST_CASE("PME alpha and grid as OpenMM chose them for every reference system", "[physics][pme]") {
  for (const std::string name : {"ala2_water", "villin_water", "dhfr", "dhfr_bench"}) {
    const Json ref = mdsim_test::read_json(std::string(MDSIM_TEST_DATA_DIR) + "/reference/" + name + ".json");
    const Json& box_json = ref["box_nm"];
    Boxd box;
    box.a = Vec3d(box_json[0][0].num(), box_json[0][1].num(), box_json[0][2].num());
    box.b = Vec3d(box_json[1][0].num(), box_json[1][1].num(), box_json[1][2].num());
    box.c = Vec3d(box_json[2][0].num(), box_json[2][1].num(), box_json[2][2].num());
    const double cutoff = ref["settings"]["cutoff_nm"].num();
    const double tol = ref["settings"]["ewald_error_tolerance"].num();
    const PmeParameters p = choose_pme_parameters(box, cutoff, tol);
    INFO(name);
    CHECK(p.alpha_per_nm == Catch::Approx(ref["pme"]["alpha_per_nm"].num()).epsilon(1e-14));
    for (int d = 0; d < 3; ++d) CHECK(p.grid[d] == int(ref["pme"]["grid"][size_t(d)].num()));
    CHECK(int(ref["pme"]["order"].num()) == kPmeOrder);
  }
  // small boxes with a loose tolerance get at least 6 points per axis (ceil would give 3)
  Boxd tiny;
  tiny.a = Vec3d(0.5, 0, 0);
  tiny.b = Vec3d(0, 0.5, 0);
  tiny.c = Vec3d(0, 0, 0.5);
  const PmeParameters p = choose_pme_parameters(tiny, 0.25, 0.1);
  CHECK(std::ceil(2 * p.alpha_per_nm * 0.5 / (3 * std::pow(0.1, 0.2))) == 3.0);
  CHECK(p.grid[0] == 6);
  CHECK(p.grid[2] == 6);
}

TEST_CASE("legal FFT dimensions have only factors 2, 3, 5, 7", "[physics][pme]") {
  CHECK(legal_fft_dimension(26) == 27);
  CHECK(legal_fft_dimension(37) == 40);
  CHECK(legal_fft_dimension(50) == 50);
  CHECK(legal_fft_dimension(11) == 12);
  CHECK(legal_fft_dimension(13) == 14);
  CHECK(legal_fft_dimension(1) == 1);
}

TEST_CASE("FFT-friendly PME grids round each exact size up to a legal FFT size", "[physics][pme]") {
  // 12.4 nm: DHFR's benchmark box replicated twice, whose exact size 111 = 3 * 37 is slow in cuFFT.
  Boxd box;
  box.a = Vec3d(12.4, 0, 0);
  box.b = Vec3d(0, 6.2, 0);
  box.c = Vec3d(0, 0, 3.0);
  const PmeParameters exact = choose_pme_parameters(box, 0.9, 5e-4);
  const PmeParameters exact_explicit = choose_pme_parameters(box, 0.9, 5e-4, PmeGridSizes::Exact);
  const PmeParameters friendly = choose_pme_parameters(box, 0.9, 5e-4, PmeGridSizes::FftFriendly);
  CHECK(exact.grid[0] == 111);
  CHECK(exact.grid[1] == 56);
  CHECK(exact.grid[2] == 27);
  CHECK(friendly.grid[0] == 112);
  CHECK(friendly.grid[1] == 56);  // already legal: unchanged
  CHECK(friendly.grid[2] == 27);
  CHECK(friendly.alpha_per_nm == exact.alpha_per_nm);  // only the grid changes
  for (int d = 0; d < 3; ++d) CHECK(exact_explicit.grid[d] == exact.grid[d]);

  // Over many box edges: the rounded size is legal_fft_dimension of the exact one, never smaller.
  for (double edge = 1.0; edge < 20.0; edge += 0.173) {
    box.a = Vec3d(edge, 0, 0);
    box.b = Vec3d(0, 1.1 * edge, 0);
    box.c = Vec3d(0, 0, 0.9 * edge);
    for (const double tol : {5e-4, 1e-5}) {
      const PmeParameters e = choose_pme_parameters(box, 0.9, tol, PmeGridSizes::Exact);
      const PmeParameters f = choose_pme_parameters(box, 0.9, tol, PmeGridSizes::FftFriendly);
      for (int d = 0; d < 3; ++d) {
        INFO("edge " << edge << " tolerance " << tol << " axis " << d << ": exact " << e.grid[d] << ", rounded " << f.grid[d]);
        CHECK(f.grid[d] == legal_fft_dimension(e.grid[d]));
        CHECK(f.grid[d] >= e.grid[d]);
        int rest = f.grid[d];
        for (int factor : {2, 3, 5, 7})
          while (rest % factor == 0) rest /= factor;
        CHECK(rest == 1);
      }
    }
  }

  // The NonbondedSettings overload follows pme_grid, whose default is Exact.
  box.a = Vec3d(12.4, 0, 0);
  box.b = Vec3d(0, 12.4, 0);
  box.c = Vec3d(0, 0, 12.4);
  NonbondedSettings nb;
  nb.cutoff_nm = 0.9;
  CHECK(nb.pme_grid == PmeGridSizes::Exact);
  CHECK(choose_pme_parameters(box, nb).grid[2] == 111);
  nb.pme_grid = PmeGridSizes::FftFriendly;
  const PmeParameters from_settings = choose_pme_parameters(box, nb);
  for (int d = 0; d < 3; ++d) CHECK(from_settings.grid[d] == 112);
  CHECK(from_settings.alpha_per_nm == choose_pme_parameters(box, 0.9, 5e-4).alpha_per_nm);
}
