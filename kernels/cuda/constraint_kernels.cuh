// Constraint kernels of the CUDA context (included by cuda_constraints.cu only): SETTLE for rigid
// waters (one thread per water, physics/settle.hpp) and CCMA for every other constraint, the
// CPU reference's iteration (ccma_block.cuh) over thread blocks that each own whole coupled groups.
// The coupling matrix is block diagonal over connected groups of constraints (an X-H_n cluster for
// HBonds), so every group evolves on its own; only the stopping test is global: the CPU stops all
// groups at the first iteration N at which every group is converged, and keeps updating converged
// groups until then. The GPU does the same without a grid-wide barrier, in two launches:
//   pass 1: each block iterates until its own groups are converged, at iteration n_b;
//   pass 2: N = max_b n_b; each block with n_b < N applies the updates of iterations n_b .. N-1
//           (exactly what the CPU applies to it) and stops at N when converged (should a converged
//           group have left the tolerance again, it iterates on until it is back inside).
// Also the layout conversions between the evaluator's double4_16a positions and Vec3d arrays.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/ccma_block.cuh"
#include "kernels/cuda/constraint_layout.hpp"
#include "kernels/cuda/device_atoms.cuh"
#include "physics/settle.hpp"
#include "physics/vec3.hpp"

namespace mdsim::cuda {

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


__global__ void copy_positions_kernel(int n, const double4_16a* __restrict__ pos, Vec3d* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = load_position(pos, i);
}

__global__ void vec3_to_positions_kernel(int n, const Vec3d* __restrict__ x, double4_16a* __restrict__ pos) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) store_position(pos, i, x[i]);
}

}  // namespace mdsim::cuda
