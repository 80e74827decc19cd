// Per-atom access shared by the dynamics kernels of the CUDA context (integrator, constraints,
// barostat, frames). Positions: the force evaluator's double4_16a array (nm), moved in place.
// Forces: the evaluator's 64-bit fixed point, SoA planes of `stride`.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/fixed_point.cuh"
#include "kernels/cuda/grid_size.cuh"
#include "physics/vec3.hpp"

namespace mdsim::cuda {

constexpr int kAtomThreads = 128;  // per-atom kernels

// Blocks of kAtomThreads for a per-atom kernel over n atoms.
inline int atom_blocks(long long n) { return blocks_for(n, kAtomThreads); }

__device__ __forceinline__ Vec3d load_position(const double4_16a* pos, int i) {
  const double4_16a p = pos[i];
  return Vec3d(p.x, p.y, p.z);
}

__device__ __forceinline__ void store_position(double4_16a* pos, int i, const Vec3d& x) {
  pos[i] = make_double4_16a(x.x, x.y, x.z, 0.0);
}

__device__ __forceinline__ Vec3d load_force(const unsigned long long* force, int stride, int i) {
  return Vec3d(from_fixed(force[i]), from_fixed(force[stride + i]), from_fixed(force[2 * stride + i]));
}

}  // namespace mdsim::cuda
