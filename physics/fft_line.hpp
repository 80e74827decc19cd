// A complex FFT of one line whose length N is known at compile time and has no prime factor above 7, for the host
// and the device alike (MDSIM_HD): mixed-radix decimation in time, in place, on an array of N values that holds
// the line in digit-reversed order (load it with `digit_position`). Unnormalised, as cuFFT: Sign = -1 is the
// forward transform (exp(-2 pi i j k / N)), +1 the inverse. Its twiddle factors are constant expressions.
#pragma once

#include "physics/vec3.hpp"

// Every loop here is unrolled on the device, so that the line stays in registers (all indices compile-time).
#if defined(__CUDA_ARCH__)
#define MDSIM_FFT_UNROLL _Pragma("unroll")
#else
#define MDSIM_FFT_UNROLL
#endif

namespace mdsim::fft {

template <typename T>
struct Complex {
  T re, im;
};

constexpr int smallest_factor(int n) {
  for (int p = 2; p <= 7; ++p)
    if (n % p == 0) return p;
  return n;
}
// Whether a line of n points has a transform here (n >= 1, no prime factor above 7).
constexpr bool supported_length(int n) {
  if (n < 1) return false;
  while (n > 1) {
    const int p = smallest_factor(n);
    if (p > 7) return false;
    n /= p;
  }
  return true;
}

// Where element j of a line of N points goes in the array the transform takes: N = P M with P its smallest factor,
// the P decimated sub-lines j = q + P m stored one after another, each in its own digit-reversed order.
template <int N>
constexpr int digit_position(int j) {
  if constexpr (N == 1) {
    return 0;
  } else {
    constexpr int P = smallest_factor(N), M = N / P;
    return (j % P) * M + digit_position<M>(j / P);
  }
}

// cos and sin of 2 pi k / n in double, as constant expressions (Taylor series after reduction to an eighth of a
// turn), so that every twiddle factor of an unrolled transform is an immediate operand: no table, no loads.
constexpr double kHalfPi = 1.57079632679489661923;
constexpr double taylor_sin(double x) {  // |x| <= pi/4
  double term = x, sum = x;
  for (int n = 1; n < 12; ++n) {
    term *= -x * x / ((2.0 * n) * (2.0 * n + 1.0));
    sum += term;
  }
  return sum;
}
constexpr double taylor_cos(double x) {  // |x| <= pi/4
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 12; ++n) {
    term *= -x * x / ((2.0 * n - 1.0) * (2.0 * n));
    sum += term;
  }
  return sum;
}
struct UnitRoot {
  double c, s;  // exp(2 pi i k / n) = c + i s
};
constexpr UnitRoot unit_root(int k, int n) {
  k %= n;
  if (k < 0) k += n;
  const int quadrant = (4 * k) / n;
  const int r = 4 * k - quadrant * n;  // the angle within the quadrant: (pi/2) r / n
  double c = 0.0, s = 0.0;
  if (2 * r <= n) {
    const double t = kHalfPi * r / n;
    c = taylor_cos(t), s = taylor_sin(t);
  } else {
    const double t = kHalfPi * (n - r) / n;
    c = taylor_sin(t), s = taylor_cos(t);
  }
  switch (quadrant) {
    case 0: return {c, s};
    case 1: return {-s, c};
    case 2: return {-c, -s};
    default: return {s, -c};
  }
}

// w[k] = exp(-2 pi i k / n), rounded once from double (the host's reference for tests).
template <typename T>
MDSIM_HD Complex<T> twiddle(int k, int n) {
  const UnitRoot r = unit_root(-k, n);
  return {static_cast<T>(r.c), static_cast<T>(r.s)};
}

// v exp(Sign 2 pi i e / n); a multiple of a quarter turn costs no multiply.
template <int Sign, typename T>
MDSIM_HD Complex<T> rotate(const Complex<T>& v, int e, int n) {
  int m = (Sign * e) % n;
  if (m < 0) m += n;
  if (m == 0) return v;
  if (2 * m == n) return {-v.re, -v.im};
  if (4 * m == n) return {-v.im, v.re};
  if (4 * m == 3 * n) return {v.im, -v.re};
  const UnitRoot r = unit_root(m, n);
  const T c = static_cast<T>(r.c), s = static_cast<T>(r.s);
  return {v.re * c - v.im * s, v.re * s + v.im * c};
}

// In place, the P-point DFT t[k] <- sum_q t[q] exp(Sign 2 pi i q k / P) (P prime, at most 7). An odd P pairs q with
// P - q: out[k] = t0 + sum_q (t[q] + t[P-q]) cos(2 pi q k / P) +/- i Sign sum_q (t[q] - t[P-q]) sin(2 pi q k / P).
template <int P, int Sign, typename T>
MDSIM_HD void small_dft(Complex<T> (&t)[P]) {
  if constexpr (P == 2) {
    const Complex<T> u = t[0];
    t[0] = {u.re + t[1].re, u.im + t[1].im};
    t[1] = {u.re - t[1].re, u.im - t[1].im};
  } else {
    constexpr int H = (P - 1) / 2;
    Complex<T> a[H], b[H];
    Complex<T> sum = t[0];
    MDSIM_FFT_UNROLL
    for (int q = 1; q <= H; ++q) {
      a[q - 1] = {t[q].re + t[P - q].re, t[q].im + t[P - q].im};
      b[q - 1] = {t[q].re - t[P - q].re, t[q].im - t[P - q].im};
      sum.re += a[q - 1].re, sum.im += a[q - 1].im;
    }
    const Complex<T> t0 = t[0];
    t[0] = sum;
    MDSIM_FFT_UNROLL
    for (int k = 1; k <= H; ++k) {
      Complex<T> re = t0, im = {T(0), T(0)};
      MDSIM_FFT_UNROLL
      for (int q = 1; q <= H; ++q) {
        const UnitRoot r = unit_root(q * k, P);
        const T c = static_cast<T>(r.c), s = static_cast<T>(r.s);
        re.re += a[q - 1].re * c, re.im += a[q - 1].im * c;
        im.re += b[q - 1].re * s, im.im += b[q - 1].im * s;
      }
      // i Sign im = Sign (-im.im, im.re)
      const T ire = Sign > 0 ? -im.im : im.im, iim = Sign > 0 ? im.re : -im.re;
      t[k] = {re.re + ire, re.im + iim};
      t[P - k] = {re.re - ire, re.im - iim};
    }
  }
}

// The sub-transform of length L at a[offset, offset + L) (its P sub-lines of length M = L / P first, then their
// combination: for each k < M the P values a[offset + q M + k] times w_L^(q k), a P-point DFT, written back to
// a[offset + k + M k2]). NT: the whole line's length.
template <int NT, int L, int Sign, typename T>
MDSIM_HD void transform_part(Complex<T> (&a)[NT], int offset) {
  if constexpr (L > 1) {
    constexpr int P = smallest_factor(L), M = L / P;
MDSIM_FFT_UNROLL
    for (int q = 0; q < P; ++q) transform_part<NT, M, Sign>(a, offset + q * M);
MDSIM_FFT_UNROLL
    for (int k = 0; k < M; ++k) {
      Complex<T> t[P];
MDSIM_FFT_UNROLL
      for (int q = 0; q < P; ++q) t[q] = rotate<Sign>(a[offset + q * M + k], q * k, L);
      small_dft<P, Sign>(t);
MDSIM_FFT_UNROLL
      for (int k2 = 0; k2 < P; ++k2) a[offset + k + M * k2] = t[k2];
    }
  }
}

// The whole line: a holds it in digit-reversed order on entry and its transform in natural order on exit.
template <int N, int Sign, typename T>
MDSIM_HD void transform(Complex<T> (&a)[N]) {
  static_assert(supported_length(N), "line lengths have no prime factor above 7");
  transform_part<N, N, Sign>(a, 0);
}

}  // namespace mdsim::fft
