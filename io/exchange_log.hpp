// The replica-exchange log (exchange.csv in output.directory; docs/replicas.md): one line per attempted
// swap, with the units in the column names:
//   step,time_ps,round,pair,temperature_lower_k,temperature_upper_k,replica_lower,replica_upper,
//   potential_lower_kj_per_mol,potential_upper_kj_per_mol,volume_lower_nm3,volume_upper_nm3,probability,
//   accepted,replica_at_0,...,replica_at_<N-1>
// `pair` k is the attempt between temperatures k and k + 1; replica_lower/upper are the replicas there
// before the attempt; probability is the Metropolis acceptance probability (with a barostat the pV term
// is in it; the volumes are empty without a periodic box); accepted is 1 or 0; replica_at_t is the
// replica at temperature t after the whole round (so the map after every round is on its lines).
// Written through line by line; a restart keeps the lines up to the checkpoint's step (CsvLog).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/csv_log.hpp"

namespace mdsim {

struct ExchangeLogRow {
  std::int64_t step = 0;
  double time_ps = 0.0;
  std::int64_t round = 0;
  int pair = 0;
  double temperature_lower_k = 0.0, temperature_upper_k = 0.0;
  int replica_lower = 0, replica_upper = 0;
  double potential_lower_kj_per_mol = 0.0, potential_upper_kj_per_mol = 0.0;
  std::optional<double> volume_lower_nm3, volume_upper_nm3;
  double probability = 0.0;
  bool accepted = false;
  std::vector<int> replica_at;  // replica at each temperature after the round
};

std::string exchange_log_header(int replicas);

class ExchangeLog {
 public:
  // As CsvLog: a new file, or with append_after_step the lines up to that step kept.
  ExchangeLog(const std::string& path, int replicas, std::optional<std::int64_t> append_after_step = {});
  void write(const ExchangeLogRow& row);
  void close() { log_.close(); }
  const std::string& path() const { return log_.path(); }

 private:
  CsvLog log_;
  int replicas_;
};

// The replica <-> temperature map through a run, from an exchange log: (step, replica at each
// temperature after that step's round) per round, in order of step. InputError naming the file and line
// for a log of another replica count or a damaged line; with `ladder_k`, also for a row whose pair of
// temperatures is not the ladder's (the config's ladder changed since the run).
struct ExchangeMapPoint {
  std::int64_t step = 0;
  std::vector<int> replica_at;
};
std::vector<ExchangeMapPoint> read_exchange_map(const std::string& path, int replicas,
                                                const std::vector<double>* ladder_k = nullptr);

}  // namespace mdsim
