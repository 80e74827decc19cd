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
  const double delta =
      (1.0 / (kBoltzmannKjPerMolK * t_lower_k) - 1.0 / (kBoltzmannKjPerMolK * t_upper_k)) * (energy_lower - energy_upper);
  ExchangeDecision d;
  d.probability = delta >= 0.0 ? 1.0 : pmath::exp_(delta);
  const double u = uniform_open01(philox_draw(seed, kStreamReplicaExchange, static_cast<std::uint64_t>(round),
                                              static_cast<std::uint32_t>(lower)).v[0]);
  d.accepted = u < d.probability;
  return d;
}

}  // namespace mdsim
