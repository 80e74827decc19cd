// model/cmap: CMAP's patch table (make_cmap_table) and the bicubic evaluation over it (physics/cmap.hpp,
// evaluate_bonded for CmapTorsionTerm): the periodic spline slopes against OpenMM's formulation (second
// derivatives from the cyclic system, solved densely here), the interpolant through every grid value with the
// spline slopes as its gradient there, continuity across cells and the angle wrap, forces of a CMAP torsion
// against a central finite difference of its energy, and the float evaluation against the double one.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/errors.hpp"
#include "model/cmap.hpp"
#include "physics/bonded.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

constexpr double kPi = 3.14159265358979323846;

// A size x size grid with a smooth periodic surface plus deterministic noise (kJ/mol).
CmapMap test_map(int size) {
  CmapMap map;
  map.size = size;
  std::mt19937_64 rng(static_cast<unsigned>(size));
  std::uniform_real_distribution<double> noise(-1.0, 1.0);
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < size; ++i) {
      const double phi = 2 * kPi * i / size, psi = 2 * kPi * j / size;
      map.energy_kj_per_mol.push_back(3.0 * std::cos(phi - 0.3) + 2.0 * std::sin(2 * psi + 0.5) +
                                      1.5 * std::cos(phi + psi) + noise(rng));
    }
  return map;
}

// OpenMM's formulation of the same slopes: the periodic spline's second derivatives m from
// m[k-1] + 4 m[k] + m[k+1] = 6 (y[k+1] - 2 y[k] + y[k-1]) / h^2, solved here by dense Gaussian elimination,
// then slope[k] = (y[k+1] - y[k]) / h - h (2 m[k] + m[k+1]) / 6.
std::vector<double> slopes_from_second_derivatives(const std::vector<double>& y) {
  const int n = static_cast<int>(y.size());
  const double h = 2 * kPi / n;
  std::vector<std::vector<double>> a(n, std::vector<double>(n + 1, 0.0));
  for (int k = 0; k < n; ++k) {
    a[k][k] += 4.0;
    a[k][(k + 1) % n] += 1.0;
    a[k][(k + n - 1) % n] += 1.0;
    a[k][n] = 6.0 * (y[(k + 1) % n] - 2 * y[k] + y[(k + n - 1) % n]) / (h * h);
  }
  for (int c = 0; c < n; ++c)  // diagonally dominant: no pivoting needed
    for (int r = 0; r < n; ++r)
      if (r != c) {
        const double f = a[r][c] / a[c][c];
        for (int k = c; k <= n; ++k) a[r][k] -= f * a[c][k];
      }
  std::vector<double> m(n), slope(n);
  for (int k = 0; k < n; ++k) m[k] = a[k][n] / a[k][k];
  for (int k = 0; k < n; ++k) slope[k] = (y[(k + 1) % n] - y[k]) / h - h * (2 * m[k] + m[(k + 1) % n]) / 6.0;
  return slope;
}

struct Table {
  explicit Table(const std::vector<CmapMap>& maps) : table(make_cmap_table(maps)), views(table.views(table.coefficients.data())) {}
  CmapTable table;
  std::vector<CmapMapView<double>> views;
};

}  // namespace

TEST_CASE("periodic spline slopes equal OpenMM's second-derivative formulation", "[cmap]") {
  for (int n : {2, 3, 5, 10, 24, 36}) {
    INFO("n = " << n);
    std::vector<double> y;
    std::mt19937_64 rng(static_cast<unsigned>(n));
    std::uniform_real_distribution<double> u(-5.0, 5.0);
    for (int k = 0; k < n; ++k) y.push_back(u(rng));
    const std::vector<double> mine = periodic_spline_slopes(y);
    const std::vector<double> theirs = slopes_from_second_derivatives(y);
    for (int k = 0; k < n; ++k) CHECK(mine[k] == Catch::Approx(theirs[k]).margin(1e-12 * (1.0 + std::fabs(theirs[k]))));
  }
  // A smooth function: the slopes converge to its derivative.
  std::vector<double> y;
  for (int k = 0; k < 24; ++k) y.push_back(std::sin(2 * kPi * k / 24 + 0.4));
  const std::vector<double> s = periodic_spline_slopes(y);
  for (int k = 0; k < 24; ++k) CHECK(s[k] == Catch::Approx(std::cos(2 * kPi * k / 24 + 0.4)).margin(1e-4));
  CHECK_THROWS_AS(periodic_spline_slopes({1.0}), RuntimeError);
}

TEST_CASE("the bicubic patches pass through the grid with the spline slopes and join smoothly", "[cmap]") {
  for (int size : {24, 10, 3, 2}) {
    INFO("size " << size);
    const CmapMap map = test_map(size);
    const Table t({test_map(5), map});  // the second map: offsets must be right
    REQUIRE(t.table.sizes == std::vector<int>{5, size});
    REQUIRE(t.table.offsets == std::vector<int>{0, 16 * 25});
    REQUIRE(t.table.coefficients.size() == static_cast<std::size_t>(16 * (25 + size * size)));
    const CmapMapView<double> view = t.views[1];
    const double h = 2 * kPi / size;
    for (int j = 0; j < size; ++j) {
      std::vector<double> row, column;
      for (int k = 0; k < size; ++k) row.push_back(map.energy_kj_per_mol[k + size * j]);
      for (int k = 0; k < size; ++k) column.push_back(map.energy_kj_per_mol[j + size * k]);
      const std::vector<double> d_phi = periodic_spline_slopes(row);    // along phi at psi index j
      const std::vector<double> d_psi = periodic_spline_slopes(column);  // along psi at phi index j
      for (int i = 0; i < size; ++i) {
        // Grid point (i, j), approached from both sides of both angles (phi in (-pi, pi]).
        const double phi = i * h > kPi ? i * h - 2 * kPi : i * h, psi = j * h > kPi ? j * h - 2 * kPi : j * h;
        const CmapValue<double> v = cmap_value(view, phi, psi);
        CHECK(v.energy == Catch::Approx(map.energy_kj_per_mol[i + size * j]).margin(1e-12));
        CHECK(v.dE_dphi == Catch::Approx(d_phi[i]).margin(1e-10));
        const CmapValue<double> w = cmap_value(view, psi, phi);  // (phi index j, psi index i)
        CHECK(w.dE_dpsi == Catch::Approx(d_psi[i]).margin(1e-10));
        for (double eps : {1e-9, -1e-9}) {
          const CmapValue<double> near = cmap_value(view, phi + eps, psi - eps);
          CHECK(near.energy == Catch::Approx(v.energy).margin(1e-7));
          CHECK(near.dE_dphi == Catch::Approx(v.dE_dphi).margin(1e-6));
          CHECK(near.dE_dpsi == Catch::Approx(v.dE_dpsi).margin(1e-6));
        }
      }
    }
    // The wrap: pi and -pi are one angle.
    const CmapValue<double> a = cmap_value(view, kPi, 0.7), b = cmap_value(view, -kPi, 0.7);
    CHECK(a.energy == Catch::Approx(b.energy).margin(1e-12));
    CHECK(a.dE_dpsi == Catch::Approx(b.dE_dpsi).margin(1e-10));
  }
  CHECK_THROWS_AS(make_cmap_table({CmapMap{1, {0.0}}}), RuntimeError);
  CHECK_THROWS_AS(make_cmap_table({CmapMap{3, {0.0, 1.0}}}), RuntimeError);
  CHECK(make_cmap_table({}).coefficients.empty());
}

TEST_CASE("CMAP torsion forces are minus the gradient of its energy", "[cmap]") {
  const Table t({test_map(24), test_map(7)});
  const BondedTables<double> tables{t.views.data()};
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    // Five atoms of a chain; phi = 0-1-2-3, psi = 1-2-3-4 (shared atoms, as a protein's CMAP).
    std::vector<Vec3d> x{Vec3d(0, 0, 0)};
    for (int k = 0; k < 4; ++k) {
      Vec3d step(g(rng), g(rng), g(rng));
      x.push_back(x.back() + step * (0.15 / norm(step)));
    }
    const CmapTorsionParams<double> p{trial % 2};
    const int atom[8] = {0, 1, 2, 3, 1, 2, 3, 4};
    const auto evaluate = [&](const std::vector<Vec3d>& q) {
      return evaluate_bonded(p, [&](int a, int b) { return q[atom[b]] - q[atom[a]]; }, tables);
    };
    const auto r = evaluate(x);
    std::vector<Vec3d> f(5);
    for (int s = 0; s < 8; ++s) f[atom[s]] += r.force[s];
    Vec3d net;
    double scale = 0.0;
    for (const Vec3d& v : f) net += v, scale = std::max(scale, norm(v));
    CHECK(norm(net) < 1e-10 * (1.0 + scale));
    const double h = 1e-7;
    for (int a = 0; a < 5; ++a)
      for (int d = 0; d < 3; ++d) {
        std::vector<Vec3d> xp = x, xm = x;
        xp[a][d] += h;
        xm[a][d] -= h;
        const double numeric = -(evaluate(xp).energy - evaluate(xm).energy) / (2 * h);
        INFO("trial " << trial << " atom " << a << " axis " << d);
        CHECK(f[a][d] == Catch::Approx(numeric).margin(1e-5 * (1.0 + scale)));
      }
  }
}

TEST_CASE("CMAP in single precision follows the double evaluation", "[cmap]") {
  const Table t({test_map(24)});
  const std::vector<float> coefficients = t.table.coefficients_as<float>();
  const std::vector<CmapMapView<float>> views = t.table.views(coefficients.data());
  for (double phi : {-3.1, -1.0, 0.0, 0.5, 2.9, 3.14159})
    for (double psi : {-2.0, 0.3, 3.1}) {
      const CmapValue<double> d = cmap_value(t.views[0], phi, psi);
      const CmapValue<float> f = cmap_value(views[0], float(phi), float(psi));
      CHECK(f.energy == Catch::Approx(d.energy).margin(2e-5 * (1.0 + std::fabs(d.energy))));
      CHECK(f.dE_dphi == Catch::Approx(d.dE_dphi).margin(1e-4 * (1.0 + std::fabs(d.dE_dphi))));
      CHECK(f.dE_dpsi == Catch::Approx(d.dE_dpsi).margin(1e-4 * (1.0 + std::fabs(d.dE_dpsi))));
    }
}
