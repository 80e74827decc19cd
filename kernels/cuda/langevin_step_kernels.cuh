// One LangevinMiddle step in three concurrent kernels (included by cuda_integrator.cu only), for mixed
// precision, where CCMA makes a single pass. Every atom belongs to exactly one of: a rigid water
// (SETTLE), a CCMA thread block's coupled groups, or neither ("free"). Each kernel takes its atoms
// through the whole step of physics/integrator_steps.hpp:
//   kick (COM removal first) -> constrain velocities -> drift, O step, drift -> constrain positions
//   (reference: the positions at the start of the step) -> velocity correction
// with the same functions, random numbers (Philox keyed by seed, step, atom; drawn beforehand by
// langevin_noise_kernel) and CCMA iteration
// (per block, until its constraints converge) as the kernel-per-stage sequence it replaces
// (langevin_kick_kernel, settle/ccma_velocities_kernel, langevin_drift_kernel, settle/
// ccma_positions_kernel, velocity_correction_kernel), so the results agree to rounding (the compiler
// may contract a multiply-add differently in each kernel); the intermediate states stay in registers
// and shared memory instead of global memory, and the step has three kernels side by side instead of
// seven in a row. None of them reads the step counter: langevin_noise_kernel, which draws the step's
// normals beforehand, advances it.
#pragma once

#include <cstdint>

#include "kernels/cuda/ccma_block.cuh"
#include "kernels/cuda/ccma_warp.cuh"
#include "kernels/cuda/constraint_layout.hpp"
#include "kernels/cuda/device_atoms.cuh"
#include "kernels/cuda/replica_dynamics.cuh"
#include "physics/integrator_steps.hpp"
#include "physics/philox.hpp"
#include "physics/settle.hpp"
#include "physics/virtual_sites.hpp"

namespace mdsim::cuda {

struct LangevinStepArgs {
  unsigned long long* force;  // fixed point, planes of `stride`; each atom's is read once and left zero
  int stride;
  const double* inverse_mass;  // 1/amu
  const Vec3d* com_velocity;   // removed before the kick (a batch's: one per replica); null: not removed
  double dt, half_dt, inverse_dt;
  LangevinCoefficients coefficients;
  double4_16a* pos;
  Vec3d* v;
  const Vec3d* noise;  // this step's gaussian3 draw of every atom (langevin_noise_kernel)
  ReplicaDynamics replicas;  // a batch's per-replica coefficients (replica_dynamics.cuh)
};

// The O step's standard normal draws of every atom for the current step, gaussian3(seed,
// kStreamLangevin, step, atom) as langevin_drift_kernel draws them. Launched on its own, concurrently
// with the force evaluation, so that the step's kernels only read them: the draws (Philox and a
// double-precision Box-Muller) would be most of the work of settle_langevin_step_kernel, whose one
// thread per water is a long dependent chain at low occupancy. As the step's only reader of the step
// counter, it advances it: the last block to finish (done_count, 0 before and after) adds one, after
// every block has used the value (a kernel of its own at the step's end would be on the critical path).
// A batch's atom draws with its replica's seed, keyed by its index within the replica.
__global__ void langevin_noise_kernel(int n, std::uint64_t seed, long long* __restrict__ step,
                                      unsigned int* __restrict__ done_count, Vec3d* __restrict__ noise,
                                      ReplicaDynamics replicas) {
  __shared__ bool last;
  const long long s = *step;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)  // thread 0 of every block is (blocks_for)
    noise[i] = gaussian3(replicas.seed_of(i, seed), kStreamLangevin, static_cast<std::uint64_t>(s),
                         replicas.local_index(i));
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

// An atom's inputs to the step, loaded together and without branches, so that the loads of several
// atoms (or of an atom and its CCMA block's data) go out at once instead of one dependent round each.
struct StepAtom {
  Vec3d v, force, x, noise;  // velocity, force (kJ/mol/nm), step-start position, this step's normal draws
  double inverse_mass;       // 1/amu
};
__device__ __forceinline__ StepAtom load_step_atom(const LangevinStepArgs& a, int i) {
  return {a.v[i], load_force(a.force, a.stride, i), load_position(a.pos, i), a.noise[i], a.inverse_mass[i]};
}

// The centre-of-mass velocity removed before atom i's kick (zero when none is; a batch's: i's replica's).
__device__ __forceinline__ Vec3d removed_com_velocity(const LangevinStepArgs& a, int i) {
  return a.com_velocity ? a.com_velocity[a.replicas.replica_of(i)] : Vec3d(0.0, 0.0, 0.0);
}

// langevin_kick_kernel for one atom.
__device__ __forceinline__ Vec3d kicked_velocity(const LangevinStepArgs& a, const Vec3d& com, const StepAtom& in) {
  return in.inverse_mass == 0.0 ? in.v : velocity_kick(in.v - com, in.force, in.inverse_mass, a.dt);
}

// Leaves atom i's force sums zero for the next evaluation, which then need not clear the buffer (every
// atom is stepped by exactly one of the step's kernels). With the kernel's other stores, after its
// loads: a store between them would hold back the loads that follow it (the pointers may alias).
__device__ __forceinline__ void clear_force(const LangevinStepArgs& a, int i) {
  a.force[i] = a.force[a.stride + i] = a.force[2 * a.stride + i] = 0ull;
}

// langevin_drift_kernel for atom i of inverse mass w (1/amu) with this step's normal draws `noise`, at
// (constrained) position x with (constrained) velocity v: returns the unconstrained new position; v
// becomes the velocity after the O step.
__device__ __forceinline__ Vec3d drift_o_drift(const LangevinStepArgs& a, int i, double w, const Vec3d& noise,
                                               const Vec3d& x, Vec3d& v) {
  if (w == 0.0) return x;
  Vec3d xn = drift(x, v, a.half_dt);
  v = langevin_o_step(v, w, a.replicas.coefficients_of(i, a.coefficients), noise);
  return drift(xn, v, a.half_dt);
}

// velocity_correction_kernel for an atom of inverse mass w.
__device__ __forceinline__ Vec3d corrected_velocity(const LangevinStepArgs& a, double w, const Vec3d& v,
                                                   const Vec3d& x_constrained, const Vec3d& x_unconstrained) {
  if (w == 0.0) return v;
  return constraint_velocity_correction(v, x_constrained, x_unconstrained, a.inverse_dt);
}

// corrected_velocity in halves (velocity_correction_base): before the position constraints, from the
// O-step velocity v and the unconstrained position; after them, from the constrained position (both
// relative to the same origin). w: the atom's inverse mass.
__device__ __forceinline__ Vec3d correction_base(const LangevinStepArgs& a, double w, const Vec3d& v,
                                                 const Vec3d& x_unconstrained) {
  if (w == 0.0) return v;
  return velocity_correction_base(v, x_unconstrained, a.inverse_dt);
}
__device__ __forceinline__ Vec3d corrected_velocity_from_base(const LangevinStepArgs& a, double w, const Vec3d& base,
                                                              const Vec3d& x_constrained) {
  if (w == 0.0) return base;
  return velocity_correction_finish(base, x_constrained, a.inverse_dt);
}

// Atoms in no constraint: kick, drift, O, drift (the velocity correction is zero for them).
__global__ void langevin_free_atoms_step_kernel(int count, const int* __restrict__ atoms, LangevinStepArgs a) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const int i = atoms[k];
  const StepAtom in = load_step_atom(a, i);
  Vec3d vi = kicked_velocity(a, removed_com_velocity(a, i), in);
  const Vec3d xn = drift_o_drift(a, i, in.inverse_mass, in.noise, in.x, vi);
  a.v[i] = vi;
  if (in.inverse_mass != 0.0) store_position(a.pos, i, xn);
  clear_force(a, i);
}

// The force on member m of a water whose site is s, the site's share spread onto it, as
// spread_virtual_site_forces_kernel adds it: the same fixed-point sums, bit for bit.
__device__ __forceinline__ Vec3d force_with_site_share(const LangevinStepArgs& a, int i, const SettleSite& s, int m) {
  unsigned long long f[3] = {a.force[i], a.force[a.stride + i], a.force[2 * a.stride + i]};
  double w = 0.0;  // the member's weight (0: not a parent)
  bool parent = false;
#pragma unroll
  for (int k = 0; k < 3; ++k)
    if (k < s.num_parents && s.member_of_parent[k] == m) {
      w = s.w[k];
      parent = true;
    }
  if (s.particle >= 0 && parent) {
    const Vec3d share = load_force(a.force, a.stride, s.particle) * w;  // spread_virtual_site_force's average share
    f[0] += to_fixed(share.x);
    f[1] += to_fixed(share.y);
    f[2] += to_fixed(share.z);
  }
  return Vec3d(from_fixed(f[0]), from_fixed(f[1]), from_fixed(f[2]));
}

// The site of a water whose new positions are x[0..2] (O, H1, H2) placed from them (as
// place_virtual_sites_kernel, the same arithmetic) and its force sums left zero.
__device__ __forceinline__ void place_settle_site(const LangevinStepArgs& a, const SettleSite& s, const Vec3d* x) {
  if (s.particle < 0) return;
  Vec3d r[3];
#pragma unroll
  for (int k = 0; k < 3; ++k) r[k] = x[s.member_of_parent[k]];
  store_position(a.pos, s.particle, average_site_position(s.w, r, s.num_parents));
  clear_force(a, s.particle);
}

// One thread per water atom (slot 3 k + m: member m, O H1 H2, of the block's water k) for the per-atom parts of the
// step, one thread per water (threads k < the block's waters) for SETTLE, in five phases separated by barriers:
// (1) per atom: kick (the site's share first, with SITES and `spread`: the evaluation before the step left the
// sites to this kernel), step-start position and kicked velocity into shared memory; (2) per water: SETTLE on the
// velocities; (3) per atom: drift / O / drift and the first half of the velocity correction
// (velocity_correction_base), the unconstrained position relative to the oxygen's step-start position
// (settle_positions_relative); (4) per water: SETTLE on the positions; (5) per atom: the velocity correction's second
// half, stores, force cleared; with SITES each water's average site placed from its new positions and its force
// cleared. The per-water chain (the long one: one warp per scheduler at most) holds only SETTLE; the same functions
// and operands as one thread taking the whole water.
constexpr int kSettleWaters = 64;
constexpr int kSettleThreads = 3 * kSettleWaters;

// Phase (1) for slot s of the block's water `wk` (clamped to the block's last: a slot past it loads that water's
// atoms again and stores nothing): returns the atom's inputs with the kicked velocity in `v`; `atom` its index.
template <bool SITES>
__device__ __forceinline__ StepAtom settle_step_load_kick(const SettleWater* __restrict__ water, int wk, int m,
                                                          const LangevinStepArgs& a, const SettleSite* __restrict__ sites,
                                                          bool spread, int& atom) {
  const SettleWater& ws = water[wk];
  atom = m == 0 ? ws.o : (m == 1 ? ws.h1 : ws.h2);
  StepAtom in = load_step_atom(a, atom);
  if (SITES && spread) in.force = force_with_site_share(a, atom, sites[wk], m);
  in.v = kicked_velocity(a, removed_com_velocity(a, atom), in);
  return in;
}

template <bool SITES>
__global__ void __launch_bounds__(kSettleThreads)
    settle_langevin_step_kernel(int waters, const SettleWater* __restrict__ water, LangevinStepArgs a,
                                const SettleSite* __restrict__ sites, bool spread) {
  __shared__ Vec3d velocity[kSettleThreads], position[kSettleThreads], moved[kSettleThreads];
  __shared__ SettleSite site[SITES ? kSettleWaters : 1];
  const int first = blockIdx.x * kSettleWaters;
  const int nw = min(kSettleWaters, waters - first);
  const int s = threadIdx.x, m = s % 3;
  const bool has_atom = s < 3 * nw;
  const int t = threadIdx.x;  // the water of the per-water phases (t < nw)
  SettleWater w{};
  if (t < nw) {
    w = water[first + t];
    if constexpr (SITES) site[t] = sites[first + t];
  }
  int atom;
  const StepAtom in = settle_step_load_kick<SITES>(water, first + min(s / 3, nw - 1), m, a, sites, spread, atom);
  velocity[s] = in.v;
  position[s] = in.x;
  __syncthreads();
  const int o = s - m;  // this atom's water's oxygen slot
  if (t < nw) {
    const Vec3d a0 = position[3 * t], b0 = position[3 * t + 1] - a0, c0 = position[3 * t + 2] - a0;
    Vec3d va = velocity[3 * t], vb = velocity[3 * t + 1], vc = velocity[3 * t + 2];
    settle_velocities(Vec3d(0.0, 0.0, 0.0), b0, c0, va, vb, vc, w.inv_o, w.inv_h1, w.inv_h2);
    velocity[3 * t] = va, velocity[3 * t + 1] = vb, velocity[3 * t + 2] = vc;
  }
  __syncthreads();
  if (has_atom) {  // the O slot's start is exactly the origin (x - x = +0)
    Vec3d v = velocity[s];
    const Vec3d x = drift_o_drift(a, atom, in.inverse_mass, in.noise, position[s] - position[o], v);
    velocity[s] = correction_base(a, in.inverse_mass, v, x);
    moved[s] = x;
  }
  __syncthreads();
  if (t < nw) {
    const Vec3d a0 = position[3 * t], b0 = position[3 * t + 1] - a0, c0 = position[3 * t + 2] - a0;
    Vec3d pa = moved[3 * t], pb = moved[3 * t + 1], pc = moved[3 * t + 2];
    settle_positions_relative(b0, c0, pa, pb, pc, w.mass_o, w.mass_h, w.oh, w.hh);
    moved[3 * t] = pa, moved[3 * t + 1] = pb, moved[3 * t + 2] = pc;
  }
  __syncthreads();
  if (has_atom) {
    const Vec3d x = moved[s];
    const Vec3d x_new = position[o] + x;
    a.v[atom] = corrected_velocity_from_base(a, in.inverse_mass, velocity[s], x);
    store_position(a.pos, atom, x_new);
    clear_force(a, atom);
    if (SITES) moved[s] = x_new;
  }
  if constexpr (SITES) {
    __syncthreads();
    if (t < nw) place_settle_site(a, site[t], &moved[3 * t]);
  }
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
  const StepAtom in = load_step_atom(a, atom);  // atom 0's for a thread without one, unused
  Vec3d v(0, 0, 0), x_unconstrained(0, 0, 0);
  const Vec3d x0 = in.x;
  if (owns_atom) {
    v = kicked_velocity(a, removed_com_velocity(a, atom), in);
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
    // The draws read here, not kept from the start: at this kernel's 64 registers they would spill.
    x_unconstrained = drift_o_drift(a, atom, in.inverse_mass, a.noise[atom], x0, v);
  }
  __syncthreads();
  if (owns_atom) w.x[s] = x_unconstrained;
  __syncthreads();
  ccma_iterate_positions(c, w, tolerance, 0, 0, max_iterations);
  if (owns_atom) {
    const Vec3d x = w.x[s];
    store_position(a.pos, atom, x);
    a.v[atom] = corrected_velocity(a, in.inverse_mass, v, x, x_unconstrained);
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
  const StepAtom in = load_step_atom(a, w.atom);  // atom 0's for a lane without one, unused
  Vec3d v(0, 0, 0), x0(0, 0, 0), x_unconstrained(0, 0, 0);
  if (owns_atom) {
    v = kicked_velocity(a, removed_com_velocity(a, w.atom), in);
    x0 = in.x;
  }
  ccma_warp_reference(w, x0);  // the step-start geometry: velocity constraints and position reference
  ccma_warp_velocities(w, v, tolerance, max_iterations);
  Vec3d x(0, 0, 0);
  if (owns_atom) x = x_unconstrained = drift_o_drift(a, w.atom, in.inverse_mass, in.noise, x0, v);
  ccma_warp_positions(w, x, tolerance, max_iterations);
  if (owns_atom) {
    store_position(a.pos, w.atom, x);
    a.v[w.atom] = corrected_velocity(a, in.inverse_mass, v, x, x_unconstrained);
    clear_force(a, w.atom);
  }
}

}  // namespace mdsim::cuda
