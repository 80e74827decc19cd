// `mdsim demux`: a temperature ladder's per-replica outputs (each continuous in configuration) sorted
// into per-temperature ones (docs/replicas.md). A frame or state line of step s was sampled before the
// exchange round of step s, so it belongs to the temperature its replica held after the last round
// before s (the exchange log's maps; every replica at its own index before the first round).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/exchange_log.hpp"
#include "model/run_config.hpp"

namespace mdsim {

struct DemuxSummary {
  std::int64_t frames = 0, state_lines = 0;  // per temperature
  std::vector<std::pair<std::string, std::string>> outputs;  // what, path
};

// Writes temperature_<t>_<T>K.h5 (trajectory) and temperature_<t>_<T>K.csv (state log) per ladder
// temperature into `out_dir` (default output.directory/demux when empty), from the replicas' trajectories
// and state logs the config enables and its exchange log. InputError, naming the file, for a config without
// a temperature ladder, missing or damaged outputs, or replicas whose frames or lines are at different steps.
DemuxSummary demux_ensemble(const RunConfig& config, std::string out_dir = {});

// The replica at each temperature for a sample of `step`, from the exchange log's maps (read_exchange_map).
std::vector<int> replicas_by_temperature_at(const std::vector<ExchangeMapPoint>& maps, std::int64_t step, int replicas);

}  // namespace mdsim
