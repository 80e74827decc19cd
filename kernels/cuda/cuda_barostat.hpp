// The Monte Carlo barostat of the CUDA context (host-only header): MonteCarloBarostat's proposal,
// acceptance rule and move-size adaptation (platform/barostat.hpp) with the molecule centres
// scaled on the device, in the force evaluator's position array.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "physics/pbc.hpp"
#include "platform/barostat.hpp"
#include "model/run_config.hpp"
#include "model/system.hpp"

namespace mdsim {

class CudaBarostat {
 public:
  // No barostat without a config. Uploads the molecules on `stream` (synchronises).
  CudaBarostat(const System& system, const std::optional<BarostatConfig>& config, cudaStream_t stream);

  // Whether a move is due before the step after `completed_steps`.
  bool due(std::int64_t completed_steps) const { return barostat_ && barostat_->due(completed_steps); }

  // One volume move of the evaluator's positions and `box`, whose energy the evaluator's last
  // evaluation holds (downloaded: a host synchronisation, as is the trial's). Accepted (true): `box` is
  // the trial box and the evaluator's last evaluation, with energies, is of the new state. Rejected:
  // the positions and the evaluator's box are restored, its last evaluation is the trial's.
  bool move(CudaForceEvaluator& evaluator, Boxd& box, std::uint64_t seed, std::int64_t step);

  std::vector<double> state() const { return barostat_state_of(barostat_); }
  void set_state(const std::vector<double>& state) { restore_barostat_state(barostat_, state); }
  void set_temperature(double temperature_k) {
    if (barostat_) barostat_->set_temperature(temperature_k);
  }

 private:
  std::optional<MonteCarloBarostat> barostat_;  // proposals, acceptance, adaptation, state
  int n_ = 0;
  cudaStream_t stream_ = nullptr;
  int num_molecules_ = 0;
  cuda::DeviceBuffer<int> molecule_start_, molecule_atoms_;  // atoms of molecule m: [start[m], start[m+1])
  cuda::DeviceBuffer<double4_16a> position_backup_;
};

}  // namespace mdsim
