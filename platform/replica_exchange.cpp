// See replica_exchange.hpp.
#include "platform/replica_exchange.hpp"

#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "physics/replica_exchange.hpp"

namespace mdsim {

ReplicaExchange::ReplicaExchange(std::vector<double> temperatures_k, std::uint64_t seed)
    : temperatures_(std::move(temperatures_k)), seed_(seed) {
  const std::size_t n = temperatures_.size();
  if (n < 2) throw InputError(fmt::format("replica exchange needs at least 2 temperatures, got {}", n));
  for (std::size_t k = 0; k < n; ++k) {
    const double t = temperatures_[k];
    if (!(std::isfinite(t) && t > 0.0))
      throw InputError(fmt::format("replica exchange temperature {} is {:g} K: expected a positive temperature", k + 1, t));
    if (k > 0 && !(t > temperatures_[k - 1]))
      throw InputError(fmt::format("replica exchange temperatures must increase: temperature {} ({:g} K) is not above "
                                   "temperature {} ({:g} K)",
                                   k + 1, t, k, temperatures_[k - 1]));
  }
  temperature_of_.resize(n);
  replica_at_.resize(n);
  for (std::size_t r = 0; r < n; ++r) temperature_of_[r] = replica_at_[r] = static_cast<int>(r);
  attempts_.assign(n - 1, 0);
  accepted_.assign(n - 1, 0);
  round_trips_.assign(n, 0);
  heading_.assign(n, 0);
  note_positions();
}

std::vector<ExchangeAttempt> ReplicaExchange::exchange(const std::vector<double>& energies_kj_per_mol) {
  return play_round(energies_kj_per_mol, nullptr);
}

std::vector<ExchangeAttempt> ReplicaExchange::apply(const std::vector<double>& energies_kj_per_mol,
                                                    const std::vector<std::uint8_t>& accepted) {
  const auto attempts = static_cast<std::size_t>(attempts_in_next_round());
  if (accepted.size() != attempts)
    throw RuntimeError(fmt::format("replica exchange: {} decisions for round {}'s {} attempts", accepted.size(),
                                   rounds_, attempts));
  return play_round(energies_kj_per_mol, &accepted);
}

// One round: each attempt's decision from the rule (decided null) or as given, applied to the map and the counts.
std::vector<ExchangeAttempt> ReplicaExchange::play_round(const std::vector<double>& energies_kj_per_mol,
                                                         const std::vector<std::uint8_t>* decided) {
  const int n = size();
  if (static_cast<int>(energies_kj_per_mol.size()) != n)
    throw RuntimeError(fmt::format("replica exchange: {} energies for {} replicas", energies_kj_per_mol.size(), n));
  for (int r = 0; r < n; ++r)
    if (!std::isfinite(energies_kj_per_mol[static_cast<std::size_t>(r)]))
      throw RuntimeError(fmt::format("replica exchange: replica {} has a non-finite potential energy", r));
  std::vector<ExchangeAttempt> out;
  for (int k = static_cast<int>(rounds_ % 2); k + 1 < n; k += 2) {
    ExchangeAttempt a;
    a.round = rounds_;
    a.lower = k;
    a.replica_lower = replica_at(k);
    a.replica_upper = replica_at(k + 1);
    a.energy_lower = energies_kj_per_mol[static_cast<std::size_t>(a.replica_lower)];
    a.energy_upper = energies_kj_per_mol[static_cast<std::size_t>(a.replica_upper)];
    const double t_lower = temperatures_[static_cast<std::size_t>(k)];
    const double t_upper = temperatures_[static_cast<std::size_t>(k + 1)];
    const ExchangeDecision d =
        temperature_exchange_decision(t_lower, t_upper, a.energy_lower, a.energy_upper, seed_, rounds_, k);
    a.probability = d.probability;
    a.accepted = decided ? (*decided)[out.size()] != 0 : d.accepted;
    ++attempts_[static_cast<std::size_t>(k)];
    if (a.accepted) {
      ++accepted_[static_cast<std::size_t>(k)];
      std::swap(replica_at_[static_cast<std::size_t>(k)], replica_at_[static_cast<std::size_t>(k + 1)]);
      temperature_of_[static_cast<std::size_t>(a.replica_lower)] = k + 1;
      temperature_of_[static_cast<std::size_t>(a.replica_upper)] = k;
      a.velocity_scale_lower = exchange_velocity_scale(t_lower, t_upper);
      a.velocity_scale_upper = exchange_velocity_scale(t_upper, t_lower);
    }
    out.push_back(a);
  }
  ++rounds_;
  note_positions();
  return out;
}

void ReplicaExchange::note_positions() {
  const int top = size() - 1;
  for (int r = 0; r < size(); ++r) {
    const int k = temperature_index_of(r);
    int& heading = heading_[static_cast<std::size_t>(r)];
    if (k == 0) {
      if (heading == 2) ++round_trips_[static_cast<std::size_t>(r)];
      heading = 1;
    } else if (k == top && heading == 1) {
      heading = 2;
    }
  }
}

int ReplicaExchange::total_round_trips() const {
  int total = 0;
  for (int t : round_trips_) total += t;
  return total;
}

// Layout: size, rounds, then per replica its temperature index, round trips and heading, then per pair
// its attempts and acceptances. Counts stay exact in a double up to 2^53.
std::vector<double> ReplicaExchange::state() const {
  std::vector<double> s{static_cast<double>(size()), static_cast<double>(rounds_)};
  for (int r = 0; r < size(); ++r) {
    s.push_back(temperature_of_[static_cast<std::size_t>(r)]);
    s.push_back(round_trips_[static_cast<std::size_t>(r)]);
    s.push_back(heading_[static_cast<std::size_t>(r)]);
  }
  for (int k = 0; k + 1 < size(); ++k) {
    s.push_back(static_cast<double>(attempts_[static_cast<std::size_t>(k)]));
    s.push_back(static_cast<double>(accepted_[static_cast<std::size_t>(k)]));
  }
  return s;
}

void ReplicaExchange::set_state(const std::vector<double>& s) {
  const std::size_t n = temperatures_.size();
  if (s.size() != 2 + 3 * n + 2 * (n - 1) || s[0] != static_cast<double>(n))
    throw InputError(fmt::format("replica exchange state is of another ladder (expected {} replicas)", n));
  std::vector<int> temperature_of(n), replica_at(n, -1);
  for (std::size_t r = 0; r < n; ++r) {
    const double k = s[2 + 3 * r];
    if (!(k >= 0.0 && k < static_cast<double>(n)) || replica_at[static_cast<std::size_t>(k)] != -1)
      throw InputError("replica exchange state: the replica <-> temperature map is not a permutation");
    temperature_of[r] = static_cast<int>(k);
    replica_at[static_cast<std::size_t>(k)] = static_cast<int>(r);
  }
  rounds_ = static_cast<std::int64_t>(s[1]);
  temperature_of_ = std::move(temperature_of);
  replica_at_ = std::move(replica_at);
  for (std::size_t r = 0; r < n; ++r) {
    round_trips_[r] = static_cast<int>(s[3 + 3 * r]);
    heading_[r] = static_cast<int>(s[4 + 3 * r]);
  }
  for (std::size_t k = 0; k + 1 < n; ++k) {
    attempts_[k] = static_cast<std::int64_t>(s[2 + 3 * n + 2 * k]);
    accepted_[k] = static_cast<std::int64_t>(s[3 + 3 * n + 2 * k]);
  }
}

}  // namespace mdsim
