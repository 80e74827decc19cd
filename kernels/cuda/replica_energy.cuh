// Energies of a replica batch (CudaOptions::replicas): every energy sum exists once per replica, replica r's
// slots at energy + r * ReplicaEnergies::stride. Without a batch every particle is replica 0's and the sums are
// as they always were.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/fixed_point.cuh"

namespace mdsim::cuda {

struct ReplicaEnergies {
  int atoms_per_replica;  // N: particle p belongs to replica p / N
  int stride;             // energy slots per replica
  int count;              // replicas (1: no batch)
  __device__ __forceinline__ int replica_of(int particle) const { return particle / atoms_per_replica; }
};

// Adds each lane's v (kJ/mol) to slot[replica * stride] as fixed point. When every lane's replica is the first
// lane's (always without a batch) the warp's sum is added once, as before batching; a warp straddling two
// replicas adds lane by lane. A lane with nothing to add passes replica < 0 (and v = 0). Whole warp.
__device__ __forceinline__ void add_energy_by_replica(unsigned long long* slot, int stride, int replica, double v) {
  const int first = __shfl_sync(0xffffffffu, replica, 0);
  if (replica < 0) replica = first;
  if (__all_sync(0xffffffffu, replica == first)) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0 && v != 0.0) atomic_add_fixed(slot + static_cast<long long>(max(first, 0)) * stride, v);
  } else if (v != 0.0) {
    atomic_add_fixed(slot + static_cast<long long>(replica) * stride, v);
  }
}

}  // namespace mdsim::cuda
