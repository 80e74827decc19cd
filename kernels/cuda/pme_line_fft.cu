// PME's reciprocal-space middle on lines of the grid; see pme_line_fft.hpp for the passes.
#include "kernels/cuda/pme_line_fft.hpp"

#include <cstddef>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/fixed_point.cuh"
#include "kernels/cuda/grid_size.cuh"
#include "kernels/cuda/pme_grid.cuh"
#include "physics/fft_line.hpp"

namespace mdsim::cuda {

namespace {

using Complex = fft::Complex<float>;

// The line lengths with kernels here: every size from 8 to 48 points without a prime factor above 7. Longer lines
// are left to cuFFT: on the H200 DHFR's 56^3 grid was no faster this way (87.2-87.6 -> 87.9-88.1 us a step), and
// its x and y lines no longer fit in registers (spills from 54 points up).
using LineLengths = std::integer_sequence<int, 8, 9, 10, 12, 14, 15, 16, 18, 20, 21, 24, 25, 27, 28, 30, 32, 35, 36,
                                          40, 42, 45, 48>;

constexpr int kLineThreads = 64;  // small blocks: a small grid's few lines spread over many multiprocessors
constexpr int kZLines = 2 * kLineThreads;  // z lines a block takes (two per thread)
constexpr int kStageChunk = 16;   // grid values a thread loads at once into a block's z lines (latency: one round trip)

// Calls f(std::integral_constant<int, N>) for the N of the list equal to n; false when there is none.
template <typename F, int... Ns>
bool with_length(std::integer_sequence<int, Ns...>, int n, F&& f) {
  return ((n == Ns && (f(std::integral_constant<int, Ns>{}), true)) || ...);
}

// A block's z lines in shared memory: kZLines of them, thread t taking lines t and t + kLineThreads as
// one complex line. Odd strides, so that the threads' lines start in different banks.
template <int N>
struct ZStage {
  static constexpr int kHalf = N / 2 + 1;
  static constexpr int kRealStride = N | 1;      // floats per real line
  static constexpr int kHalfStride = kHalf | 1;  // complex values per half spectrum
  static constexpr int kFloats = kZLines * (kRealStride > 2 * kHalfStride ? kRealStride : 2 * kHalfStride);
};

// The z lines of this block: how many (up to kZLines) and the first's index among all replicas' lines
// (replica blockIdx.y, `lines` a replica).
struct BlockLines {
  int n;
  std::size_t line0;
};
__device__ __forceinline__ BlockLines block_z_lines(int lines) {
  const int first = blockIdx.x * kZLines;
  return {min(kZLines, lines - first), static_cast<std::size_t>(blockIdx.y) * lines + first};
}

// A block's n lines of Len values each, one after another at src, into shared memory at Stride values a line
// (each value through `convert`). Every thread keeps kStageChunk loads in flight at once.
template <int Len, int Stride, typename In, typename Out, typename Convert>
__device__ __forceinline__ void stage_lines(const In* __restrict__ src, int n, Out* stage, Convert convert) {
  const int total = n * Len;
  for (int base = threadIdx.x; base < total; base += kStageChunk * kLineThreads) {
    In v[kStageChunk];
#pragma unroll
    for (int c = 0; c < kStageChunk; ++c) {
      const int i = base + c * kLineThreads;
      if (i < total) v[c] = src[i];
    }
#pragma unroll
    for (int c = 0; c < kStageChunk; ++c) {
      const int i = base + c * kLineThreads;
      const int l = i / Len;
      if (i < total) stage[l * Stride + (i - l * Len)] = convert(v[c]);
    }
  }
}

// 1. Lines (x, y) of replica blockIdx.y, `lines` = nx ny per replica, Z points each: the fixed-point charges to
// float, two real lines x1 + i x2 transformed together and separated into their half spectra
// X1[k] = (Z[k] + conj Z[-k]) / 2, X2[k] = -i (Z[k] - conj Z[-k]) / 2 (exact halvings). The charges are read only:
// z_inverse_kernel zeroes them (zeroing each value here, behind its read, made villin_water's 16 grids of
// 45 x 42 x 35 take 55 us instead of ~8, every warp stalled on its loads).
template <int Z>
__global__ void __launch_bounds__(kLineThreads)
    z_forward_kernel(const unsigned long long* __restrict__ fixed, Complex* __restrict__ half, int lines) {
  wait_for_prior_grid();  // a dependent launch (launch_kernel)
  using S = ZStage<Z>;
  __shared__ float stage[S::kFloats];
  const int t = threadIdx.x;
  const auto [n, line0] = block_z_lines(lines);
  const float* precision = nullptr;  // grid_value's float overload
  stage_lines<Z, S::kRealStride>(fixed + line0 * Z, n, stage,
                                 [precision](unsigned long long v) { return grid_value(v, precision); });
  __syncthreads();
  const bool one = t < n, two = t + kLineThreads < n;
  Complex a[Z];
  if (one) {
    const float* x1 = stage + t * S::kRealStride;
    const float* x2 = x1 + kLineThreads * S::kRealStride;
#pragma unroll
    for (int z = 0; z < Z; ++z) a[fft::digit_position<Z>(z)] = {x1[z], two ? x2[z] : 0.0f};
    fft::transform<Z, -1>(a);
  }
  __syncthreads();
  Complex* out = reinterpret_cast<Complex*>(stage);
  if (one) {
#pragma unroll
    for (int k = 0; k < S::kHalf; ++k) {
      const Complex p = a[k], q = a[(Z - k) % Z];
      out[t * S::kHalfStride + k] = {0.5f * (p.re + q.re), 0.5f * (p.im - q.im)};
      if (two) out[(t + kLineThreads) * S::kHalfStride + k] = {0.5f * (p.im + q.im), 0.5f * (q.re - p.re)};
    }
  }
  __syncthreads();
  Complex* dst = half + line0 * S::kHalf;
  for (int i = t; i < n * S::kHalf; i += kLineThreads) {
    const int l = i / S::kHalf;
    dst[i] = out[l * S::kHalfStride + (i - l * S::kHalf)];
  }
}

// Element k of the full spectrum from a half spectrum h (k < Z/2 + 1 stored; the rest conjugate): a real line's
// transform, so the imaginary parts of k = 0 and k = Z/2 are left out (they add nothing to the real inverse).
template <int Z>
__device__ __forceinline__ Complex full_spectrum(const Complex* h, int k) {
  if (k == 0 || 2 * k == Z) return {h[k].re, 0.0f};
  return 2 * k < Z ? h[k] : Complex{h[Z - k].re, -h[Z - k].im};
}

// 5. The inverse of 1: two half spectra X1, X2 as the one line X1 + i X2, whose inverse transform is x1 + i x2;
// the real lines to `potential`, and the same lines of the fixed-point charge grid set to zero for the next spread
// (write-only stores, in place of a memset: 1-2 us a step less on the H200).
template <int Z>
__global__ void __launch_bounds__(kLineThreads)
    z_inverse_kernel(const Complex* __restrict__ half, float* __restrict__ potential,
                     unsigned long long* __restrict__ fixed, int lines) {
  wait_for_prior_grid();  // a dependent launch (launch_kernel)
  using S = ZStage<Z>;
  __shared__ float stage[S::kFloats];
  const int t = threadIdx.x;
  const auto [n, line0] = block_z_lines(lines);
  Complex* in = reinterpret_cast<Complex*>(stage);
  stage_lines<S::kHalf, S::kHalfStride>(half + line0 * S::kHalf, n, in, [](const Complex& v) { return v; });
  __syncthreads();
  const bool one = t < n, two = t + kLineThreads < n;
  Complex a[Z];
  if (one) {
    const Complex* h1 = in + t * S::kHalfStride;
    const Complex* h2 = h1 + kLineThreads * S::kHalfStride;
#pragma unroll
    for (int k = 0; k < Z; ++k) {
      const Complex u = full_spectrum<Z>(h1, k);
      const Complex v = two ? full_spectrum<Z>(h2, k) : Complex{0.0f, 0.0f};
      a[fft::digit_position<Z>(k)] = {u.re - v.im, u.im + v.re};
    }
    fft::transform<Z, 1>(a);
  }
  __syncthreads();
  if (one) {
#pragma unroll
    for (int z = 0; z < Z; ++z) {
      stage[t * S::kRealStride + z] = a[z].re;
      if (two) stage[(t + kLineThreads) * S::kRealStride + z] = a[z].im;
    }
  }
  __syncthreads();
  float* dst = potential + line0 * Z;
  unsigned long long* zero = fixed + line0 * Z;
  for (int i = t; i < n * Z; i += kLineThreads) {
    const int l = i / Z;
    dst[i] = stage[l * S::kRealStride + (i - l * Z)];
    zero[i] = 0ull;
  }
}

// 2. and 4. Lines (x, kz) along y in the direction Sign: element y at ((x ny + y) h + kz) of replica blockIdx.y's
// half grid (h = nz/2 + 1); consecutive threads take consecutive kz, so each row of the line is read whole.
template <int Y, int Sign>
__global__ void __launch_bounds__(kLineThreads) y_kernel(Complex* __restrict__ half, int nx, int h) {
  wait_for_prior_grid();  // a dependent launch (launch_kernel)
  const int line = blockIdx.x * kLineThreads + threadIdx.x;
  if (line >= nx * h) return;
  const int x = line / h, kz = line - x * h;
  Complex* s = half + (static_cast<std::size_t>(blockIdx.y) * nx + x) * Y * h + kz;
  Complex a[Y];
#pragma unroll
  for (int y = 0; y < Y; ++y) a[fft::digit_position<Y>(y)] = s[y * h];
  fft::transform<Y, Sign>(a);
#pragma unroll
  for (int y = 0; y < Y; ++y) s[y * h] = a[y];
}

// 3. Lines m = (y, kz) along x, element x at x yh + m (yh = ny h): forward, times the influence function G,
// inverse. With ENERGY, E = 1/2 sum over the full grid of G |S|^2, where a stored kz strictly between 0 and nz/2
// stands for itself and its conjugate partner (as cuda_pme.cu's convolve_kernel); summed per block in a fixed
// order, added as fixed point to replica blockIdx.y's energy.
template <int X, bool ENERGY>
__global__ void __launch_bounds__(kLineThreads)
    x_kernel(Complex* __restrict__ half, const float* __restrict__ influence, int yh, int h, int nz,
             unsigned long long* __restrict__ energy, int energy_stride) {
  wait_for_prior_grid();  // a dependent launch (launch_kernel)
  const int m = blockIdx.x * kLineThreads + threadIdx.x;
  double e = 0.0;
  if (m < yh) {
    Complex* s = half + static_cast<std::size_t>(blockIdx.y) * X * yh + m;
    Complex a[X];
#pragma unroll
    for (int x = 0; x < X; ++x) a[fft::digit_position<X>(x)] = s[x * yh];
    fft::transform<X, -1>(a);
    Complex b[X];  // the product, in the order the inverse takes (a renaming of registers)
#pragma unroll
    for (int x = 0; x < X; ++x) {
      const float g = influence[x * yh + m];
      if (ENERGY) e += double(g) * (double(a[x].re) * double(a[x].re) + double(a[x].im) * double(a[x].im));
      b[fft::digit_position<X>(x)] = {a[x].re * g, a[x].im * g};
    }
    fft::transform<X, 1>(b);
#pragma unroll
    for (int x = 0; x < X; ++x) s[x * yh] = b[x];
    const int kz = m % h;
    if (ENERGY && kz != 0 && 2 * kz != nz) e *= 2.0;
  }
  if (ENERGY) {
    const double sum = block_sum(e);
    if (threadIdx.x == 0) atomic_add_fixed(energy + static_cast<std::size_t>(blockIdx.y) * energy_stride, 0.5 * sum);
  }
}

}  // namespace

bool line_fft_supports(int nx, int ny, int nz) {
  auto has = [](int n) { return with_length(LineLengths{}, n, [](auto) {}); };
  return has(nx) && has(ny) && has(nz);
}

void line_fft_convolve(const LineFftGrids& g, unsigned long long* energy_fixed, int energy_stride,
                       cudaStream_t stream) {
  const int nx = g.n[0], ny = g.n[1], nz = g.n[2], h = nz / 2 + 1;
  if (!line_fft_supports(nx, ny, nz))
    throw RuntimeError(fmt::format("line_fft_convolve: no line transforms for a {}x{}x{} grid", nx, ny, nz));
  if (g.replicas < 1 || g.replicas > 65535)
    throw RuntimeError(fmt::format("line_fft_convolve: {} replicas (1 to 65535)", g.replicas));
  Complex* half = reinterpret_cast<Complex*>(g.half);
  const unsigned r = static_cast<unsigned>(g.replicas);
  const dim3 z_grid(blocks_for(nx * ny, kZLines), r);
  with_length(LineLengths{}, nz, [&](auto n) {
    launch_kernel(true, z_forward_kernel<decltype(n)::value>, z_grid, kLineThreads, 0, stream, g.fixed, half, nx * ny);
  });
  const dim3 y_grid(blocks_for(nx * h, kLineThreads), r);
  with_length(LineLengths{}, ny, [&](auto n) {
    launch_kernel(true, y_kernel<decltype(n)::value, -1>, y_grid, kLineThreads, 0, stream, half, nx, h);
  });
  const dim3 x_grid(blocks_for(ny * h, kLineThreads), r);
  with_length(LineLengths{}, nx, [&](auto n) {
    constexpr int X = decltype(n)::value;
    if (energy_fixed != nullptr) {
      launch_kernel(true, x_kernel<X, true>, x_grid, kLineThreads, 0, stream, half, g.influence, ny * h, h, nz,
                    energy_fixed, energy_stride);
    } else {
      launch_kernel(true, x_kernel<X, false>, x_grid, kLineThreads, 0, stream, half, g.influence, ny * h, h, nz,
                    nullptr, 0);
    }
  });
  with_length(LineLengths{}, ny, [&](auto n) {
    launch_kernel(true, y_kernel<decltype(n)::value, 1>, y_grid, kLineThreads, 0, stream, half, nx, h);
  });
  with_length(LineLengths{}, nz, [&](auto n) {
    launch_kernel(true, z_inverse_kernel<decltype(n)::value>, z_grid, kLineThreads, 0, stream, half, g.potential,
                  g.fixed, nx * ny);
  });
}

}  // namespace mdsim::cuda
