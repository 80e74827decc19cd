// CCMA on one warp that owns whole coupled groups (at most 32 constraints and 32 atoms, as small
// groups such as HBonds constraints pack): the iteration of ccma_block.cuh with the block's working
// set in registers. Lane k holds constraint k (its atoms' slots, length, reduced mass, reference
// vector and its row of the inverse coupling matrix), lane s holds touched atom s (its inverse mass,
// its constraints and its coordinates); values move between lanes by shuffles, so an iteration has
// no shared memory, no __syncthreads and no memory load. The arithmetic and its order are those of
// ccma_block.cuh (the CPU's order): the same linearised multipliers (physics/ccma.hpp), the
// same matrix-row sums in CSR order, each atom's moves summed in ascending constraint order. A warp
// stops when its own constraints have converged.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/constraint_layout.hpp"
#include "physics/ccma.hpp"
#include "physics/vec3.hpp"

namespace mdsim::cuda {

__device__ __forceinline__ Vec3d shfl_vec3(const Vec3d& x, int lane) {
  return Vec3d(__shfl_sync(0xffffffffu, x.x, lane), __shfl_sync(0xffffffffu, x.y, lane),
               __shfl_sync(0xffffffffu, x.z, lane));
}

// One lane's share of a warp's CCMA block. ROW: the most matrix entries in a row; ENTRIES: the most
// constraints on one atom (CudaConstraints picks the smallest instantiation that holds its plan).
template <int ROW, int ENTRIES>
struct CcmaWarp {
  int nc = 0, na = 0;  // the block's constraints and touched atoms
  // as constraint `lane` (lane < nc)
  int2 ab = make_int2(0, 0);  // block-local atom slots
  double distance = 0.0, reduced_mass = 0.0;
  int row_length = 0;
  int column[ROW];
  double value[ROW];
  Vec3d r_ref = Vec3d(0, 0, 0);
  double r_ref2 = 1.0;
  // as atom slot `lane` (lane < na)
  int atom = 0;
  double inverse_mass = 0.0;
  int entries = 0;
  int entry[ENTRIES];  // 2 k (the a of constraint k) or 2 k + 1 (its b), ascending k
};

template <int ROW, int ENTRIES>
__device__ __forceinline__ CcmaWarp<ROW, ENTRIES> ccma_warp_load(const CcmaView& c, int block, int lane) {
  CcmaWarp<ROW, ENTRIES> w;
  const int c_begin = c.block_constraint_start[block];
  const int a_begin = c.block_atom_start[block];
  w.nc = c.block_constraint_start[block + 1] - c_begin;
  w.na = c.block_atom_start[block + 1] - a_begin;
#pragma unroll
  for (int e = 0; e < ROW; ++e) {
    w.column[e] = lane;  // unused slots read the lane's own value and add nothing
    w.value[e] = 0.0;
  }
#pragma unroll
  for (int e = 0; e < ENTRIES; ++e) w.entry[e] = 0;
  if (lane < w.nc) {
    const int k = c_begin + lane;
    w.ab = c.local[k];
    w.distance = c.distance[k];
    w.reduced_mass = c.reduced_mass[k];
    const int begin = c.row_start[k];
    w.row_length = c.row_start[k + 1] - begin;
#pragma unroll
    for (int e = 0; e < ROW; ++e)
      if (e < w.row_length) {
        w.column[e] = c.column[begin + e];
        w.value[e] = c.value[begin + e];
      }
  }
  if (lane < w.na) {
    const int s = a_begin + lane;
    w.atom = c.atom_index[s];
    w.inverse_mass = c.atom_inverse_mass[s];
    const int begin = c.atom_start[s];
    w.entries = c.atom_start[s + 1] - begin;
#pragma unroll
    for (int e = 0; e < ENTRIES; ++e)
      if (e < w.entries) w.entry[e] = c.atom_entry[begin + e];
  }
  return w;
}

// Sets each constraint lane's reference vector from the atoms' coordinates x (one per atom lane).
template <int ROW, int ENTRIES>
__device__ __forceinline__ void ccma_warp_reference(CcmaWarp<ROW, ENTRIES>& w, const Vec3d& x) {
  const Vec3d r = shfl_vec3(x, w.ab.x) - shfl_vec3(x, w.ab.y);
  if ((threadIdx.x & 31) < w.nc) {
    w.r_ref = r;
    w.r_ref2 = dot(r, r);
  }
}

// Iterations until every constraint of the warp has converged (or max_iterations); x: this lane's
// atom's coordinates (positions or velocities), updated. linearise(x_a - x_b, converged) gives the
// lane's constraint's multiplier. Returns the iterations made. Whole warp.
template <int ROW, int ENTRIES, typename Linearise>
__device__ __forceinline__ int ccma_warp_iterate(const CcmaWarp<ROW, ENTRIES>& w, Vec3d& x, int max_iterations,
                                                 const Linearise& linearise) {
  const bool is_constraint = (threadIdx.x & 31) < w.nc;
  int iteration = 0;
  for (; iteration < max_iterations; ++iteration) {
    const Vec3d rp = shfl_vec3(x, w.ab.x) - shfl_vec3(x, w.ab.y);
    bool converged = true;
    const double delta = is_constraint ? linearise(rp, converged) : 0.0;
    if (__all_sync(0xffffffffu, converged)) break;
    // The preconditioned multiplier (row of the inverse coupling matrix), then this constraint's move
    // r_ref * multiplier, which each of its atoms scales by its inverse mass.
    double sum = 0.0;
#pragma unroll
    for (int e = 0; e < ROW; ++e) {
      const double d = __shfl_sync(0xffffffffu, delta, w.column[e]);
      if (e < w.row_length) sum += w.value[e] * d;
    }
    const Vec3d move = w.r_ref * sum;
#pragma unroll
    for (int e = 0; e < ENTRIES; ++e) {
      const Vec3d d = shfl_vec3(move, w.entry[e] >> 1);
      if (e < w.entries) {
        if (w.entry[e] & 1) x -= d * w.inverse_mass;
        else x += d * w.inverse_mass;
      }
    }
  }
  return iteration;
}

template <int ROW, int ENTRIES>
__device__ __forceinline__ int ccma_warp_positions(const CcmaWarp<ROW, ENTRIES>& w, Vec3d& x, double tolerance,
                                                   int max_iterations) {
  const CcmaBounds bounds = ccma_bounds(tolerance);
  return ccma_warp_iterate(w, x, max_iterations, [&](const Vec3d& rp, bool& converged) {
    return ccma_position_delta(rp, w.r_ref, w.distance, w.reduced_mass, bounds, converged);
  });
}

template <int ROW, int ENTRIES>
__device__ __forceinline__ int ccma_warp_velocities(const CcmaWarp<ROW, ENTRIES>& w, Vec3d& v, double tolerance,
                                                    int max_iterations) {
  return ccma_warp_iterate(w, v, max_iterations, [&](const Vec3d& vr, bool& converged) {
    return ccma_velocity_delta(vr, w.r_ref, w.r_ref2, w.reduced_mass, tolerance, converged);
  });
}

}  // namespace mdsim::cuda
