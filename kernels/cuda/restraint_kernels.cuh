// Position-restraint kernel (included by cuda_forces.cu only): one thread per restrained atom through
// physics/restraint.hpp, the functions the CPU platform calls. Double precision in both
// precision modes (one thread per restraint costs nothing, and x − x0 in float would lose 1e-7 nm of a
// ~5 nm coordinate); forces and energy go into the 64-bit fixed-point sums.
#pragma once

#include "kernels/cuda/bonded_kernels.cuh"  // add_force
#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/fixed_point.cuh"
#include "physics/restraint.hpp"

namespace mdsim::cuda {

// One restraint as the device reads it: the reference point (nm), the force constants along x, y, z
// (kJ/mol/nm²) and the atom.
struct alignas(16) DeviceRestraint {
  double x0, y0, z0;
  double kx, ky, kz;
  int atom;
};

// energy[0] receives the restraints' energy (warp sums, one atomic per warp). `use_box`: displacements
// by minimum image in `box` (the current periodic box), else plain differences.
template <bool ENERGY>
__global__ void restraints_kernel(int count, const DeviceRestraint* __restrict__ restraints,
                                  const double4_16a* __restrict__ pos, int stride,
                                  unsigned long long* __restrict__ force, unsigned long long* __restrict__ energy,
                                  ReplicaEnergies replicas, BoxVectors<double> box, bool use_box) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  double e = 0.0;
  int replica = -1;
  if (t < count) {
    const DeviceRestraint r = restraints[t];
    const double4_16a p = pos[r.atom];
    const Vec3d d = restraint_displacement(Vec3d(p.x, p.y, p.z), Vec3d(r.x0, r.y0, r.z0), use_box ? &box : nullptr);
    const RestraintResult<double> result = position_restraint(d, Vec3d(r.kx, r.ky, r.kz));
    add_force(force, stride, r.atom, result.force);
    e = result.energy;
    replica = replicas.replica_of(r.atom);
  }
  // Whole warps reach here (no early return above), so the shuffles are safe.
  if (ENERGY) add_energy_by_replica(energy, replicas.stride, replica, e);
}

}  // namespace mdsim::cuda
