// CCMA on one thread block that owns whole coupled groups (their atoms and vectors in shared memory,
// or in global scratch): the iteration both the constraint kernels (constraint_kernels.cuh) and the
// fused LangevinMiddle step (langevin_step_kernels.cuh) run. It is the CPU reference's algorithm
// (kernels/cpu/cpu_constraints.cpp) step for step:
//   iteration i: delta_c = linearised multiplier of constraint c (positions: 0.5 mu (d^2 - r^2)/
//           (r . r_ref); velocities: -mu (v_ab . r_ref)/|r_ref|^2); stop when every constraint is
//           within the tolerance; delta' = (sparse inverse coupling matrix) delta; move the atoms
//           along r_ref.
// Each atom's update sums its constraints' contributions in ascending constraint order, as the CPU's
// sequential loop does; the result does not depend on thread order.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/constraint_layout.hpp"
#include "kernels/cuda/device_atoms.cuh"
#include "physics/ccma.hpp"
#include "physics/vec3.hpp"

namespace mdsim::cuda {

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

// Iterations from `first` on, until the first iteration >= at_least at which every constraint of
// the block has converged; returns that iteration. Whole block. linearise(k, ab) sets w.delta[k] for
// block constraint k between block-local atoms ab and says whether it has converged.
template <typename Linearise>
__device__ __forceinline__ int ccma_iterate(const CcmaView& c, const CcmaBlock& w, int first, int at_least,
                                            int max_iterations, const Linearise& linearise) {
  int iteration = first;
  for (; iteration < max_iterations; ++iteration) {
    int unconverged = 0;
    for (int k = threadIdx.x; k < w.nc; k += blockDim.x)
      if (!linearise(k, c.local[w.c_begin + k])) unconverged = 1;
    if (__syncthreads_or(unconverged) == 0 && iteration >= at_least) break;
    ccma_update(c, w);
  }
  return iteration;
}

// Positions: w.x converges onto the constraint distances along the reference vectors w.r_ref.
__device__ __forceinline__ int ccma_iterate_positions(const CcmaView& c, const CcmaBlock& w, double tolerance,
                                                      int first, int at_least, int max_iterations) {
  const CcmaBounds bounds = ccma_bounds(tolerance);
  return ccma_iterate(c, w, first, at_least, max_iterations, [&](int k, int2 ab) {
    bool converged = false;
    w.delta[k] = ccma_position_delta(w.x[ab.x] - w.x[ab.y], w.r_ref[k], c.distance[w.c_begin + k],
                                     c.reduced_mass[w.c_begin + k], bounds, converged);
    return converged;
  });
}

// Velocities: the components of w.x along the constraint vectors w.r_ref are removed until every
// relative rate is within the tolerance.
__device__ __forceinline__ int ccma_iterate_velocities(const CcmaView& c, const CcmaBlock& w, double tolerance,
                                                       int first, int at_least, int max_iterations) {
  return ccma_iterate(c, w, first, at_least, max_iterations, [&](int k, int2 ab) {
    bool converged = false;
    w.delta[k] = ccma_velocity_delta(w.x[ab.x] - w.x[ab.y], w.r_ref[k], w.r_ref2[k], c.reduced_mass[w.c_begin + k],
                                     tolerance, converged);
    return converged;
  });
}

}  // namespace mdsim::cuda
