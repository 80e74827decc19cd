// One LangevinMiddle step in three concurrent kernels (included by cuda_integrator.cu only), for mixed
// precision, where CCMA makes a single pass. Every atom belongs to exactly one of: a rigid water
// (SETTLE), a CCMA thread block's coupled groups, or neither ("free"). Each kernel takes its atoms
// through the whole step of kernels/physics/integrator_steps.hpp:
//   kick (COM removal first) -> constrain velocities -> drift, O step, drift -> constrain positions
//   (reference: the positions at the start of the step) -> velocity correction
// with the same functions, random numbers (Philox keyed by seed, step, atom; drawn beforehand by
// langevin_noise_kernel) and CCMA iteration
// (per block, until its constraints converge) as the kernel-per-stage sequence it replaces
// (langevin_kick_kernel, settle/ccma_velocities_kernel, langevin_drift_kernel, settle/
// ccma_positions_kernel, velocity_correction_kernel), so the results agree to rounding (the compiler
// may contract a multiply-add differently in each kernel); the intermediate states stay in registers
// and shared memory instead of global memory, and the step has three kernels side by side instead of
// seven in a row. The step counter advances afterwards
// (advance_step_kernel), once all three have read it.
#pragma once

#include <cstdint>

#include "kernels/cuda/ccma_block.cuh"
#include "kernels/cuda/ccma_warp.cuh"
#include "kernels/cuda/constraint_layout.hpp"
#include "kernels/cuda/device_atoms.cuh"
#include "kernels/physics/integrator_steps.hpp"
#include "kernels/physics/philox.hpp"
#include "kernels/physics/settle.hpp"

namespace mdsim::cuda {

struct LangevinStepArgs {
  unsigned long long* force;  // fixed point, planes of `stride`; each atom's is read once and left zero
  int stride;
  const double* inverse_mass;  // 1/amu
  const Vec3d* com_velocity;   // removed before the kick; null: not removed
  double dt, half_dt, inverse_dt;
  LangevinCoefficients coefficients;
  double4_16a* pos;
  Vec3d* v;
  const Vec3d* noise;  // this step's gaussian3 draw of every atom (langevin_noise_kernel)
};

// The O step's standard normal draws of every atom for the current step, gaussian3(seed,
// kStreamLangevin, step, atom) as langevin_drift_kernel draws them. Launched on its own, concurrently
// with the force evaluation, so that the step's kernels only read them: the draws (Philox and a
// double-precision Box-Muller) were most of the work of settle_langevin_step_kernel, whose one
// thread per water is a long dependent chain at low occupancy. As the step's only reader of the step
// counter, it advances it: the last block to finish (done_count, 0 before and after) adds one, after
// every block has used the value (a kernel at the end of the step did this, on the critical path).
__global__ void langevin_noise_kernel(int n, std::uint64_t seed, long long* __restrict__ step,
                                      unsigned int* __restrict__ done_count, Vec3d* __restrict__ noise) {
  __shared__ bool last;
  const long long s = *step;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)  // thread 0 of every block is (blocks_for)
    noise[i] = gaussian3(seed, kStreamLangevin, static_cast<std::uint64_t>(s), static_cast<std::uint32_t>(i));
  __syncthreads();  // the block's draws, which used s, are done
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(done_count, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    *step = s + 1;
    *done_count = 0;
  }
}

// langevin_kick_kernel for atom i.
__device__ __forceinline__ Vec3d kicked_velocity(const LangevinStepArgs& a, int i) {
  Vec3d vi = a.v[i];
  const double w = a.inverse_mass[i];
  if (w == 0.0) return vi;
  if (a.com_velocity) vi -= *a.com_velocity;
  return velocity_kick(vi, load_force(a.force, a.stride, i), w, a.dt);
}

// Leaves atom i's force sums zero for the next evaluation, which then need not clear the buffer (every
// atom is stepped by exactly one of the step's kernels). With the kernel's other stores, after its
// loads: a store between them would hold back the loads that follow it (the pointers may alias).
__device__ __forceinline__ void clear_force(const LangevinStepArgs& a, int i) {
  a.force[i] = a.force[a.stride + i] = a.force[2 * a.stride + i] = 0ull;
}

// langevin_drift_kernel for atom i at (constrained) position x with (constrained) velocity v: returns
// the unconstrained new position; v becomes the velocity after the O step.
__device__ __forceinline__ Vec3d drift_o_drift(const LangevinStepArgs& a, int i, const Vec3d& x, Vec3d& v) {
  const double w = a.inverse_mass[i];
  if (w == 0.0) return x;
  Vec3d xn = drift(x, v, a.half_dt);
  v = langevin_o_step(v, w, a.coefficients, a.noise[i]);
  return drift(xn, v, a.half_dt);
}

// velocity_correction_kernel for atom i.
__device__ __forceinline__ Vec3d corrected_velocity(const LangevinStepArgs& a, int i, const Vec3d& v,
                                                   const Vec3d& x_constrained, const Vec3d& x_unconstrained) {
  if (a.inverse_mass[i] == 0.0) return v;
  return constraint_velocity_correction(v, x_constrained, x_unconstrained, a.inverse_dt);
}

// Atoms in no constraint: kick, drift, O, drift (the velocity correction is zero for them).
__global__ void langevin_free_atoms_step_kernel(int count, const int* __restrict__ atoms, LangevinStepArgs a) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const int i = atoms[k];
  Vec3d vi = kicked_velocity(a, i);
  const Vec3d x = load_position(a.pos, i);
  const Vec3d xn = drift_o_drift(a, i, x, vi);
  a.v[i] = vi;
  if (a.inverse_mass[i] != 0.0) store_position(a.pos, i, xn);
  clear_force(a, i);
}

// One thread per rigid water. At most 128 registers (4 blocks of kAtomThreads per SM): with the
// compiler's own choice (a few more) large systems took two rounds of blocks, each a long dependent
// chain in double precision.
__global__ void __launch_bounds__(kAtomThreads, 4) settle_langevin_step_kernel(int waters, const SettleWater* __restrict__ water, LangevinStepArgs a) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= waters) return;
  const SettleWater w = water[k];
  Vec3d va = kicked_velocity(a, w.o), vb = kicked_velocity(a, w.h1), vc = kicked_velocity(a, w.h2);
  const Vec3d a0 = load_position(a.pos, w.o), b0 = load_position(a.pos, w.h1), c0 = load_position(a.pos, w.h2);
  settle_velocities(a0, b0, c0, va, vb, vc, w.inv_o, w.inv_h1, w.inv_h2);
  const Vec3d ua = drift_o_drift(a, w.o, a0, va), ub = drift_o_drift(a, w.h1, b0, vb), uc = drift_o_drift(a, w.h2, c0, vc);
  Vec3d pa = ua, pb = ub, pc = uc;
  settle_positions(a0, b0, c0, pa, pb, pc, w.mass_o, w.mass_h, w.oh, w.hh);
  store_position(a.pos, w.o, pa);
  store_position(a.pos, w.h1, pb);
  store_position(a.pos, w.h2, pc);
  a.v[w.o] = corrected_velocity(a, w.o, va, pa, ua);
  a.v[w.h1] = corrected_velocity(a, w.h1, vb, pb, ub);
  a.v[w.h2] = corrected_velocity(a, w.h2, vc, pc, uc);
  clear_force(a, w.o);
  clear_force(a, w.h1);
  clear_force(a, w.h2);
}

// One thread block per CCMA block (launched like ccma_velocities_kernel, one pass); blockDim.x is at
// least the block's touched atoms and constraints (CudaConstraints sizes it so), so every thread owns
// at most one atom, whose step-start position, velocity and unconstrained position stay in its
// registers.
__global__ void __launch_bounds__(1024)
    ccma_langevin_step_kernel(CcmaView c, LangevinStepArgs a, double tolerance, int max_iterations) {
  extern __shared__ double ccma_shared[];
  const CcmaBlock w = ccma_block(c, ccma_shared);
  const int s = threadIdx.x;
  const bool owns_atom = s < w.na;
  const int atom = owns_atom ? c.atom_index[w.a_begin + s] : 0;
  Vec3d v(0, 0, 0), x0(0, 0, 0), x_unconstrained(0, 0, 0);
  if (owns_atom) {
    v = kicked_velocity(a, atom);
    x0 = load_position(a.pos, atom);
    w.x[s] = v;
  }
  // Constraint vectors of the step-start positions: the velocity constraints' geometry and the
  // position constraints' reference alike.
  for (int k = threadIdx.x; k < w.nc; k += blockDim.x) {
    const int2 ab = c.atoms[w.c_begin + k];
    const Vec3d r = load_position(a.pos, ab.x) - load_position(a.pos, ab.y);
    w.r_ref[k] = r;
    w.r_ref2[k] = dot(r, r);
  }
  __syncthreads();
  ccma_iterate_velocities(c, w, tolerance, 0, 0, max_iterations);
  if (owns_atom) {
    v = w.x[s];
    x_unconstrained = drift_o_drift(a, atom, x0, v);
  }
  __syncthreads();
  if (owns_atom) w.x[s] = x_unconstrained;
  __syncthreads();
  ccma_iterate_positions(c, w, tolerance, 0, 0, max_iterations);
  if (owns_atom) {
    const Vec3d x = w.x[s];
    store_position(a.pos, atom, x);
    a.v[atom] = corrected_velocity(a, atom, v, x, x_unconstrained);
    clear_force(a, atom);
  }
}

// The same step for a plan packed into warp-sized CCMA blocks (ccma_warp.cuh): one warp (a thread block
// of 32) per CCMA block, so the blocks spread over every multiprocessor; each lane owns at most one atom
// and one constraint.
template <int ROW, int ENTRIES>
__global__ void __launch_bounds__(32)
    ccma_warp_langevin_step_kernel(CcmaView c, LangevinStepArgs a, double tolerance, int max_iterations) {
  const int block = blockIdx.x;
  const int lane = static_cast<int>(threadIdx.x);
  CcmaWarp<ROW, ENTRIES> w = ccma_warp_load<ROW, ENTRIES>(c, block, lane);
  const bool owns_atom = lane < w.na;
  Vec3d v(0, 0, 0), x0(0, 0, 0), x_unconstrained(0, 0, 0);
  if (owns_atom) {
    v = kicked_velocity(a, w.atom);
    x0 = load_position(a.pos, w.atom);
  }
  ccma_warp_reference(w, x0);  // the step-start geometry: velocity constraints and position reference
  ccma_warp_velocities(w, v, tolerance, max_iterations);
  Vec3d x(0, 0, 0);
  if (owns_atom) x = x_unconstrained = drift_o_drift(a, w.atom, x0, v);
  ccma_warp_positions(w, x, tolerance, max_iterations);
  if (owns_atom) {
    store_position(a.pos, w.atom, x);
    a.v[w.atom] = corrected_velocity(a, w.atom, v, x, x_unconstrained);
    clear_force(a, w.atom);
  }
}

}  // namespace mdsim::cuda
