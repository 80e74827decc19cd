// A replica batch's per-replica integration parameters (CudaOptions::replicas), for the integrator's kernels: atom i
// of the batch is atom i - r N of replica r = i / N (N = atoms_per_replica). Each replica has its own heat-bath
// coefficients (temperature), random-number seed and centre-of-mass velocity. A single system (atoms_per_replica 0)
// reads the kernel's own seed and coefficients, and the one centre-of-mass velocity.
#pragma once

#include <cstdint>

#include "physics/integrator_steps.hpp"

namespace mdsim::cuda {

struct ReplicaDynamics {
  int atoms_per_replica = 0;                           // 0: no batch
  const LangevinCoefficients* coefficients = nullptr;  // per replica (a batch's)
  const std::uint64_t* seeds = nullptr;                // per replica (a batch's)

  __device__ __forceinline__ int replica_of(int i) const { return atoms_per_replica > 0 ? i / atoms_per_replica : 0; }
  // The atom's index within its replica: what its random numbers are keyed by, as in a run of the replica alone.
  __device__ __forceinline__ std::uint32_t local_index(int i) const {
    return static_cast<std::uint32_t>(atoms_per_replica > 0 ? i % atoms_per_replica : i);
  }
  __device__ __forceinline__ std::uint64_t seed_of(int i, std::uint64_t seed) const {
    return seeds != nullptr ? seeds[replica_of(i)] : seed;
  }
  __device__ __forceinline__ LangevinCoefficients coefficients_of(int i, const LangevinCoefficients& c) const {
    return coefficients != nullptr ? coefficients[replica_of(i)] : c;
  }
};

}  // namespace mdsim::cuda
