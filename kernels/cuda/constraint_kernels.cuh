// Constraint kernels of the CUDA Context (included by cuda_context.cu only): SETTLE for rigid waters
// (one thread per water, kernels/physics/settle.hpp) and CCMA for every other constraint, the CPU
// reference's algorithm (kernels/cpu/cpu_constraints.cpp) step for step:
//   iteration i: delta_c = linearised multiplier of constraint c (positions: 0.5 mu (d^2 - r^2)/
//           (r . r_ref); velocities: -mu (v_ab . r_ref)/|r_ref|^2); stop when every constraint is
//           within the tolerance; delta' = (sparse inverse coupling matrix) delta; move the atoms
//           along r_ref.
// The coupling matrix is block diagonal over connected groups of constraints (an X-H_n cluster for
// HBonds), so every group evolves on its own; only the stopping test is global: the CPU stops all
// groups at the first iteration N at which every group is converged, and keeps updating converged
// groups until then. The GPU does the same without a grid-wide barrier, in two launches over thread
// blocks that each own whole groups (their atoms and vectors in shared memory):
//   pass 1: each block iterates until its own groups are converged, at iteration n_b;
//   pass 2: N = max_b n_b; each block with n_b < N applies the updates of iterations n_b .. N-1
//           (exactly what the CPU applies to it) and stops at N when converged (should a converged
//           group have left the tolerance again, it iterates on until it is back inside).
// Each atom's update sums its constraints' contributions in ascending constraint order, as the CPU's
// sequential loop does; the result does not depend on thread order.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/integrator_kernels.cuh"
#include "kernels/physics/settle.hpp"
#include "kernels/physics/vec3.hpp"

namespace mdsim::cuda {

struct SettleWater {
  int o, h1, h2;
  double mass_o, mass_h;        // amu (1 / inverse mass, as the CPU computes them)
  double inv_o, inv_h1, inv_h2; // 1/amu
  double oh, hh;                // nm
};

// Positions of rigid waters: reference = the step's old (constrained) positions.
__global__ void settle_positions_kernel(int waters, const SettleWater* __restrict__ water,
                                        const Vec3d* __restrict__ reference, double4_16a* __restrict__ pos) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= waters) return;
  const SettleWater w = water[k];
  Vec3d a = load_position(pos, w.o), b = load_position(pos, w.h1), c = load_position(pos, w.h2);
  settle_positions(reference[w.o], reference[w.h1], reference[w.h2], a, b, c, w.mass_o, w.mass_h, w.oh, w.hh);
  store_position(pos, w.o, a);
  store_position(pos, w.h1, b);
  store_position(pos, w.h2, c);
}

__global__ void settle_velocities_kernel(int waters, const SettleWater* __restrict__ water,
                                         const double4_16a* __restrict__ pos, Vec3d* __restrict__ v) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= waters) return;
  const SettleWater w = water[k];
  Vec3d va = v[w.o], vb = v[w.h1], vc = v[w.h2];
  settle_velocities(load_position(pos, w.o), load_position(pos, w.h1), load_position(pos, w.h2), va, vb, vc, w.inv_o,
                    w.inv_h1, w.inv_h2);
  v[w.o] = va;
  v[w.h1] = vb;
  v[w.h2] = vc;
}

// Device view of the CCMA data (built on the host by cuda_context.cu from the CPU's construction).
// Constraints are numbered block by block (ascending original order within a block); every index
// below a block's data is local to the block (constraint k - constraint_begin, atom slot s -
// atom_begin). The working set lives in shared memory when use_shared, otherwise in the global
// scratch arrays (indexed like the constraint and atom arrays).
struct CcmaView {
  int blocks = 0;
  const int* block_constraint_start = nullptr;  // blocks + 1
  const int* block_atom_start = nullptr;        // blocks + 1
  const int2* atoms = nullptr;           // (a, b) per constraint, system atom indices
  const int2* local = nullptr;           // (a, b) per constraint, local atom slots
  const double* distance = nullptr;      // nm
  const double* reduced_mass = nullptr;  // 1 / (w_a + w_b)
  const int* row_start = nullptr;        // inverse coupling matrix: CSR rows (global entry offsets),
  const int* column = nullptr;           // local columns, in the CPU's element order
  const double* value = nullptr;
  const int* atom_index = nullptr;       // system index per touched atom
  const double* atom_inverse_mass = nullptr;
  const int* atom_start = nullptr;       // CSR into atom_entry (global entry offsets)
  const int* atom_entry = nullptr;       // 2 k (the atom is the a of local constraint k) or 2 k + 1 (the b)
  bool use_shared = false;
  Vec3d* x_scratch = nullptr;            // global working set when !use_shared
  Vec3d* r_ref_scratch = nullptr;
  double* r_ref2_scratch = nullptr;
  double* delta_scratch = nullptr;
  double* delta_tmp_scratch = nullptr;
  int* block_iterations = nullptr;       // n_b of pass 1, per block
  int* iterations = nullptr;             // [0] positions, [1] velocities: N of the last solve
};

// Dynamic shared memory for a block of `atoms` touched atoms and `constraints` constraints.
inline std::size_t ccma_shared_bytes(int atoms, int constraints) {
  return sizeof(double) * (3 * static_cast<std::size_t>(atoms) + 6 * static_cast<std::size_t>(constraints));
}

struct CcmaBlock {
  int c_begin, nc, a_begin, na;
  Vec3d* x;  // touched atoms' coordinates (positions or velocities)
  Vec3d* r_ref;
  double* r_ref2;
  double* delta;
  double* delta_tmp;
};

__device__ __forceinline__ CcmaBlock ccma_block(const CcmaView& c, double* shared) {
  CcmaBlock w;
  const int b = blockIdx.x;
  w.c_begin = c.block_constraint_start[b];
  w.nc = c.block_constraint_start[b + 1] - w.c_begin;
  w.a_begin = c.block_atom_start[b];
  w.na = c.block_atom_start[b + 1] - w.a_begin;
  if (c.use_shared) {
    w.x = reinterpret_cast<Vec3d*>(shared);
    w.r_ref = reinterpret_cast<Vec3d*>(shared + 3 * w.na);
    w.r_ref2 = shared + 3 * w.na + 3 * w.nc;
    w.delta = w.r_ref2 + w.nc;
    w.delta_tmp = w.delta + w.nc;
  } else {
    w.x = c.x_scratch + w.a_begin;
    w.r_ref = c.r_ref_scratch + w.c_begin;
    w.r_ref2 = c.r_ref2_scratch + w.c_begin;
    w.delta = c.delta_scratch + w.c_begin;
    w.delta_tmp = c.delta_tmp_scratch + w.c_begin;
  }
  return w;
}

// Pass 2: the iteration this block resumes at (n_b) and the global N; -1 when the block has nothing
// to do. Pass 1: 0 and 0.
__device__ __forceinline__ int2 ccma_resume(const CcmaView& c, bool finish, int slot) {
  __shared__ int2 range;
  if (!finish) return make_int2(0, 0);
  if (threadIdx.x == 0) {
    int n = 0;
    for (int b = 0; b < c.blocks; ++b) n = max(n, c.block_iterations[b]);
    range = make_int2(c.block_iterations[blockIdx.x], n);
    if (blockIdx.x == 0 && c.iterations) c.iterations[slot] = n;
  }
  __syncthreads();
  return range.x >= range.y ? make_int2(-1, -1) : range;
}

// The preconditioned update delta_tmp = M delta, then each touched atom's move along its
// constraints, summed in ascending constraint order (the CPU's sequential loop).
__device__ __forceinline__ void ccma_update(const CcmaView& c, const CcmaBlock& w) {
  for (int k = threadIdx.x; k < w.nc; k += blockDim.x) {
    double sum = 0.0;
    const int end = c.row_start[w.c_begin + k + 1];
    for (int e = c.row_start[w.c_begin + k]; e < end; ++e) sum += c.value[e] * w.delta[c.column[e]];
    w.delta_tmp[k] = sum;
  }
  __syncthreads();
  for (int s = threadIdx.x; s < w.na; s += blockDim.x) {
    const double inv_m = c.atom_inverse_mass[w.a_begin + s];
    Vec3d x = w.x[s];
    const int end = c.atom_start[w.a_begin + s + 1];
    for (int e = c.atom_start[w.a_begin + s]; e < end; ++e) {
      const int entry = c.atom_entry[e];
      const int k = entry >> 1;
      const Vec3d d = w.r_ref[k] * w.delta_tmp[k];
      if (entry & 1) x -= d * inv_m;
      else x += d * inv_m;
    }
    w.x[s] = x;
  }
  __syncthreads();
}

// The position iteration from `first` on: w.x (positions) converges onto the constraint distances
// along the reference vectors w.r_ref; stops at the first iteration >= at_least at which every
// constraint of the block is within the tolerance. Returns that iteration. Whole block.
__device__ __forceinline__ int ccma_iterate_positions(const CcmaView& c, const CcmaBlock& w, double tolerance,
                                                      int first, int at_least, int max_iterations) {
  const double lower = (1.0 - tolerance) * (1.0 - tolerance);
  const double upper = (1.0 + tolerance) * (1.0 + tolerance);
  int iteration = first;
  for (; iteration < max_iterations; ++iteration) {
    int unconverged = 0;
    for (int k = threadIdx.x; k < w.nc; k += blockDim.x) {
      const int2 ab = c.local[w.c_begin + k];
      const Vec3d rp = w.x[ab.x] - w.x[ab.y];
      const double rp2 = dot(rp, rp);
      const double d = c.distance[w.c_begin + k];
      const double d2 = d * d;
      w.delta[k] = 0.5 * c.reduced_mass[w.c_begin + k] * (d2 - rp2) / dot(rp, w.r_ref[k]);
      if (!(rp2 >= lower * d2 && rp2 <= upper * d2)) unconverged = 1;
    }
    if (__syncthreads_or(unconverged) == 0 && iteration >= at_least) break;
    ccma_update(c, w);
  }
  return iteration;
}

// The velocity iteration, likewise: the components of w.x (velocities) along the constraint vectors
// w.r_ref are removed until every relative rate is within the tolerance.
__device__ __forceinline__ int ccma_iterate_velocities(const CcmaView& c, const CcmaBlock& w, double tolerance,
                                                       int first, int at_least, int max_iterations) {
  int iteration = first;
  for (; iteration < max_iterations; ++iteration) {
    int unconverged = 0;
    for (int k = threadIdx.x; k < w.nc; k += blockDim.x) {
      const int2 ab = c.local[w.c_begin + k];
      const Vec3d vr = w.x[ab.x] - w.x[ab.y];
      const double rate = dot(vr, w.r_ref[k]) / w.r_ref2[k];
      w.delta[k] = -c.reduced_mass[w.c_begin + k] * rate;
      if (!(fabs(rate) <= tolerance)) unconverged = 1;
    }
    if (__syncthreads_or(unconverged) == 0 && iteration >= at_least) break;
    ccma_update(c, w);
  }
  return iteration;
}

__device__ __forceinline__ void ccma_finish_block(const CcmaView& c, bool finish, int iteration) {
  if (!finish && threadIdx.x == 0) c.block_iterations[blockIdx.x] = iteration;
}

// Positions onto the constraint surface along the constraint vectors of `reference`; launched over
// c.blocks blocks with finish = false, then (double precision: the CPU's global iteration count) again
// with finish = true.
__global__ void __launch_bounds__(1024)
    ccma_positions_kernel(CcmaView c, const Vec3d* __restrict__ reference, double4_16a* __restrict__ pos,
                          double tolerance, int max_iterations, bool finish) {
  extern __shared__ double ccma_shared[];
  const int2 range = ccma_resume(c, finish, 0);
  if (range.x < 0) return;
  const CcmaBlock w = ccma_block(c, ccma_shared);
  for (int s = threadIdx.x; s < w.na; s += blockDim.x) w.x[s] = load_position(pos, c.atom_index[w.a_begin + s]);
  for (int k = threadIdx.x; k < w.nc; k += blockDim.x) {
    const int2 ab = c.atoms[w.c_begin + k];
    const Vec3d r = reference[ab.x] - reference[ab.y];
    w.r_ref[k] = r;
    w.r_ref2[k] = dot(r, r);
  }
  __syncthreads();
  const int iteration = ccma_iterate_positions(c, w, tolerance, range.x, range.y, max_iterations);
  for (int s = threadIdx.x; s < w.na; s += blockDim.x) store_position(pos, c.atom_index[w.a_begin + s], w.x[s]);
  ccma_finish_block(c, finish, iteration);
}

// Velocities: removes the components along the constraints of the geometry `pos`; launched like
// ccma_positions_kernel.
__global__ void __launch_bounds__(1024)
    ccma_velocities_kernel(CcmaView c, const double4_16a* __restrict__ pos, Vec3d* __restrict__ v, double tolerance,
                           int max_iterations, bool finish) {
  extern __shared__ double ccma_shared[];
  const int2 range = ccma_resume(c, finish, 1);
  if (range.x < 0) return;
  const CcmaBlock w = ccma_block(c, ccma_shared);
  for (int s = threadIdx.x; s < w.na; s += blockDim.x) w.x[s] = v[c.atom_index[w.a_begin + s]];
  for (int k = threadIdx.x; k < w.nc; k += blockDim.x) {
    const int2 ab = c.atoms[w.c_begin + k];
    const Vec3d r = load_position(pos, ab.x) - load_position(pos, ab.y);
    w.r_ref[k] = r;
    w.r_ref2[k] = dot(r, r);
  }
  __syncthreads();
  const int iteration = ccma_iterate_velocities(c, w, tolerance, range.x, range.y, max_iterations);
  for (int s = threadIdx.x; s < w.na; s += blockDim.x) v[c.atom_index[w.a_begin + s]] = w.x[s];
  ccma_finish_block(c, finish, iteration);
}

}  // namespace mdsim::cuda
