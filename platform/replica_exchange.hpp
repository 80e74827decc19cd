// Temperature replica exchange, platform-neutral (the exchange rule and its bookkeeping; the runner that
// steps the replicas, alone or over MPI ranks, builds on it). Replicas keep their own coordinates
// and velocities; temperatures move between them. Round r attempts swaps between neighbouring
// temperatures k and k + 1 for every k with k = r (mod 2), so even and odd pairs alternate as in GROMACS
// and AMBER. An attempt is accepted with the Metropolis probability
//   p = min(1, exp[(beta_k - beta_(k+1)) (U_k - U_(k+1))]),   beta = 1 / (k_B T),
// where U_k is the potential energy (kJ/mol) of the replica now at temperature k. Its uniform number is
// Philox keyed by (seed, kStreamReplicaExchange, round, k), so every process that knows the energies
// makes the same decisions: MPI ranks, or one process stepping every replica in turn. On acceptance the
// two replicas swap temperatures and the caller scales each one's velocities by sqrt(T_new / T_old).
#pragma once

#include <cstdint>
#include <vector>

#include "model/run_config.hpp"  // geometric_temperature_ladder
#include "physics/replica_exchange.hpp"  // ladder_round_attempts

namespace mdsim {

struct ExchangeAttempt {
  std::int64_t round = 0;
  int lower = 0;                    // the pair of temperatures (lower, lower + 1)
  int replica_lower = 0;            // the replica at temperature `lower` before the attempt
  int replica_upper = 0;            // and at `lower + 1`
  double energy_lower = 0.0;        // their potential energies, kJ/mol
  double energy_upper = 0.0;
  double probability = 0.0;         // min(1, exp(...)) above
  bool accepted = false;
  double velocity_scale_lower = 1;  // accepted: replica_lower's velocities times this (it moves up), else 1
  double velocity_scale_upper = 1;  // and replica_upper's (it moves down)
};

class ReplicaExchange {
 public:
  // Replica r starts at temperature r. InputError unless there are at least 2 temperatures, each finite,
  // positive and higher than the one before.
  ReplicaExchange(std::vector<double> temperatures_k, std::uint64_t seed);

  int size() const { return static_cast<int>(temperatures_.size()); }
  const std::vector<double>& temperatures() const { return temperatures_; }
  int temperature_index_of(int replica) const { return temperature_of_[static_cast<std::size_t>(replica)]; }
  double temperature_of(int replica) const { return temperatures_[static_cast<std::size_t>(temperature_index_of(replica))]; }
  int replica_at(int temperature_index) const { return replica_at_[static_cast<std::size_t>(temperature_index)]; }
  std::int64_t rounds() const { return rounds_; }

  // One round with energies_kj_per_mol[r] the potential energy of replica r (all finite): the attempts
  // in order of `lower`, applied to the replica <-> temperature map.
  std::vector<ExchangeAttempt> exchange(const std::vector<double>& energies_kj_per_mol);
  // The same round with its decisions made elsewhere (a CUDA batch decides on the device by the same rule,
  // physics/replica_exchange.hpp): accepted[i] for the round's i-th attempt, in order of `lower`. RuntimeError for
  // another number of decisions.
  std::vector<ExchangeAttempt> apply(const std::vector<double>& energies_kj_per_mol,
                                     const std::vector<std::uint8_t>& accepted);
  // The attempts of the next round: its pairs (lower, lower + 1) with lower = rounds() (mod 2).
  int attempts_in_next_round() const { return ladder_round_attempts(size(), rounds_); }

  // Attempts and acceptances of the pair (lower, lower + 1) so far.
  std::int64_t attempts(int lower) const { return attempts_[static_cast<std::size_t>(lower)]; }
  std::int64_t acceptances(int lower) const { return accepted_[static_cast<std::size_t>(lower)]; }
  // Round trips of a replica: journeys from the lowest temperature to the highest and back to the lowest.
  int round_trips(int replica) const { return round_trips_[static_cast<std::size_t>(replica)]; }
  int total_round_trips() const;

  // Everything a checkpoint must hold to continue exactly (the map, the round, the counts), as numbers;
  // set_state refuses a state of another ladder size.
  std::vector<double> state() const;
  void set_state(const std::vector<double>& state);

 private:
  void note_positions();  // round-trip bookkeeping after the map changed
  std::vector<ExchangeAttempt> play_round(const std::vector<double>& energies_kj_per_mol,
                                          const std::vector<std::uint8_t>* decided);

  std::vector<double> temperatures_;
  std::uint64_t seed_;
  std::vector<int> temperature_of_, replica_at_;
  std::int64_t rounds_ = 0;
  std::vector<std::int64_t> attempts_, accepted_;
  std::vector<int> round_trips_;
  std::vector<int> heading_;  // per replica: 0 not yet at the lowest, 1 left the lowest, 2 reached the highest since
};

}  // namespace mdsim
