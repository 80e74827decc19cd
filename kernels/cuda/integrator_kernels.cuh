// Integrator kernels of the CUDA context (included by cuda_integrator.cu only). One thread per atom
// for the per-atom pieces of physics/integrator_steps.hpp (the functions the CPU reference
// context calls), and deterministic reductions for the centre-of-mass velocity and the kinetic
// energy. Positions and forces as in device_atoms.cuh; velocities and the step's old/unconstrained
// positions: Vec3d arrays.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device_atoms.cuh"
#include "kernels/cuda/replica_dynamics.cuh"
#include "physics/integrator_steps.hpp"
#include "physics/philox.hpp"
#include "physics/vec3.hpp"

namespace mdsim::cuda {

constexpr int kReduceThreads = 1024;  // single-block reductions

// Sum over the block of one double per thread; the result is valid in thread 0. Fixed order (a
// tree over shared memory), so the sum is the same every run. blockDim.x must be THREADS.
template <int THREADS = kReduceThreads>
__device__ __forceinline__ double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width >>= 1) {
    if (static_cast<int>(threadIdx.x) < width) shared[threadIdx.x] += shared[threadIdx.x + width];
    __syncthreads();
  }
  return shared[0];
}

// block_sum of each component of a vector (valid in thread 0).
template <int THREADS = kReduceThreads>
__device__ __forceinline__ Vec3d block_sum3(const Vec3d& value, double* shared) {
  const double x = block_sum<THREADS>(value.x, shared);
  __syncthreads();
  const double y = block_sum<THREADS>(value.y, shared);
  __syncthreads();
  const double z = block_sum<THREADS>(value.z, shared);
  return Vec3d(x, y, z);
}

// Centre-of-mass velocity: sum m v / sum m (total mass given). Each of com_velocity_blocks(n) blocks
// of kComVelocityThreads sums its fixed grid-stride share of the atoms into partial[block]; the last
// block to finish adds the partials in block order, so the result is the same every run. done_count
// must be 0 before the first launch; the kernel leaves it 0. Blocks of 256 threads, about 4 atoms
// each, so that a large system spreads over enough blocks to fill the GPU. A replica batch launches
// gridDim.y = replicas, n atoms each: replica r's velocity (the same sums as alone) into com_velocity[r], from
// partial[r kComVelocityMaxBlocks ...] and done_count[r]. At a step (*step, the count before it) that is not a
// multiple of `interval` the motion is not removed: the velocity is set to zero and nothing is summed.
constexpr int kComVelocityThreads = 256;
constexpr int kComVelocityMaxBlocks = kComVelocityThreads;  // the last block adds one partial per thread
inline int com_velocity_blocks(int n) {
  const int per_block = 4 * kComVelocityThreads;
  return n <= per_block ? 1 : (n / per_block + 1 < kComVelocityMaxBlocks ? n / per_block + 1 : kComVelocityMaxBlocks);
}
__global__ void __launch_bounds__(kComVelocityThreads)
    com_velocity_kernel(int n, const double* __restrict__ mass, const Vec3d* __restrict__ v, double inverse_total_mass,
                        Vec3d* __restrict__ partial, unsigned int* __restrict__ done_count,
                        Vec3d* __restrict__ com_velocity, const long long* __restrict__ step, int interval) {
  __shared__ double shared[kComVelocityThreads];
  __shared__ bool last;
  const std::size_t replica = blockIdx.y;
  if (interval > 1 && *step % interval != 0) {  // grid-uniform
    if (blockIdx.x == 0 && threadIdx.x == 0) com_velocity[replica] = Vec3d(0, 0, 0);
    return;
  }
  mass += replica * n;
  v += replica * n;
  partial += replica * kComVelocityMaxBlocks;
  done_count += replica;
  com_velocity += replica;
  Vec3d p(0, 0, 0);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p += v[i] * mass[i];
  const Vec3d block_total = block_sum3<kComVelocityThreads>(p, shared);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = block_total;
    __threadfence();
    last = atomicAdd(done_count, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  Vec3d q(0, 0, 0);
  const double* parts = reinterpret_cast<const double*>(partial);
  for (int b = threadIdx.x; b < static_cast<int>(gridDim.x); b += blockDim.x)  // past L1: other blocks wrote them
    q += Vec3d(__ldcg(parts + 3 * b), __ldcg(parts + 3 * b + 1), __ldcg(parts + 3 * b + 2));
  __syncthreads();
  const Vec3d total = block_sum3<kComVelocityThreads>(q, shared);
  if (threadIdx.x == 0) {
    *com_velocity = total * inverse_total_mass;
    *done_count = 0;
  }
}

// Twice the kinetic energy, sum m v^2 (kJ/mol), one block of kReduceThreads per system of n atoms: block b sums a
// replica batch's replica b (rows b n ...) into out[b], as a context of the replica alone does.
__global__ void __launch_bounds__(kReduceThreads)
    twice_kinetic_energy_kernel(int n, const double* __restrict__ mass, const Vec3d* __restrict__ v,
                                double* __restrict__ out) {
  __shared__ double shared[kReduceThreads];
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * static_cast<std::size_t>(n);
  mass += first;
  v += first;
  out += blockIdx.x;
  double sum = 0.0;
  for (int i = threadIdx.x; i < n; i += kReduceThreads) sum += twice_kinetic_energy(mass[i], v[i]);
  const double total = block_sum(sum, shared);
  if (threadIdx.x == 0) *out = total;
}

// LangevinMiddle, first part: COM removal (when com_velocity is non-null; a batch's: the atom's replica's),
// v += dt F/m.
__global__ void langevin_kick_kernel(int n, Vec3d* __restrict__ v, const double* __restrict__ inverse_mass,
                                     const unsigned long long* __restrict__ force, int stride, double dt,
                                     const Vec3d* __restrict__ com_velocity, ReplicaDynamics replicas) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double w = inverse_mass[i];
  if (w == 0.0) return;
  Vec3d vi = v[i];
  if (com_velocity) vi -= com_velocity[replicas.replica_of(i)];
  v[i] = velocity_kick(vi, load_force(force, stride, i), w, dt);
}

// LangevinMiddle, second part: x' = x + dt/2 v; O step; x' += dt/2 v. Keeps x (the constraints'
// reference) in x_old and x' in x_unconstrained (for the velocity correction). A batch's atom takes its
// replica's coefficients and seed, its draws keyed by its index within the replica.
__global__ void langevin_drift_kernel(int n, double4_16a* __restrict__ pos, Vec3d* __restrict__ v,
                                      Vec3d* __restrict__ x_old, Vec3d* __restrict__ x_unconstrained,
                                      const double* __restrict__ inverse_mass, double half_dt,
                                      LangevinCoefficients coefficients, std::uint64_t seed,
                                      const long long* __restrict__ step, ReplicaDynamics replicas) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec3d x = load_position(pos, i);
  x_old[i] = x;
  const double w = inverse_mass[i];
  if (w == 0.0) {
    x_unconstrained[i] = x;
    return;
  }
  Vec3d xn = drift(x, v[i], half_dt);
  const Vec3d vi = langevin_o_step(v[i], w, replicas.coefficients_of(i, coefficients),
                                   gaussian3(replicas.seed_of(i, seed), kStreamLangevin,
                                             static_cast<std::uint64_t>(*step), replicas.local_index(i)));
  xn = drift(xn, vi, half_dt);
  v[i] = vi;
  store_position(pos, i, xn);
  x_unconstrained[i] = xn;
}

// v += (x_constrained - x_unconstrained) / dt; the device step counter advances (no other thread
// of this kernel reads it).
__global__ void velocity_correction_kernel(int n, const double4_16a* __restrict__ pos, Vec3d* __restrict__ v,
                                           const Vec3d* __restrict__ x_unconstrained,
                                           const double* __restrict__ inverse_mass, double inverse_dt,
                                           long long* __restrict__ step) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) *step += 1;
  if (i >= n || inverse_mass[i] == 0.0) return;
  v[i] = constraint_velocity_correction(v[i], load_position(pos, i), x_unconstrained[i], inverse_dt);
}

// Verlet (leapfrog), first part: COM removal, v += dt F/m, x' = x + dt v (x kept in x_old).
__global__ void verlet_kick_drift_kernel(int n, double4_16a* __restrict__ pos, Vec3d* __restrict__ v,
                                         Vec3d* __restrict__ x_old, const double* __restrict__ inverse_mass,
                                         const unsigned long long* __restrict__ force, int stride, double dt,
                                         const Vec3d* __restrict__ com_velocity, ReplicaDynamics replicas) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec3d x = load_position(pos, i);
  x_old[i] = x;
  const double w = inverse_mass[i];
  if (w == 0.0) return;
  Vec3d vi = v[i];
  if (com_velocity) vi -= com_velocity[replicas.replica_of(i)];
  vi = velocity_kick(vi, load_force(force, stride, i), w, dt);
  v[i] = vi;
  store_position(pos, i, drift(x, vi, dt));
}

// Verlet, second part: v = (x' - x) / dt after the position constraints; the step counter advances.
__global__ void leapfrog_velocity_kernel(int n, const double4_16a* __restrict__ pos, Vec3d* __restrict__ v,
                                         const Vec3d* __restrict__ x_old, const double* __restrict__ inverse_mass,
                                         double inverse_dt, long long* __restrict__ step) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) *step += 1;
  if (i >= n || inverse_mass[i] == 0.0) return;
  v[i] = leapfrog_velocity(load_position(pos, i), x_old[i], inverse_dt);
}

// Verlet's on-step velocity estimate v + dt/2 F/m (before its velocity constraints).
__global__ void shifted_velocity_kernel(int n, const Vec3d* __restrict__ v, const double* __restrict__ inverse_mass,
                                        const unsigned long long* __restrict__ force, int stride, double shift,
                                        Vec3d* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = velocity_kick(v[i], load_force(force, stride, i), inverse_mass[i], shift);
}

__global__ void advance_step_kernel(long long* step) { *step += 1; }

// v *= factor for n velocities (Context::scale_velocities: each component multiplied once, as on the host).
__global__ void scale_velocities_kernel(int n, Vec3d* __restrict__ v, double factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * factor;
}

}  // namespace mdsim::cuda
