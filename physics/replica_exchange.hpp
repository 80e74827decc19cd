// Temperature replica exchange's Metropolis rule for one attempt, the same on the host
// (platform/replica_exchange.cpp) and on the device (a CUDA replica batch decides its ladder's rounds there).
// Host and device code alike (MDSIM_HD).
#pragma once

#include <cstdint>

#include "physics/integrator_steps.hpp"  // kBoltzmannKjPerMolK
#include "physics/math.hpp"
#include "physics/philox.hpp"

namespace mdsim {

struct ExchangeDecision {
  double probability;  // min(1, exp[(beta_lower - beta_upper)(U_lower - U_upper)])
  bool accepted;       // the attempt's uniform number (Philox: seed, kStreamReplicaExchange, round, lower) below it
};

// The attempt between temperatures `lower` (t_lower_k) and lower + 1 (t_upper_k) in round `round`, with
// energy_lower and energy_upper (kJ/mol, U + pV) the energies of the replicas now at those temperatures.
MDSIM_HD ExchangeDecision temperature_exchange_decision(double t_lower_k, double t_upper_k, double energy_lower,
                                                       double energy_upper, std::uint64_t seed,
                                                       std::int64_t round, int lower) {
  const double beta_lower = 1.0 / (kBoltzmannKjPerMolK * t_lower_k);
  const double beta_upper = 1.0 / (kBoltzmannKjPerMolK * t_upper_k);
  const double delta = (beta_lower - beta_upper) * (energy_lower - energy_upper);
  ExchangeDecision d;
  d.probability = delta >= 0.0 ? 1.0 : pmath::exp_(delta);
  const double u = uniform_open01(philox_draw(seed, kStreamReplicaExchange, static_cast<std::uint64_t>(round),
                                              static_cast<std::uint32_t>(lower)).v[0]);
  d.accepted = u < d.probability;
  return d;
}

// The attempts of round `round` on a ladder of n temperatures: the pairs (lower, lower + 1) with lower = round (mod 2).
MDSIM_HD int ladder_round_attempts(int n, std::int64_t round) { return (n - static_cast<int>(round % 2)) / 2; }

// The velocity scale of a replica moved from a bath at t_from_k to one at t_to_k: sqrt(t_to / t_from).
MDSIM_HD double exchange_velocity_scale(double t_from_k, double t_to_k) { return pmath::sqrt_(t_to_k / t_from_k); }

// One round of a ladder of n temperatures over plain arrays (a CUDA batch's copy of the ladder, one thread): the
// attempts (lower = round mod 2, +2, ...) in order, as ReplicaExchange plays them. replica_at[t] (the replica at
// temperature t) and temperature_of[r] are updated; accepted[i] is the i-th attempt's decision; velocity_factor[r]
// is 1, or for a replica that moved its scale (scale_up[k] = exchange_velocity_scale(T[k], T[k+1]) moving up from k,
// scale_down[k] the other way, both computed by the caller). skip: nothing is exchanged (every attempt rejected).
MDSIM_HD void play_ladder_round(int n, std::int64_t round, std::uint64_t seed, const double* temperatures_k,
                                const double* energies, const double* scale_up, const double* scale_down, bool skip,
                                int* replica_at, int* temperature_of, unsigned char* accepted,
                                double* velocity_factor) {
  for (int r = 0; r < n; ++r) velocity_factor[r] = 1.0;
  int attempt = 0;
  for (int k = static_cast<int>(round % 2); k + 1 < n; k += 2, ++attempt) {
    const int lower = replica_at[k], upper = replica_at[k + 1];
    const ExchangeDecision decision = temperature_exchange_decision(temperatures_k[k], temperatures_k[k + 1],
                                                                    energies[lower], energies[upper], seed, round, k);
    const bool accept = !skip && decision.accepted;
    accepted[attempt] = accept ? 1 : 0;
    if (!accept) continue;
    replica_at[k] = upper;
    replica_at[k + 1] = lower;
    temperature_of[lower] = k + 1;
    temperature_of[upper] = k;
    velocity_factor[lower] = scale_up[k];
    velocity_factor[upper] = scale_down[k];
  }
}

}  // namespace mdsim
