// CPU PME: the 3-D FFT against a plain DFT, the B-spline moduli, PME reciprocal energies and forces
// against an explicit Ewald k-sum (orthorhombic and triclinic boxes) and against finite differences.
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_pme.hpp"
#include "kernels/cpu/fft3d.hpp"
#include "physics/bspline.hpp"
#include "physics/nonbonded.hpp"
#include "physics/pme_params.hpp"
#include "support/catch.hpp"
#include "support/reference_data.hpp"

using namespace mdsim;

namespace {

constexpr double kPi = 3.14159265358979323846;

struct Charges {
  std::vector<Vec3d> x;
  std::vector<double> q;
};

// Random neutral charges spread over (and a little beyond) the box.
Charges random_charges(int n, const Boxd& box, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.1, 1.1), uq(-1.0, 1.0);
  Charges c;
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    c.x.push_back(box.a * u(rng) + box.b * u(rng) + box.c * u(rng));
    c.q.push_back(uq(rng));
    total += c.q.back();
  }
  for (double& q : c.q) q -= total / n;
  return c;
}

Boxd ortho_box() {
  Boxd b;
  b.a = Vec3d(2.2, 0, 0);
  b.b = Vec3d(0, 2.4, 0);
  b.c = Vec3d(0, 0, 2.6);
  return b;
}

Boxd triclinic_box() {
  Boxd b;
  b.a = Vec3d(2.4, 0, 0);
  b.b = Vec3d(0.7, 2.3, 0);
  b.c = Vec3d(-0.9, 0.6, 2.2);
  return b;
}

// Largest |k| per axis so that the omitted Gaussian factors are below 1e-18.
void kmax_for(const Boxd& box, double alpha, int kmax[3]) {
  const double m_max = alpha * std::sqrt(-std::log(1e-18)) / kPi;  // exp(-pi^2 m^2/alpha^2) = 1e-18
  // |k_d| <= m_max * (length of box vector d) covers the sphere |m| <= m_max
  kmax[0] = int(std::ceil(m_max * norm(box.a)));
  kmax[1] = int(std::ceil(m_max * norm(box.b)));
  kmax[2] = int(std::ceil(m_max * norm(box.c)));
}

}  // namespace

TEST_CASE("3-D FFT equals a plain DFT in both directions", "[cpu][pme]") {
  const int n0 = 6, n1 = 7, n2 = 5;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::complex<double>> data(n0 * n1 * n2);
  for (auto& v : data) v = {u(rng), u(rng)};
  for (int sign : {-1, 1}) {
    std::vector<std::complex<double>> expect(data.size());
    for (int k0 = 0; k0 < n0; ++k0)
      for (int k1 = 0; k1 < n1; ++k1)
        for (int k2 = 0; k2 < n2; ++k2) {
          std::complex<double> s = 0;
          for (int x0 = 0; x0 < n0; ++x0)
            for (int x1 = 0; x1 < n1; ++x1)
              for (int x2 = 0; x2 < n2; ++x2) {
                const double arg = sign * 2 * kPi * (double(k0 * x0) / n0 + double(k1 * x1) / n1 + double(k2 * x2) / n2);
                s += data[(x0 * n1 + x1) * n2 + x2] * std::complex<double>(std::cos(arg), std::sin(arg));
              }
          expect[(k0 * n1 + k1) * n2 + k2] = s;
        }
    std::vector<std::complex<double>> got = data;
    Fft3d fft(n0, n1, n2);
    if (sign < 0)
      fft.forward(got.data());
    else
      fft.backward(got.data());
    double err = 0;
    for (size_t i = 0; i < got.size(); ++i) err = std::max(err, std::abs(got[i] - expect[i]));
    CHECK(err < 1e-12);
  }
}

TEST_CASE("B-spline moduli are |DFT of the spline values|^2, with zeros patched as OpenMM", "[cpu][pme]") {
  for (int n : {20, 21, 27, 37}) {
    CpuPme pme(n, 6, 7, 3.0);
    const std::vector<double>& mod = pme.bspline_moduli(0);
    REQUIRE(mod.size() == size_t(n));
    const double v[4] = {1.0 / 24, 11.0 / 24, 11.0 / 24, 1.0 / 24};
    for (int m = 0; m < n; ++m) {
      std::complex<double> s = 0;
      for (int j = 0; j < 4; ++j) s += v[j] * std::polar(1.0, 2 * kPi * m * j / n);
      if (n % 2 == 0 && m == n / 2) {
        // order 5 spline values alternate to zero at the Nyquist frequency; OpenMM takes the mean
        CHECK(std::norm(s) < 1e-20);
        CHECK(mod[size_t(m)] == Catch::Approx(0.5 * (mod[size_t(m - 1)] + mod[size_t(m + 1)])).epsilon(1e-14));
      } else {
        CHECK(mod[size_t(m)] == Catch::Approx(std::norm(s)).epsilon(1e-13));
      }
    }
    CHECK(mod[0] == Catch::Approx(1.0).epsilon(1e-15));
  }
}

TEST_CASE("PME reciprocal energy and forces agree with the explicit Ewald sum", "[cpu][pme]") {
  for (int tric = 0; tric < 2; ++tric) {
    const Boxd box = tric ? triclinic_box() : ortho_box();
    const Charges c = random_charges(60, box, 11 + tric);
    for (double tol : {5e-4, 1e-5}) {
      const double cutoff = 0.9;
      const PmeParameters p = choose_pme_parameters(box, cutoff, tol);
      CpuPme pme(p.grid[0], p.grid[1], p.grid[2], p.alpha_per_nm);
      std::vector<Vec3d> f_pme(c.x.size()), f_ewald(c.x.size());
      const double e_pme = pme.compute(c.x, c.q, box, &f_pme);
      int kmax[3];
      kmax_for(box, p.alpha_per_nm, kmax);
      const double e_ewald = ewald_reciprocal_direct(c.x, c.q, box, p.alpha_per_nm, kmax, &f_ewald);
      const double rel_e = std::fabs(e_pme - e_ewald) / std::fabs(e_ewald);
      const double rel_f = mdsim_test::relative_rms_difference(f_pme, f_ewald);
      CAPTURE(tric, tol, rel_e, rel_f);
      INFO("triclinic " << tric << " tol " << tol << " grid " << p.grid[0] << "x" << p.grid[1] << "x" << p.grid[2]
                        << " rel energy error " << rel_e << " rel force error " << rel_f);
      // OpenMM's tolerance bounds the relative force error; the energy is far more accurate.
      CHECK(rel_f < tol);
      CHECK(rel_e < tol);
      CHECK(rel_f > 0.0);  // a genuinely different method
    }
  }
}

TEST_CASE("explicit Ewald sum: forces are minus its gradient; PME: likewise", "[cpu][pme]") {
  const Boxd box = triclinic_box();
  const Charges c = random_charges(8, box, 3);
  const PmeParameters p = choose_pme_parameters(box, 0.9, 5e-4);
  int kmax[3];
  kmax_for(box, p.alpha_per_nm, kmax);
  CpuPme pme(p.grid[0], p.grid[1], p.grid[2], p.alpha_per_nm);
  std::vector<Vec3d> fe(c.x.size()), fp(c.x.size());
  ewald_reciprocal_direct(c.x, c.q, box, p.alpha_per_nm, kmax, &fe);
  pme.compute(c.x, c.q, box, &fp);
  const double h = 1e-6;
  double scale_e = 0, scale_p = 0;
  for (size_t i = 0; i < c.x.size(); ++i) {
    scale_e = std::max(scale_e, norm(fe[i]));
    scale_p = std::max(scale_p, norm(fp[i]));
  }
  for (size_t i = 0; i < c.x.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      std::vector<Vec3d> xp = c.x, xm = c.x;
      xp[i][d] += h;
      xm[i][d] -= h;
      const double fd_e = -(ewald_reciprocal_direct(xp, c.q, box, p.alpha_per_nm, kmax, nullptr) -
                            ewald_reciprocal_direct(xm, c.q, box, p.alpha_per_nm, kmax, nullptr)) / (2 * h);
      const double fd_p = -(pme.compute(xp, c.q, box, nullptr) - pme.compute(xm, c.q, box, nullptr)) / (2 * h);
      CHECK(std::fabs(fe[i][d] - fd_e) < 1e-6 * scale_e);
      CHECK(std::fabs(fp[i][d] - fd_p) < 1e-6 * scale_p);
    }
}

TEST_CASE("Ewald sum of a neutral pair: plain Coulomb plus the tin-foil dipole term", "[cpu][pme]") {
  // Two opposite charges 0.3 nm apart in a large cubic box: real space + reciprocal + self give
  // -K q^2/r plus the interaction of the dipole p with its periodic images under tin-foil boundary
  // conditions, -K 2 pi p^2/(3 V) for a cubic lattice, up to higher multipoles (~ (r/L)^2 smaller).
  Boxd box;
  box.a = Vec3d(6.0, 0, 0);
  box.b = Vec3d(0, 6.0, 0);
  box.c = Vec3d(0, 0, 6.0);
  const std::vector<Vec3d> x = {Vec3d(1.0, 1.0, 1.0), Vec3d(1.3, 1.0, 1.0)};
  const std::vector<double> q = {0.5, -0.5};
  const double alpha = 3.0;
  int kmax[3];
  kmax_for(box, alpha, kmax);
  const double recip = ewald_reciprocal_direct(x, q, box, alpha, kmax, nullptr);
  const double real = coulomb_ewald_direct(-0.25, 0.3, 1 / 0.3, alpha).energy;
  const double self = ewald_self_energy(0.5, alpha) + ewald_self_energy(-0.5, alpha);
  const double p = 0.5 * 0.3, volume = 216.0;
  const double expected = -kOneFourPiEps0 * 0.25 / 0.3 - kOneFourPiEps0 * 2 * kPi * p * p / (3 * volume);
  CHECK(real + recip + self == Catch::Approx(expected).margin(2e-4));
}

TEST_CASE("grid_position: every index on the grid, also for a non-finite coordinate (a blown-up simulation)",
          "[cpu][pme]") {
  int i0 = -1;
  double w = -1.0;
  grid_position(2.25, 8, i0, w);  // 0.25 of the way: 2.0 grid points
  CHECK(i0 == 2);
  CHECK(w == 0.0);
  grid_position(-0.30, 10, i0, w);  // wraps to 0.70
  CHECK(i0 == 7);
  CHECK(std::fabs(w) < 1e-9);
  for (const double s : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                         1e300}) {
    grid_position(s, 27, i0, w);
    INFO("s = " << s);
    CHECK(i0 >= 0);
    CHECK(i0 < 27);
  }
  // PME of charges with one NaN position: a NaN energy, every grid access in bounds (the sanitizer build checks).
  const Boxd box = ortho_box();
  Charges c = random_charges(20, box, 3);
  c.x[4] = Vec3d(std::nan(""), 0.1, 0.2);
  const PmeParameters p = choose_pme_parameters(box, 0.9, 5e-4);
  CpuPme pme(p.grid[0], p.grid[1], p.grid[2], p.alpha_per_nm);
  std::vector<Vec3d> f(c.x.size());
  CHECK_FALSE(std::isfinite(pme.compute(c.x, c.q, box, &f)));
}
