#include "model/cmap.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <string>

#include "common/errors.hpp"
#include "physics/math.hpp"

namespace mdsim {

namespace {

// The inverse of the periodic n x n matrix with 4 on the diagonal and 1 beside it (cyclic): the system
// m[k-1] + 4 m[k] + m[k+1] = r[k] that a uniform cubic spline's knot slopes satisfy. Row k of the inverse is
// g[(k - j) mod n]; with lambda = sqrt(3) - 2, the root of lambda^2 + 4 lambda + 1 = 0 inside the unit circle,
// the infinite chain's response lambda^|k| / (4 + 2 lambda) summed over the periodic images gives
// g[k] = (lambda^k + lambda^(n-k)) / ((1 - lambda^n) (4 + 2 lambda)).
std::vector<double> cyclic_inverse_row(int n) {
  const double lambda = std::sqrt(3.0) - 2.0;
  const double lambda_n = std::pow(lambda, n);
  const double scale = 1.0 / ((1.0 - lambda_n) * (4.0 + 2.0 * lambda));
  std::vector<double> g(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) g[static_cast<std::size_t>(k)] = (std::pow(lambda, k) + std::pow(lambda, n - k)) * scale;
  return g;
}

// The bicubic patch with values f, and u-, v- and cross derivatives fu, fv, fuv (in patch units: d/du with
// u = 0..1 over the cell) at the corners (0,0), (1,0), (0,1), (1,1): coefficients c[4a + b] of u^a v^b,
// C = H F H^T with H the cubic Hermite basis matrix and F = [[f(0,0), f(0,1), fv(0,0), fv(0,1)],
// [f(1,0), f(1,1), fv(1,0), fv(1,1)], [fu(0,0), fu(0,1), fuv(0,0), fuv(0,1)], [fu(1,0), fu(1,1), fuv(1,0), fuv(1,1)]].
using Corners = std::array<double, 4>;  // at (0,0), (1,0), (0,1), (1,1)
std::array<double, 16> bicubic_patch(const Corners& f, const Corners& fu, const Corners& fv, const Corners& fuv) {
  static constexpr double H[4][4] = {{1, 0, 0, 0}, {0, 0, 1, 0}, {-3, 3, -2, -1}, {2, -2, 1, 1}};
  const double F[4][4] = {{f[0], f[2], fv[0], fv[2]},
                          {f[1], f[3], fv[1], fv[3]},
                          {fu[0], fu[2], fuv[0], fuv[2]},
                          {fu[1], fu[3], fuv[1], fuv[3]}};
  double HF[4][4] = {};
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 4; ++k)
      for (int m = 0; m < 4; ++m) HF[a][k] += H[a][m] * F[m][k];
  std::array<double, 16> c{};
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int k = 0; k < 4; ++k) c[static_cast<std::size_t>(4 * a + b)] += HF[a][k] * H[b][k];
  return c;
}

// Slopes along phi (stride 1) or psi (stride n) of every line of an n x n periodic grid.
std::vector<double> grid_slopes(const std::vector<double>& grid, int n, bool along_phi) {
  std::vector<double> out(grid.size());
  std::vector<double> line(static_cast<std::size_t>(n));
  for (int other = 0; other < n; ++other) {
    const auto at = [&](int k) { return static_cast<std::size_t>(along_phi ? k + n * other : other + n * k); };
    for (int k = 0; k < n; ++k) line[static_cast<std::size_t>(k)] = grid[at(k)];
    const std::vector<double> slopes = periodic_spline_slopes(line);
    for (int k = 0; k < n; ++k) out[at(k)] = slopes[static_cast<std::size_t>(k)];
  }
  return out;
}

// One map's patches appended to out.
void append_map_patches(const CmapMap& map, std::vector<double>& out) {
  const int n = map.size;
  const std::vector<double>& e = map.energy_kj_per_mol;
  const std::vector<double> d_phi = grid_slopes(e, n, true);
  const std::vector<double> d_psi = grid_slopes(e, n, false);
  const std::vector<double> d_phi_psi = grid_slopes(d_psi, n, true);
  const double h = 2.0 * pmath::kPi / n;  // the cell's width: d/du = h d/dphi
  for (int t = 0; t < n; ++t)
    for (int s = 0; s < n; ++s) {
      const int s1 = (s + 1) % n, t1 = (t + 1) % n;
      const std::array<std::size_t, 4> k = {static_cast<std::size_t>(s + n * t), static_cast<std::size_t>(s1 + n * t),
                                            static_cast<std::size_t>(s + n * t1), static_cast<std::size_t>(s1 + n * t1)};
      Corners f{}, fu{}, fv{}, fuv{};
      for (std::size_t c = 0; c < 4; ++c) {
        f[c] = e[k[c]];
        fu[c] = h * d_phi[k[c]];
        fv[c] = h * d_psi[k[c]];
        fuv[c] = h * h * d_phi_psi[k[c]];
      }
      const std::array<double, 16> patch = bicubic_patch(f, fu, fv, fuv);
      out.insert(out.end(), patch.begin(), patch.end());
    }
}

}  // namespace

std::vector<double> periodic_spline_slopes(const std::vector<double>& y) {
  const int n = static_cast<int>(y.size());
  if (n < 2) throw RuntimeError("periodic_spline_slopes: a periodic spline needs at least 2 knots");
  // slope[k-1] + 4 slope[k] + slope[k+1] = 3 (y[k+1] - y[k-1]) / h (continuity of the second derivative).
  const double h = 2.0 * pmath::kPi / n;
  const std::vector<double> g = cyclic_inverse_row(n);
  std::vector<double> rhs(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k)
    rhs[static_cast<std::size_t>(k)] = 3.0 * (y[static_cast<std::size_t>((k + 1) % n)] - y[static_cast<std::size_t>((k + n - 1) % n)]) / h;
  std::vector<double> slope(static_cast<std::size_t>(n), 0.0);
  for (int k = 0; k < n; ++k) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += g[static_cast<std::size_t>((k - j + n) % n)] * rhs[static_cast<std::size_t>(j)];
    slope[static_cast<std::size_t>(k)] = sum;
  }
  return slope;
}

CmapTable make_cmap_table(const std::vector<CmapMap>& maps) {
  CmapTable table;
  for (std::size_t m = 0; m < maps.size(); ++m) {
    const CmapMap& map = maps[m];
    if (map.size < 2 || map.energy_kj_per_mol.size() != static_cast<std::size_t>(map.size) * static_cast<std::size_t>(map.size))
      throw RuntimeError("CMAP map " + std::to_string(m) + ": size " + std::to_string(map.size) + " with " +
                         std::to_string(map.energy_kj_per_mol.size()) + " energies (at least 2 x 2, size * size values)");
    table.offsets.push_back(static_cast<int>(table.coefficients.size()));
    table.sizes.push_back(map.size);
    append_map_patches(map, table.coefficients);
  }
  return table;
}

}  // namespace mdsim
