// physics/fft_line.hpp, the line transform of the CUDA platform's PME line passes (kernels/cuda/pme_line_fft.cu):
// every supported length from 1 to 64 against the direct DFT, forward and inverse, in double and float.
#include <cmath>
#include <complex>
#include <random>
#include <utility>

#include "physics/fft_line.hpp"
#include "support/catch.hpp"

using namespace mdsim;

namespace {

// The largest |transform - direct DFT| over the line, relative to the line's largest input.
template <typename T, int N, int Sign>
double line_error(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::complex<double> x[N];
  for (auto& v : x) v = {static_cast<double>(static_cast<T>(u(rng))), static_cast<double>(static_cast<T>(u(rng)))};
  fft::Complex<T> a[N];
  for (int j = 0; j < N; ++j) a[fft::digit_position<N>(j)] = {static_cast<T>(x[j].real()), static_cast<T>(x[j].imag())};
  fft::transform<N, Sign>(a);
  double err = 0.0;
  for (int k = 0; k < N; ++k) {
    std::complex<double> s = 0.0;
    for (int j = 0; j < N; ++j) s += x[j] * std::polar(1.0, Sign * 2.0 * 3.14159265358979323846 * j * k / N);
    err = std::max(err, std::abs(s - std::complex<double>(a[k].re, a[k].im)));
  }
  return err;
}

template <typename T, int... Ns>
void check_lengths(std::integer_sequence<int, Ns...>, double tolerance) {
  auto one = [&](auto n) {
    constexpr int N = decltype(n)::value;
    if constexpr (fft::supported_length(N)) {
      INFO("N = " << N);
      CHECK(line_error<T, N, -1>(N) <= tolerance * N);
      CHECK(line_error<T, N, 1>(N + 100) <= tolerance * N);
    }
  };
  (one(std::integral_constant<int, Ns>{}), ...);
}

using Lengths = std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 18, 20, 21, 24, 25, 27,
                                      28, 30, 32, 35, 36, 40, 42, 45, 48, 49, 50, 54, 56, 60, 63, 64>;

}  // namespace

TEST_CASE("fft_line: the constant twiddle factors are cos and sin of 2 pi k / n to double precision",
          "[physics][fft]") {
  for (const int n : {3, 5, 7, 8, 12, 30, 36, 49}) {
    for (int k = -n; k <= 2 * n; ++k) {
      const fft::UnitRoot r = fft::unit_root(k, n);
      // The reference's own error: the rounding of an angle below 2 pi (~4.4e-16) and of cos and sin.
      const double angle = 2.0 * 3.14159265358979323846 * (((k % n) + n) % n) / n;
      INFO("k = " << k << ", n = " << n);
      CHECK(std::fabs(r.c - std::cos(angle)) <= 1e-15);
      CHECK(std::fabs(r.s - std::sin(angle)) <= 1e-15);
    }
  }
}

TEST_CASE("fft_line: every length with factors up to 7 equals the direct DFT, both directions", "[physics][fft]") {
  CHECK(fft::supported_length(30));
  CHECK_FALSE(fft::supported_length(11));
  CHECK_FALSE(fft::supported_length(0));
  SECTION("double") { check_lengths<double>(Lengths{}, 1e-14); }
  SECTION("float") { check_lengths<float>(Lengths{}, 1e-6); }
}
