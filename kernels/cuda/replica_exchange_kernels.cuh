// A temperature ladder's exchange round on the device (included by cuda_context.cu only): the decisions by
// physics/replica_exchange.hpp's rule, each replica's bath coefficients and the accepted replicas' velocities,
// from tables the host computed (so every number equals what the host's rule and set_replica_temperature give).
#pragma once

#include <cstdint>

#include "physics/integrator_steps.hpp"
#include "physics/replica_exchange.hpp"
#include "physics/vec3.hpp"

namespace mdsim::cuda {

struct LadderDevice {
  int replicas = 0;                                    // = temperatures
  std::uint64_t seed = 0;                              // the exchanges' (ReplicaExchange's)
  const double* temperatures_k = nullptr;              // per temperature index, increasing
  const LangevinCoefficients* coefficients = nullptr;  // per temperature index: the host's langevin_coefficients
  const double* scale_up = nullptr;                    // per pair k: sqrt(T[k + 1] / T[k]), computed on the host
  const double* scale_down = nullptr;                  // per pair k: sqrt(T[k] / T[k + 1])
  int* replica_at = nullptr;                           // per temperature index: the replica there (updated)
  int* temperature_of = nullptr;                       // per replica: its temperature index (updated)
  const double* energies = nullptr;                    // per replica: potential energy, kJ/mol
  const int* tile_overflow = nullptr;                  // the pair list's overflow flags (no exchange when set)
  const int* exclusion_overflow = nullptr;
  unsigned char* accepted = nullptr;                   // per attempt of the round, in order of its lower temperature
  int* skipped = nullptr;                              // 1: the list overflowed, nothing exchanged
  double* velocity_factor = nullptr;                   // per replica: 1, or its accepted move's scale
  LangevinCoefficients* replica_coefficients = nullptr;  // the integrator's, per replica
};

// One block: the round played by one thread (physics/replica_exchange.hpp's play_ladder_round), then every replica's
// bath coefficients from its temperature index.
__global__ void ladder_round_kernel(LadderDevice d, std::int64_t round) {
  if (threadIdx.x == 0) {
    const bool skip = *d.tile_overflow != 0 || *d.exclusion_overflow != 0;
    *d.skipped = skip ? 1 : 0;
    play_ladder_round(d.replicas, round, d.seed, d.temperatures_k, d.energies, d.scale_up, d.scale_down, skip,
                      d.replica_at, d.temperature_of, d.accepted, d.velocity_factor);
  }
  __syncthreads();
  for (int r = threadIdx.x; r < d.replicas; r += blockDim.x)
    d.replica_coefficients[r] = d.coefficients[d.temperature_of[r]];
}

// v *= the factor of each atom's replica, each component multiplied once (as scale_velocities_kernel); factor 1
// leaves the velocity untouched.
__global__ void scale_replica_velocities_kernel(int n, int atoms_per_replica, Vec3d* __restrict__ v,
                                                const double* __restrict__ factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double f = factor[i / atoms_per_replica];
  if (f != 1.0) v[i] = v[i] * f;
}

}  // namespace mdsim::cuda
