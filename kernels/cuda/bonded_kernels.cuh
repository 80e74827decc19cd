// Bonded kernel (included by cuda_forces.cu only): harmonic bonds, harmonic angles and periodic
// torsions in one launch, each thread one term, through kernels/physics/bonded.hpp — the functions
// the CPU reference platform calls. Displacements are not imaged (OpenMM's default for these forces).
#pragma once

#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/fixed_point.cuh"
#include "kernels/physics/bonded.hpp"

namespace mdsim::cuda {

template <typename real>
struct BondData {
  int2 atoms;
  real length;  // nm
  real k;       // kJ/mol/nm^2
};

template <typename real>
struct AngleData {
  int3 atoms;  // y is the vertex
  real angle;  // rad
  real k;      // kJ/mol/rad^2
};

template <typename real>
struct TorsionData {
  int4 atoms;
  int periodicity;
  real phase;  // rad
  real k;      // kJ/mol
};

// x_b - x_a formed in double and rounded once to real (see exception_force in nonbonded_kernels.cuh).
template <typename real>
__device__ __forceinline__ Vec3<real> delta(const double4_16a& pa, const double4_16a& pb) {
  return Vec3<real>(real(pb.x - pa.x), real(pb.y - pa.y), real(pb.z - pa.z));
}
template <typename real>
__device__ __forceinline__ Vec3<real> delta(const double4_16a* __restrict__ pos, int a, int b) {
  return delta<real>(pos[a], pos[b]);
}

template <typename real>
__device__ __forceinline__ void add_force(unsigned long long* force, int stride, int atom, const Vec3<real>& f) {
  atomic_add_fixed(&force[atom], f.x);
  atomic_add_fixed(&force[stride + atom], f.y);
  atomic_add_fixed(&force[2 * stride + atom], f.z);
}

// energy[0..2] receive bond, angle and torsion energies.
template <typename real, bool ENERGY>
__global__ void bonded_kernel(int num_bonds, const BondData<real>* __restrict__ bonds, int num_angles,
                              const AngleData<real>* __restrict__ angles, int num_torsions,
                              const TorsionData<real>* __restrict__ torsions, const double4_16a* __restrict__ pos,
                              int stride, unsigned long long* __restrict__ force,
                              unsigned long long* __restrict__ energy) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  double e[3] = {0.0, 0.0, 0.0};  // bond, angle, torsion
  if (t < num_bonds) {
    const BondData<real> b = bonds[t];
    const BondResult<real> r = harmonic_bond(delta<real>(pos, b.atoms.x, b.atoms.y), b.length, b.k);
    add_force(force, stride, b.atoms.x, r.force_i);
    add_force(force, stride, b.atoms.y, r.force_j);
    e[0] = r.energy;
  } else if ((t -= num_bonds) < num_angles) {
    const AngleData<real> a = angles[t];
    const AngleResult<real> r =
        harmonic_angle(delta<real>(pos, a.atoms.y, a.atoms.x), delta<real>(pos, a.atoms.y, a.atoms.z), a.angle, a.k);
    add_force(force, stride, a.atoms.x, r.force_i);
    add_force(force, stride, a.atoms.y, r.force_j);
    add_force(force, stride, a.atoms.z, r.force_k);
    e[1] = r.energy;
  } else if ((t -= num_angles) < num_torsions) {
    const TorsionData<real> q = torsions[t];
    const TorsionResult<real> r = periodic_torsion(delta<real>(pos, q.atoms.x, q.atoms.y), delta<real>(pos, q.atoms.y, q.atoms.z),
                                                   delta<real>(pos, q.atoms.z, q.atoms.w), q.periodicity, q.phase, q.k);
    add_force(force, stride, q.atoms.x, r.force_i);
    add_force(force, stride, q.atoms.y, r.force_j);
    add_force(force, stride, q.atoms.z, r.force_k);
    add_force(force, stride, q.atoms.w, r.force_l);
    e[2] = r.energy;
  }
  if (ENERGY) {
    // Whole warps reach here (no early return above), so the shuffles are safe.
    for (int slot = 0; slot < 3; ++slot) {
      double v = e[slot];
      for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
      if ((threadIdx.x & 31) == 0 && v != 0.0) atomic_add_fixed(&energy[slot], v);
    }
  }
}

}  // namespace mdsim::cuda
