// PME reciprocal space on the GPU; see cuda_pme.hpp for the pipeline and conventions.
#include "kernels/cuda/cuda_pme.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "kernels/cuda/fixed_point.cuh"
#include "kernels/cuda/grid_size.cuh"
#include "kernels/cuda/pme_grid.cuh"
#include "kernels/cuda/pme_line_fft.hpp"
#include "kernels/cuda/step_timeline.hpp"
#include "physics/bspline.hpp"
#include "physics/nonbonded.hpp"
#include "platform/nonbonded_plan.hpp"

namespace mdsim::cuda {

namespace {

constexpr int P = kPmeOrder;  // B-spline order (5)
constexpr int P3 = P * P * P;
constexpr double kPi = 3.14159265358979323846;

constexpr int kSpreadAtoms = 32;     // atoms per spread block
constexpr int kSpreadThreads = 128;  // threads per spread block
constexpr int kGatherThreads = 128;  // gather block
// Up to this many atoms per multiprocessor the gather takes P threads per atom (gather_planes_kernel), else one
// (gather_kernel): a small system's gather is latency-bound (few warps), a large one's throughput-bound (each
// thread of an atom repeats its weights). H200, benchmark settings, us/step with one / P threads an atom:
// ala2_water (17 atoms per SM) 42.8 / 41.1. A first form that summed each thread's plane and then the planes
// (not gather_kernel's order): 2 x ala2_water (34) 53.8 / 54.3, villin_water (67) 62.1 / 62.6, 4 and 8 x
// ala2_water (69, 137) within 0.3, DHFR (178) 87.1 / 88.6, 32 x ala2_water 182.8 / 183.5, DHFR 2x2x2 418.7 / 430.4.
constexpr int kGatherPlanesAtomsPerSm = 50;
constexpr int kGridThreads = 256;    // element-wise grid kernels

const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT error";
  }
}

[[noreturn]] void throw_cufft_error(cufftResult r, const char* call, const char* file, int line) {
  throw RuntimeError(fmt::format("cuFFT error {} ({}) in {} at {}:{}", static_cast<int>(r), cufft_result_name(r), call,
                                 file, line));
}

#define MDSIM_CUFFT_CHECK(call)                                                                         \
  do {                                                                                                  \
    const cufftResult mdsim_fft_res_ = (call);                                                          \
    if (mdsim_fft_res_ != CUFFT_SUCCESS) throw_cufft_error(mdsim_fft_res_, #call, __FILE__, __LINE__); \
  } while (0)

// Precision-specific cuFFT entry points.
template <typename real>
struct Fft;
template <>
struct Fft<float> {
  using complex = cufftComplex;
  static constexpr cufftType kForward = CUFFT_R2C;
  static constexpr cufftType kBackward = CUFFT_C2R;
  static cufftResult forward(cufftHandle p, float* in, complex* out) { return cufftExecR2C(p, in, out); }
  static cufftResult backward(cufftHandle p, complex* in, float* out) { return cufftExecC2R(p, in, out); }
};
template <>
struct Fft<double> {
  using complex = cufftDoubleComplex;
  static constexpr cufftType kForward = CUFFT_D2Z;
  static constexpr cufftType kBackward = CUFFT_Z2D;
  static cufftResult forward(cufftHandle p, double* in, complex* out) { return cufftExecD2Z(p, in, out); }
  static cufftResult backward(cufftHandle p, complex* in, double* out) { return cufftExecZ2D(p, in, out); }
};

// Reciprocal box vectors as rows, r[k][d] (see reciprocal_box_vectors): fractional coordinate along
// axis d of x is sum_k x_k r[k][d].
struct Recip {
  double r[3][3];
};

Recip make_recip(const BoxVectors<double>& box) {
  Vec3d rv[3];
  reciprocal_box_vectors(box, rv);
  Recip rc{};
  for (int k = 0; k < 3; ++k)
    for (int d = 0; d < 3; ++d) rc.r[k][d] = rv[k][d];
  return rc;
}

// Grid position of a point along axis d of an n-point grid (physics/bspline.hpp's grid_position, as CpuPme): first
// grid index i0 (0 <= i0 < n) and the fraction w in [0, 1). Double precision in both builds.
// (r0, r1, r2) is column d of the reciprocal box vectors.
__device__ __forceinline__ void grid_position(double x, double y, double z, double r0, double r1, double r2, int n,
                                              int& i0, double& w) {
  mdsim::grid_position(x * r0 + y * r1 + z * r2, n, i0, w);
}

__device__ __forceinline__ unsigned long long grid_fixed(float v) {
  return static_cast<unsigned long long>(__float2ll_rn(v * kGridScaleF));
}
__device__ __forceinline__ unsigned long long grid_fixed(double v) {
  return static_cast<unsigned long long>(__double2ll_rn(v * kGridScale));
}

// The stencil of the point p along axis d: its first grid index i0 and its P B-spline weights, as
// CpuPme (grid_position, bspline_weights). Column d of rc is selected without indexing the parameter
// struct at run time (that would copy it to local memory).
template <typename real, typename real4>
__device__ __forceinline__ void axis_stencil(const real4& p, const Recip& rc, int d, int nx, int ny, int nz, int& i0,
                                             real* theta) {
  const int n = d == 0 ? nx : (d == 1 ? ny : nz);
  const double r0 = d == 0 ? rc.r[0][0] : (d == 1 ? rc.r[0][1] : rc.r[0][2]);
  const double r1 = d == 0 ? rc.r[1][0] : (d == 1 ? rc.r[1][1] : rc.r[1][2]);
  const double r2 = d == 0 ? rc.r[2][0] : (d == 1 ? rc.r[2][1] : rc.r[2][2]);
  double w;
  grid_position(p.x, p.y, p.z, r0, r1, r2, n, i0, w);
  real dtheta[P];
  bspline_weights<P, real>(static_cast<real>(w), theta, dtheta);
}

// The first step of both spread kernels, by thread (axis d, atom a) of the block's first 3 * kSpreadAtoms:
// the stencil of the block's atom a (index `atom`) along d into the shared arrays. An atom past the end
// gets zero weights; with SKIP_UNCHARGED so does an uncharged one, without computing its stencil (no
// kernel reads an uncharged atom's weights). Returns the atom's charge; i0 is its first grid index.
// In a replica batch it also records the atom's replica (`original`: the atom index of each slot, null when
// slots are atoms; -1 for an unused slot), whose grid the atom's charge goes to.
template <bool SKIP_UNCHARGED, typename real, typename real4>
__device__ __forceinline__ real stage_atom_stencil(const real4* __restrict__ posq, int natoms, int atom, int a, int d,
                                                   const Recip& rc, int nx, int ny, int nz,
                                                   real (&theta_s)[3][P][kSpreadAtoms], int (&index_s)[3][kSpreadAtoms],
                                                   real (&q_s)[kSpreadAtoms], int& i0, const PmeReplicas& replicas,
                                                   const int* __restrict__ original, int (&replica_s)[kSpreadAtoms]) {
  real theta[P];
  if (d == 0) {
    const int index = atom >= natoms ? -1 : (original != nullptr ? original[atom] : atom);
    replica_s[a] = replicas.count == 1 ? 0 : (index >= 0 ? index / replicas.atoms_per_replica : -1);
  }
  i0 = 0;
  real q = 0;
  if constexpr (SKIP_UNCHARGED) {
    if (atom < natoms) {
      const real4 p = posq[atom];
      q = p.w;
      if (q != real(0)) axis_stencil(p, rc, d, nx, ny, nz, i0, theta);
    }
    if (q == real(0))
      for (int k = 0; k < P; ++k) theta[k] = 0;
  } else {
    if (atom < natoms) {
      const real4 p = posq[atom];
      q = p.w;
      axis_stencil(p, rc, d, nx, ny, nz, i0, theta);
    } else {
      for (int k = 0; k < P; ++k) theta[k] = 0;
    }
  }
#pragma unroll
  for (int k = 0; k < P; ++k) theta_s[d][k][a] = theta[k];
  index_s[d][a] = i0;
  if (d == 0) q_s[a] = q;
  return q;
}

// Adds the P^3 charge contributions of a spread block's first `count` atoms (stencils in the block's
// shared arrays) straight to the global fixed-point grid: the block's threads share the items,
// consecutive threads taking consecutive z points so that a warp's atomics touch few cache lines.
// A batch's atom adds to its replica's grid (replica_s, stage_atom_stencil).
template <typename real>
__device__ __forceinline__ void add_stencils_to_grid(int count, const real (&theta_s)[3][P][kSpreadAtoms],
                                                     const int (&index_s)[3][kSpreadAtoms],
                                                     const real (&q_s)[kSpreadAtoms], int nx, int ny, int nz,
                                                     unsigned long long* __restrict__ grid,
                                                     const int (&replica_s)[kSpreadAtoms]) {
  const int items = count * P3;
  for (int item = threadIdx.x; item < items; item += kSpreadThreads) {
    const int a = item / P3;
    const real q = q_s[a];
    if (q == real(0)) continue;
    const int pt = item - a * P3;
    const int ix = pt / (P * P);
    const int rest = pt - ix * (P * P);
    const int iy = rest / P;
    const int iz = rest - iy * P;
    int gx = index_s[0][a] + ix;
    if (gx >= nx) gx -= nx;
    int gy = index_s[1][a] + iy;
    if (gy >= ny) gy -= ny;
    int gz = index_s[2][a] + iz;
    if (gz >= nz) gz -= nz;
    const real v = q * theta_s[0][ix][a] * theta_s[1][iy][a] * theta_s[2][iz][a];
    const std::size_t replica_offset = static_cast<std::size_t>(replica_s[a]) * nx * ny * nz;
    atomicAdd(grid + replica_offset + (gx * ny + gy) * nz + gz, grid_fixed(v));
  }
}

// 1. Charge spreading, one block per kSpreadAtoms consecutive atoms. Threads 0..95 compute the grid
// index and weights of one (atom, axis) each into shared memory; then every thread adds grid
// contributions, consecutive threads taking consecutive z points so that a warp's atomics touch few
// cache lines.
template <typename real, typename real4>
__global__ void __launch_bounds__(kSpreadThreads)
    spread_kernel(const real4* __restrict__ posq, int natoms, Recip rc, int nx, int ny, int nz,
                  unsigned long long* __restrict__ grid, PmeReplicas replicas) {
  __shared__ real theta_s[3][P][kSpreadAtoms];
  __shared__ int index_s[3][kSpreadAtoms];
  __shared__ real q_s[kSpreadAtoms];
  __shared__ int replica_s[kSpreadAtoms];
  const int first = blockIdx.x * kSpreadAtoms;
  const int t = threadIdx.x;
  if (t < 3 * kSpreadAtoms) {
    const int a = t % kSpreadAtoms;
    const int d = t / kSpreadAtoms;
    int i0;
    stage_atom_stencil<false>(posq, natoms, first + a, a, d, rc, nx, ny, nz, theta_s, index_s, q_s, i0, replicas,
                              nullptr, replica_s);
  }
  __syncthreads();
  add_stencils_to_grid(min(kSpreadAtoms, natoms - first), theta_s, index_s, q_s, nx, ny, nz, grid, replica_s);
}

// 1'. Mixed precision, atoms spatially sorted in blocks of 32 (the evaluator's copy): each block first
// sums its atoms' contributions in a shared-memory tile of 32-bit fixed point (scale 2^24: 6e-8 e per
// contribution; a tile point holds at most 32 contributions of |q| 0.22 each, far inside the range
// for any |q| < 16), then adds each touched tile point to the global grid once (scale 2^40, the tile
// value shifted): about a third of the global atomics of spread_kernel, since a compact block's 125-
// point stencils overlap. Integer sums: the grid is the same bit for bit whatever order the adds
// happen in. A block whose charged atoms span more than kTileSide points along an axis (padding, a
// non-compact block) adds to the global grid directly, as spread_kernel.
constexpr int kTileSide = 16;
constexpr float kTileScaleF = 16777216.0f;  // 2^24
constexpr int kTileToGridShift = 16;        // 2^40 / 2^24

// The block's extent along axis d, relative to its first charged atom (periodic wrap undone), by the
// warp of axis d (lane a: the block's atom a, of charge q and first grid index i0): each atom's stencil
// origin relative to the tile's, and the tile's origin and span (0 for a block without charges).
__device__ __forceinline__ void record_block_extent(float q, int i0, int a, int d, int nx, int ny, int nz,
                                                    int (&local_s)[3][kSpreadAtoms], int (&origin_s)[3],
                                                    int (&span_s)[3]) {
  const unsigned int charged = __ballot_sync(0xffffffffu, q != 0.0f);
  const int n = d == 0 ? nx : (d == 1 ? ny : nz);
  const int reference = charged ? __shfl_sync(0xffffffffu, i0, __ffs(charged) - 1) : 0;
  int offset = i0 - reference;
  if (offset >= n / 2) offset -= n;
  if (offset < -(n / 2)) offset += n;
  int lo = q != 0.0f ? offset : 1 << 30, hi = q != 0.0f ? offset : -(1 << 30);
  for (int off = 16; off > 0; off >>= 1) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
  }
  local_s[d][a] = offset - lo;
  if (a == 0) {
    origin_s[d] = ((reference + lo) % n + n) % n;
    span_s[d] = charged ? hi - lo + P : 0;
  }
}

// Each touched point of the sx x sy x sz tile to the global grid once, by the threads t < step * sz
// (step = kSpreadThreads / sz). Consecutive threads take consecutive z of a line (a warp's atomics fall
// in few cache lines): thread t takes z = t % sz of lines t / sz, t / sz + step, ... (line = lx * sy +
// ly, followed without divisions).
__device__ __forceinline__ void add_tile_to_grid(int t, const int (&tile)[kTileSide * kTileSide * kTileSide],
                                                 const int (&origin_s)[3], int sx, int sy, int sz, int nx, int ny,
                                                 int nz, int step, unsigned long long* __restrict__ grid) {
  const int lz = t % sz;
  int gz = origin_s[2] + lz;
  if (gz >= nz) gz -= nz;
  int lx = 0, ly = t / sz;
  while (ly >= sy) ly -= sy, ++lx;
  while (lx < sx) {
    const int v = tile[(lx * sy + ly) * sz + lz];
    if (v != 0) {
      int gx = origin_s[0] + lx;
      if (gx >= nx) gx -= nx;
      int gy = origin_s[1] + ly;
      if (gy >= ny) gy -= ny;
      atomicAdd(grid + (gx * ny + gy) * nz + gz,
                static_cast<unsigned long long>(static_cast<long long>(v) * (1ll << kTileToGridShift)));
    }
    ly += step;
    while (ly >= sy) ly -= sy, ++lx;
  }
}

// 1'. The tiled spread (see above): stencils and the block's extent, the tile, then the tile to the grid.
__global__ void __launch_bounds__(kSpreadThreads)
    spread_tiled_kernel(const float4* __restrict__ posq, int count, Recip rc, int nx, int ny, int nz,
                        unsigned long long* __restrict__ grid, PmeReplicas replicas, const int* __restrict__ original) {
  __shared__ float theta_s[3][P][kSpreadAtoms];
  __shared__ int index_s[3][kSpreadAtoms];  // first grid index of each atom's stencil, global
  __shared__ int local_s[3][kSpreadAtoms];  // the same relative to the tile origin
  __shared__ float q_s[kSpreadAtoms];
  __shared__ int origin_s[3], span_s[3];
  __shared__ int replica_s[kSpreadAtoms];  // each slot's replica (-1: unused); a block holds one replica's atoms
  __shared__ int tile[kTileSide * kTileSide * kTileSide];
  const int first = blockIdx.x * kSpreadAtoms;
  const int t = threadIdx.x;
  if (t < 3 * kSpreadAtoms) {  // warp d: axis d, lane a: atom a
    const int a = t % kSpreadAtoms;
    const int d = t / kSpreadAtoms;
    int i0;
    const float q = stage_atom_stencil<true>(posq, count, first + a, a, d, rc, nx, ny, nz, theta_s, index_s, q_s, i0,
                                             replicas, original, replica_s);
    record_block_extent(q, i0, a, d, nx, ny, nz, local_s, origin_s, span_s);
  }
  __syncthreads();
  const int sx = span_s[0], sy = span_s[1], sz = span_s[2];
  if (sx == 0) return;  // no charged atom in this block
  const int count_here = min(kSpreadAtoms, count - first);
  if (sx > kTileSide || sy > kTileSide || sz > kTileSide) {
    add_stencils_to_grid(count_here, theta_s, index_s, q_s, nx, ny, nz, grid, replica_s);
    return;
  }
  // The block's replica: its first slot's (a block in use starts with an atom; an unused one has no charge).
  grid += static_cast<std::size_t>(max(replica_s[0], 0)) * nx * ny * nz;
  // The tile holds the block's sx x sy x sz points (z fastest), zeroed here.
  const int points = sx * sy * sz;
  for (int i = t; i < points; i += kSpreadThreads) tile[i] = 0;
  __syncthreads();
  // Four threads per atom (kSpreadThreads = 4 * kSpreadAtoms), each adding every fourth (x, y) line
  // of its stencil, P points along z: the atom's z weights, charge and tile offset stay in
  // registers, and the lines are followed without divisions.
  static_assert(kSpreadThreads == 4 * kSpreadAtoms, "four threads per atom");
  {
    const int a = t >> 2;
    const float q = q_s[a];
    if (a < count_here && q != 0.0f) {
      float wz[P];
#pragma unroll
      for (int iz = 0; iz < P; ++iz) wz[iz] = theta_s[2][iz][a] * kTileScaleF;  // exact: a power of two
      const int x0 = local_s[0][a], y0 = local_s[1][a];
      int* base = tile + local_s[2][a];
      int ix = 0, iy = t & 3;  // line ix * P + iy
      while (ix < P) {
        const float qxy = q * theta_s[0][ix][a] * theta_s[1][iy][a];
        int* line = base + ((x0 + ix) * sy + y0 + iy) * sz;
#pragma unroll
        for (int iz = 0; iz < P; ++iz) atomicAdd(line + iz, __float2int_rn(qxy * wz[iz]));
        iy += 4;
        if (iy >= P) iy -= P, ++ix;
      }
    }
  }
  __syncthreads();
  const int step = kSpreadThreads / sz;  // lines taken at once
  if (t >= step * sz) return;
  add_tile_to_grid(t, tile, origin_s, sx, sy, sz, nx, ny, nz, step, grid);
}

// 2. Fixed-point grid -> real grid for the R2C transform. Two points per thread (16-byte loads, 8- or
// 16-byte stores; n is even or the last point is done alone); compute() then zeroes the fixed-point
// grid with a memset (grid_value, pme_grid.cuh).
template <typename real>
__global__ void __launch_bounds__(kGridThreads)
    grid_to_real_kernel(const unsigned long long* __restrict__ fixed, real* __restrict__ out, int n) {
  using real2 = std::conditional_t<std::is_same_v<real, float>, float2, double2>;
  const int pair = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = 2 * pair;
  const real* tag = nullptr;
  if (i + 1 < n) {
    const ulonglong2 v = __ldcs(reinterpret_cast<const ulonglong2*>(fixed) + pair);
    real2 r;
    r.x = grid_value(v.x, tag);
    r.y = grid_value(v.y, tag);
    reinterpret_cast<real2*>(out)[pair] = r;
  } else if (i < n) {
    out[i] = grid_value(fixed[i], tag);
  }
}

// Influence function of CpuPme at grid frequency (kx, ky, kz) (full-grid indices), kJ/mol/e^2.
__device__ double influence_at(int kx, int ky, int kz, int nx, int ny, int nz, const Recip& rc, double factor,
                               double prefactor, const double* mod_x, const double* mod_y, const double* mod_z) {
  if (kx == 0 && ky == 0 && kz == 0) return 0.0;  // k = 0 left out (tin-foil boundary)
  const double m[3] = {double(kx < (nx + 1) / 2 ? kx : kx - nx), double(ky < (ny + 1) / 2 ? ky : ky - ny),
                       double(kz < (nz + 1) / 2 ? kz : kz - nz)};
  double m2 = 0.0;
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const double mc = m[0] * rc.r[c][0] + m[1] * rc.r[c][1] + m[2] * rc.r[c][2];
    m2 += mc * mc;
  }
  return prefactor * exp(-factor * m2) / (m2 * mod_x[kx] * mod_y[ky] * mod_z[kz]);
}

// Influence function on the half-complex grid [nx][ny][nz/2+1], symmetrised over k and -k. CpuPme
// multiplies the full complex grid by G(k) and keeps the real part of the backward transform; since
// the charge transform S is Hermitian that equals the transform of S(k) (G(k) + G(-k))/2, and the
// energy sum over the full grid is the same with either. G(k) != G(-k) only on Nyquist planes of
// triclinic boxes, where the signed frequency -n/2 does not change sign.
template <typename real>
__global__ void __launch_bounds__(kGridThreads)
    influence_kernel(int nx, int ny, int nz, Recip rc, double factor, double prefactor,
                     const double* __restrict__ moduli, real* __restrict__ influence) {
  const int nzh = nz / 2 + 1;
  const int total = nx * ny * nzh;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int kx = i / (ny * nzh);
  const int rest = i - kx * (ny * nzh);
  const int ky = rest / nzh;
  const int kz = rest - ky * nzh;
  const double* mod_x = moduli;
  const double* mod_y = moduli + nx;
  const double* mod_z = moduli + nx + ny;
  const double g = influence_at(kx, ky, kz, nx, ny, nz, rc, factor, prefactor, mod_x, mod_y, mod_z);
  const double g_minus = influence_at((nx - kx) % nx, (ny - ky) % ny, (nz - kz) % nz, nx, ny, nz, rc, factor,
                                      prefactor, mod_x, mod_y, mod_z);
  influence[i] = static_cast<real>(0.5 * (g + g_minus));
}

// 4. Convolution with the influence function; with ENERGY, E = 1/2 sum over the full grid of
// G |S|^2, where each stored element with 0 < kz < nz/2 stands for itself and its conjugate partner.
template <typename real, typename complex, bool ENERGY>
__global__ void __launch_bounds__(kGridThreads)
    convolve_kernel(complex* __restrict__ grid, const real* __restrict__ influence, int total, int nz,
                    unsigned long long* __restrict__ energy_fixed, int energy_stride) {
  // blockIdx.y: the replica of a batch (its grid and energy).
  grid += static_cast<std::size_t>(blockIdx.y) * total;
  if (ENERGY) energy_fixed += static_cast<std::size_t>(blockIdx.y) * energy_stride;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  double e = 0.0;
  if (i < total) {
    const complex s = grid[i];
    const real g = influence[i];
    if (ENERGY) {
      const int nzh = nz / 2 + 1;
      const int kz = i % nzh;
      const double weight = (kz == 0 || 2 * kz == nz) ? 1.0 : 2.0;
      e = weight * double(g) * (double(s.x) * double(s.x) + double(s.y) * double(s.y));
    }
    complex out;
    out.x = s.x * g;
    out.y = s.y * g;
    grid[i] = out;
  }
  if (ENERGY) {
    const double sum = block_sum(e);
    if (threadIdx.x == 0) atomic_add_fixed(energy_fixed, 0.5 * sum);
  }
}

// 6. Force interpolation. The atom's grid index and B-spline weights along each axis.
template <typename real>
struct GatherStencil {
  int i0[3];
  int gz[P];  // z indices, wrapped
  real th[3][P], dth[3][P];
};

template <typename real, typename real4>
__device__ __forceinline__ void gather_stencil(const real4& p, const Recip& rc, int nx, int ny, int nz,
                                               GatherStencil<real>& st) {
  const int n[3] = {nx, ny, nz};
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    double w;
    grid_position(p.x, p.y, p.z, rc.r[0][d], rc.r[1][d], rc.r[2][d], n[d], st.i0[d], w);
    bspline_weights<P, real>(static_cast<real>(w), st.th[d], st.dth[d]);
  }
#pragma unroll
  for (int iz = 0; iz < P; ++iz) {
    st.gz[iz] = st.i0[2] + iz;
    if (st.gz[iz] >= nz) st.gz[iz] -= nz;
  }
}

// Row (gx, gy) of the stencil summed along z with the z weights (s) and their derivatives (ds).
template <typename real>
__device__ __forceinline__ void gather_row(const real* __restrict__ grid, int gx, int gy, int ny, int nz,
                                           const GatherStencil<real>& st, real& s, real& ds) {
  const real* row = grid + (gx * ny + gy) * nz;
  s = 0;
  ds = 0;
#pragma unroll
  for (int iz = 0; iz < P; ++iz) {
    const real v = __ldg(row + st.gz[iz]);
    s += st.th[2][iz] * v;
    ds += st.dth[2][iz] * v;
  }
}

// Adds stencil row (ix, iy)'s sums s, ds to the gradient along the scaled fractional coordinates. Both gather
// kernels add every row through here, in the same (ix, iy) order, so their forces are the same bit for bit.
template <typename real>
__device__ __forceinline__ void gather_add_row(const GatherStencil<real>& st, int ix, int iy, real s, real ds,
                                               real& fx, real& fy, real& fz) {
  fx += st.dth[0][ix] * st.th[1][iy] * s;
  fy += st.th[0][ix] * st.dth[1][iy] * s;
  fz += st.th[0][ix] * st.th[1][iy] * ds;
}

// Force component c (kJ/mol/nm) from the gradient along the scaled fractional coordinates u_d = n_d s_d (the
// chain rule to Cartesian x).
template <typename real>
__device__ __forceinline__ double gather_force(real q, real fx, real fy, real fz, const Recip& rc, int nx, int ny,
                                               int nz, int c) {
  const double gu[3] = {double(fx) * nx, double(fy) * ny, double(fz) * nz};
  return -double(q) * (gu[0] * rc.r[c][0] + gu[1] * rc.r[c][1] + gu[2] * rc.r[c][2]);
}

// One thread per atom. With `original` (the sorted copy's slot -> atom map) the atoms are read in spatial
// order, so a warp's stencils overlap and its grid reads hit the cache; the force goes to the atom's own index.
template <typename real, typename real4>
__global__ void __launch_bounds__(kGatherThreads)
    gather_kernel(const real4* __restrict__ posq, int natoms, const int* __restrict__ original, Recip rc, int nx,
                  int ny, int nz, const real* __restrict__ grid, unsigned long long* __restrict__ force,
                  int stride, PmeReplicas replicas) {
  const int slot = blockIdx.x * blockDim.x + threadIdx.x;
  if (slot >= natoms) return;
  const real4 p = posq[slot];
  const real q = p.w;
  if (q == real(0)) return;  // also every unused slot of a sorted copy
  const int atom = original != nullptr ? original[slot] : slot;
  if (replicas.count > 1) grid += static_cast<std::size_t>(atom / replicas.atoms_per_replica) * nx * ny * nz;
  GatherStencil<real> st;
  gather_stencil(p, rc, nx, ny, nz, st);
  real fx = 0, fy = 0, fz = 0;
#pragma unroll
  for (int ix = 0; ix < P; ++ix) {
    int gx = st.i0[0] + ix;
    if (gx >= nx) gx -= nx;
#pragma unroll
    for (int iy = 0; iy < P; ++iy) {
      int gy = st.i0[1] + iy;
      if (gy >= ny) gy -= ny;
      real s, ds;
      gather_row(grid, gx, gy, ny, nz, st, s, ds);
      gather_add_row(st, ix, iy, s, ds, fx, fy, fz);
    }
  }
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const double f = gather_force(q, fx, fy, fz, rc, nx, ny, nz, c);
    atomic_add_fixed(force + static_cast<std::size_t>(c) * stride + atom, f);
  }
}

// P threads per atom, for small systems, where the gather is latency-bound: thread `part` of an atom loads
// its stencil's x plane `part` (25 of 125 points) and sums each of the plane's rows along z; then every
// thread of the atom takes the rows' sums by shuffles and adds them up as gather_kernel does (gather_add_row,
// same order), so the forces are gather_kernel's bit for bit: a replica in a batch (one thread
// per atom) steps as it does alone. Threads 0, 1, 2 of the atom add a force component each.
constexpr int kGatherAtomsPerWarp = 32 / P;  // lanes past kGatherAtomsPerWarp * P idle

template <typename real, typename real4>
__global__ void __launch_bounds__(kGatherThreads)
    gather_planes_kernel(const real4* __restrict__ posq, int natoms, const int* __restrict__ original, Recip rc,
                         int nx, int ny, int nz, const real* __restrict__ grid, unsigned long long* __restrict__ force,
                         int stride, PmeReplicas replicas) {
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = thread & 31;
  const int group = lane / P;
  const int part = lane - group * P;
  const int first_lane = group * P;
  const int slot = (thread >> 5) * kGatherAtomsPerWarp + group;
  real4 p{};
  if (group < kGatherAtomsPerWarp && slot < natoms) p = posq[slot];
  const real q = p.w;  // 0 also for every unused slot of a sorted copy: such threads only join the shuffles
  int atom = slot;
  GatherStencil<real> st{};
  real s_plane[P] = {}, ds_plane[P] = {};
  if (q != real(0)) {
    atom = original != nullptr ? original[slot] : slot;
    if (replicas.count > 1) grid += static_cast<std::size_t>(atom / replicas.atoms_per_replica) * nx * ny * nz;
    gather_stencil(p, rc, nx, ny, nz, st);
    int gx = st.i0[0] + part;
    if (gx >= nx) gx -= nx;
#pragma unroll
    for (int iy = 0; iy < P; ++iy) {
      int gy = st.i0[1] + iy;
      if (gy >= ny) gy -= ny;
      gather_row(grid, gx, gy, ny, nz, st, s_plane[iy], ds_plane[iy]);
    }
  }
  real fx = 0, fy = 0, fz = 0;
#pragma unroll
  for (int ix = 0; ix < P; ++ix)
#pragma unroll
    for (int iy = 0; iy < P; ++iy) {
      const real s = __shfl_sync(0xffffffffu, s_plane[iy], first_lane + ix);
      const real ds = __shfl_sync(0xffffffffu, ds_plane[iy], first_lane + ix);
      gather_add_row(st, ix, iy, s, ds, fx, fy, fz);
    }
  if (q == real(0) || part >= 3) return;
  double f = 0.0;  // component `part`, chosen by selects (a runtime index into rc would put it in local memory)
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const double fc = gather_force(q, fx, fy, fz, rc, nx, ny, nz, c);
    f = c == part ? fc : f;
  }
  atomic_add_fixed(force + static_cast<std::size_t>(part) * stride + atom, f);
}

}  // namespace

// ---- CufftPlan ----

CufftPlan::~CufftPlan() {
  if (valid_) cufftDestroy(handle_);
}

void CufftPlan::create_3d(int nx, int ny, int nz, cufftType type) {
  if (valid_) {
    cufftDestroy(handle_);
    valid_ = false;
  }
  MDSIM_CUFFT_CHECK(cufftPlan3d(&handle_, nx, ny, nz, type));
  valid_ = true;
}

void CufftPlan::create_batch(int nx, int ny, int nz, cufftType type, int batch) {
  if (valid_) {
    cufftDestroy(handle_);
    valid_ = false;
  }
  int n[3] = {nx, ny, nz};
  // Null embeddings: the basic layout, each transform's input and output right after the previous one's
  // (nx ny nz reals, nx ny (nz/2 + 1) complex values), as the grids are stored.
  MDSIM_CUFFT_CHECK(cufftPlanMany(&handle_, 3, n, nullptr, 1, 0, nullptr, 1, 0, type, batch));
  valid_ = true;
}

// ---- CudaPme ----

template <typename real>
CudaPme<real>::CudaPme(int nx, int ny, int nz, double alpha_per_nm, int num_atoms, PmeReplicas replicas)
    : n_{nx, ny, nz}, alpha_(alpha_per_nm), num_atoms_(num_atoms), replicas_(replicas) {
  if (nx < P || ny < P || nz < P)
    throw RuntimeError(fmt::format("CudaPme: grid {}x{}x{} has fewer than {} points along some axis", nx, ny, nz, P));
  const long long points = static_cast<long long>(nx) * ny * nz;
  if (replicas.count >= 1 && replicas.atoms_per_replica == 0) replicas_.atoms_per_replica = num_atoms / replicas.count;
  if (replicas.count < 1 || replicas_.atoms_per_replica * replicas.count != num_atoms)
    throw RuntimeError(fmt::format("CudaPme: {} replicas of {} atoms for {} atoms", replicas.count,
                                   replicas_.atoms_per_replica, num_atoms));
  replicas_.atoms_per_replica = std::max(replicas_.atoms_per_replica, 1);  // no atoms: nothing is launched
  {
    int device = 0;
    MDSIM_CUDA_CHECK(cudaGetDevice(&device));
    gather_per_plane_ = num_atoms <= kGatherPlanesAtomsPerSm * multiprocessor_count(device);
  }
  if (points * replicas.count > std::numeric_limits<int>::max() / 2)
    throw RuntimeError(fmt::format("CudaPme: grid {}x{}x{} is too large{}", nx, ny, nz,
                                   replicas.count > 1 ? fmt::format(" for {} replicas", replicas.count) : ""));
  if (!(alpha_per_nm > 0.0) || !std::isfinite(alpha_per_nm))
    throw RuntimeError(fmt::format("CudaPme: Ewald alpha must be positive and finite (got {})", alpha_per_nm));
  if (num_atoms < 0) throw RuntimeError(fmt::format("CudaPme: negative atom count {}", num_atoms));

  // B-spline moduli from the plan both platforms use.
  {
    std::vector<double> moduli;
    moduli.reserve(static_cast<std::size_t>(nx + ny + nz));
    for (const int n : {nx, ny, nz}) {
      const std::vector<double> m = pme_bspline_moduli(n);
      moduli.insert(moduli.end(), m.begin(), m.end());
    }
    moduli_.upload(moduli);
  }

  const std::size_t replica_count = static_cast<std::size_t>(replicas.count);
  const std::size_t real_points = static_cast<std::size_t>(points);
  const std::size_t half_points = static_cast<std::size_t>(nx) * ny * (nz / 2 + 1);
  grid_fixed_.resize(real_points * replica_count);
  grid_real_.resize(real_points * replica_count);
  grid_complex_.resize(2 * half_points * replica_count);
  influence_.resize(half_points);  // one box: one influence function for every replica
  grid_fixed_.zero(nullptr);
  MDSIM_CUDA_CHECK(cudaStreamSynchronize(nullptr));

  // Mixed precision on a grid with line transforms: the line passes (pme_line_fft.hpp), no cuFFT plans; their
  // launches index replicas in the grid's y dimension (at most 65,535). MDSIM_PME_LINE_FFT=0 keeps cuFFT (for
  // comparisons).
  if constexpr (std::is_same_v<real, float>) {
    const char* env = std::getenv("MDSIM_PME_LINE_FFT");
    line_fft_ = line_fft_supports(nx, ny, nz) && replicas.count <= 65535 && (env == nullptr || std::string(env) != "0");
    if (line_fft_) return;
  }
  if (replicas.count == 1) {
    forward_.create_3d(nx, ny, nz, Fft<real>::kForward);
    backward_.create_3d(nx, ny, nz, Fft<real>::kBackward);
  } else {
    forward_.create_batch(nx, ny, nz, Fft<real>::kForward, replicas.count);
    backward_.create_batch(nx, ny, nz, Fft<real>::kBackward, replicas.count);
  }
}

template <typename real>
CudaPme<real>::~CudaPme() = default;

template <typename real>
void CudaPme<real>::update_influence(const BoxVectors<double>& box, cudaStream_t stream) {
  const int nx = n_[0], ny = n_[1], nz = n_[2];
  const Recip rc = make_recip(box);
  const double factor = kPi * kPi / (alpha_ * alpha_);
  const double prefactor = kOneFourPiEps0 / (kPi * box.volume());
  const long long total = static_cast<long long>(nx) * ny * (nz / 2 + 1);
  influence_kernel<real><<<blocks_for(total, kGridThreads), kGridThreads, 0, stream>>>(
      nx, ny, nz, rc, factor, prefactor, moduli_.data(), influence_.data());
  MDSIM_CUDA_CHECK_LAUNCH();
  last_box_ = box;
  have_box_ = true;
}

template <typename real>
void CudaPme<real>::compute(const real4* posq, const BoxVectors<double>& box, unsigned long long* force_fixed,
                            int stride, unsigned long long* energy_fixed, cudaStream_t stream, SortedAtoms sorted) {
  if (num_atoms_ == 0) return;
  const bool sorted_only = !reads_original_order() && sorted.posq != nullptr && sorted.original != nullptr;
  if ((posq == nullptr && !sorted_only) || force_fixed == nullptr)
    throw RuntimeError("CudaPme::compute: null positions or forces");
  if (stride < num_atoms_)
    throw RuntimeError(fmt::format("CudaPme::compute: force stride {} is smaller than the atom count {}", stride,
                                   num_atoms_));
  if (!(box.a.x > 0.0) || !(box.b.y > 0.0) || !(box.c.z > 0.0))
    throw RuntimeError("CudaPme::compute: the box is not in reduced form with positive diagonal");

  const bool box_changed = !have_box_ || box.a.x != last_box_.a.x || box.a.y != last_box_.a.y ||
                           box.a.z != last_box_.a.z || box.b.x != last_box_.b.x || box.b.y != last_box_.b.y ||
                           box.b.z != last_box_.b.z || box.c.x != last_box_.c.x || box.c.y != last_box_.c.y ||
                           box.c.z != last_box_.c.z;
  if (box_changed) update_influence(box, stream);

  const int nx = n_[0], ny = n_[1], nz = n_[2];
  const Recip rc = make_recip(box);

  if constexpr (std::is_same_v<real, float>) {
    if (sorted.posq != nullptr) {
      spread_tiled_kernel<<<blocks_for(sorted.count, kSpreadAtoms), kSpreadThreads, 0, stream>>>(
          sorted.posq, sorted.count, rc, nx, ny, nz, grid_fixed_.data(), replicas_, sorted.original);
    } else {
      spread_kernel<real, real4><<<blocks_for(num_atoms_, kSpreadAtoms), kSpreadThreads, 0, stream>>>(
          posq, num_atoms_, rc, nx, ny, nz, grid_fixed_.data(), replicas_);
    }
  } else {
    spread_kernel<real, real4><<<blocks_for(num_atoms_, kSpreadAtoms), kSpreadThreads, 0, stream>>>(
        posq, num_atoms_, rc, nx, ny, nz, grid_fixed_.data(), replicas_);
  }
  MDSIM_CUDA_CHECK_LAUNCH();
  timeline_mark(stream, "pme: spread");
  if constexpr (std::is_same_v<real, float>) {
    if (line_fft_) {
      LineFftGrids grids;
      grids.n[0] = nx, grids.n[1] = ny, grids.n[2] = nz;
      grids.replicas = replicas_.count;
      grids.fixed = grid_fixed_.data();
      grids.half = grid_complex_.data();
      grids.potential = grid_real_.data();
      grids.influence = influence_.data();
      line_fft_convolve(grids, energy_fixed, replicas_.energy_stride, stream);
      timeline_mark(stream, "pme: line transforms and convolution");
      gather(sorted, posq, box, force_fixed, stride, stream);
      return;
    }
  }
  using complex = typename Fft<real>::complex;
  const int points = nx * ny * nz * replicas_.count;  // every replica's grid
  const int half_points = nx * ny * (nz / 2 + 1);     // one replica's
  complex* cgrid = reinterpret_cast<complex*>(grid_complex_.data());
  grid_to_real_kernel<real><<<blocks_for((points + 1) / 2, kGridThreads), kGridThreads, 0, stream>>>(
      grid_fixed_.data(), grid_real_.data(), points);
  MDSIM_CUDA_CHECK_LAUNCH();
  grid_fixed_.zero(stream);  // for the next call's spread
  timeline_mark(stream, "pme: grid to real, zeroed");

  MDSIM_CUFFT_CHECK(cufftSetStream(forward_.get(), stream));
  MDSIM_CUFFT_CHECK(Fft<real>::forward(forward_.get(), grid_real_.data(), cgrid));
  timeline_mark(stream, "pme: forward FFT");

  const dim3 convolve_grid(blocks_for(half_points, kGridThreads), replicas_.count);
  if (energy_fixed != nullptr) {
    convolve_kernel<real, complex, true><<<convolve_grid, kGridThreads, 0, stream>>>(
        cgrid, influence_.data(), half_points, nz, energy_fixed, replicas_.energy_stride);
  } else {
    convolve_kernel<real, complex, false><<<convolve_grid, kGridThreads, 0, stream>>>(
        cgrid, influence_.data(), half_points, nz, nullptr, 0);
  }
  MDSIM_CUDA_CHECK_LAUNCH();
  timeline_mark(stream, "pme: convolve");

  MDSIM_CUFFT_CHECK(cufftSetStream(backward_.get(), stream));
  MDSIM_CUFFT_CHECK(Fft<real>::backward(backward_.get(), cgrid, grid_real_.data()));
  timeline_mark(stream, "pme: backward FFT");
  gather(sorted, posq, box, force_fixed, stride, stream);
}

template <typename real>
void CudaPme<real>::gather(const SortedAtoms& sorted, const real4* posq, const BoxVectors<double>& box,
                           unsigned long long* force_fixed, int stride, cudaStream_t stream) {
  const int nx = n_[0], ny = n_[1], nz = n_[2];
  const Recip rc = make_recip(box);
  const real4* atoms = posq;
  int count = num_atoms_;
  const int* original = nullptr;
  if (sorted.posq != nullptr && sorted.original != nullptr) {
    atoms = sorted.posq;
    count = sorted.count;
    original = sorted.original;
  }
  if (gather_per_plane_) {
    const long long threads = 32ll * ((count + kGatherAtomsPerWarp - 1) / kGatherAtomsPerWarp);
    gather_planes_kernel<real, real4><<<blocks_for(threads, kGatherThreads), kGatherThreads, 0, stream>>>(
        atoms, count, original, rc, nx, ny, nz, grid_real_.data(), force_fixed, stride, replicas_);
  } else {
    gather_kernel<real, real4><<<blocks_for(count, kGatherThreads), kGatherThreads, 0, stream>>>(
        atoms, count, original, rc, nx, ny, nz, grid_real_.data(), force_fixed, stride, replicas_);
  }
  MDSIM_CUDA_CHECK_LAUNCH();
}

template class CudaPme<float>;
template class CudaPme<double>;

}  // namespace mdsim::cuda
