// Cardinal B-spline weights for smooth PME (Essmann et al. 1995), host and device (MDSIM_HD).
//
// M_n(x) is the order-n cardinal B-spline, nonzero on (0, n), built by
//   M_2(x) = 1 - |x - 1|,  M_n(x) = [x M_{n-1}(x) + (n - x) M_{n-1}(x - 1)] / (n - 1).
// A charge whose scaled fractional coordinate is u = i0 + w (i0 integer, 0 <= w < 1) is spread
// forward onto grid points i0, i0+1, ..., i0+n-1 (modulo the grid size) with weights
//   theta[k] = M_n(w + n - 1 - k),   dtheta[k] = d theta[k] / dw = M_{n-1}(w+n-1-k) - M_{n-1}(w+n-2-k).
// This is OpenMM's reference PME convention (a uniform shift against the textbook placement, which
// leaves energies and forces unchanged); the weights sum to one and dtheta sums to zero.
#pragma once

#include <cmath>

#include "physics/vec3.hpp"

namespace mdsim {

constexpr int kPmeOrder = 5;  // B-spline order used by PME (OpenMM's default)

// Where a point lies on an n-point periodic grid along one axis, from its fractional coordinate s (any value; the
// point's position dotted with the reciprocal box vector): the first grid index i0 (0 <= i0 < n) and the fraction w in
// [0, 1), the same on every platform. A non-finite s (a blown-up simulation, flagged elsewhere) gets i0 = 0 so that
// no grid index leaves the grid (converting NaN to int gives INT_MIN on both CPUs and GPUs); its weights are NaN.
MDSIM_HD void grid_position(double s, int n, int& i0, double& w) {
  s -= floor(s);
  const double t = s * n;
  const int ti = t >= 0.0 && t <= static_cast<double>(n) ? static_cast<int>(t) : 0;
  w = t - ti;
  i0 = ti % n;  // t == n when s rounds up to 1
}

template <int ORDER, typename T>
MDSIM_HD void bspline_weights(T w, T* theta, T* dtheta) {
  static_assert(ORDER >= 3, "B-spline order must be at least 3");
  // b[k] holds M_m(w + m - 1 - k) for the current order m, starting at m = 2.
  T b[ORDER];
  b[0] = T(1) - w;
  b[1] = w;
  for (int k = 2; k < ORDER; ++k) b[k] = T(0);
  for (int m = 2; m < ORDER; ++m) {
    if (m == ORDER - 1) {
      // b holds order ORDER-1: its differences are the derivatives of the order-ORDER weights.
      dtheta[0] = -b[0];
      for (int k = 1; k < ORDER; ++k) dtheta[k] = b[k - 1] - b[k];
    }
    // Raise the order m -> m+1 in place, highest index first so that b[k-1] is still order m.
    const T inv_m = T(1) / T(m);
    b[m] = w * b[m - 1] * inv_m;  // k = m: only the b[k-1] term (b[m] = 0)
    for (int k = m - 1; k >= 1; --k) b[k] = ((w + T(m - k)) * b[k - 1] + (T(1 + k) - w) * b[k]) * inv_m;
    b[0] = (T(1) - w) * b[0] * inv_m;
  }
  for (int k = 0; k < ORDER; ++k) theta[k] = b[k];
}

// Values of M_ORDER at the integers 1, 2, ..., ORDER-1 (the weights for w = 0, reversed); used for
// the B-spline moduli of the PME influence function.
template <int ORDER, typename T>
MDSIM_HD void bspline_integer_values(T* values /* ORDER entries: M(1), ..., M(ORDER-1), 0 */) {
  T theta[ORDER], dtheta[ORDER];
  bspline_weights<ORDER, T>(T(0), theta, dtheta);
  // theta[k] = M(ORDER - 1 - k), so M(j + 1) = theta[ORDER - 2 - j].
  for (int j = 0; j + 1 < ORDER; ++j) values[j] = theta[ORDER - 2 - j];
  values[ORDER - 1] = T(0);  // M(ORDER)
}

}  // namespace mdsim
