// Samples a running Context for the energy-conservation tests: every `every` steps, the time (ps),
// the total energy (kJ/mol) and the temperature (K), then the drift (kJ/mol/ns, least squares over
// block means, with its standard error) and the total energy's standard deviation.
#pragma once

#include <cmath>
#include <vector>

#include "platform/context.hpp"
#include "support/statistics.hpp"

namespace mdsim_test {

struct EnergySeries {
  std::vector<double> time_ps, total_kj_per_mol;
  double mean_temperature_k = 0;
  int degrees_of_freedom = 0;
  double drift_kj_per_mol_ns = 0, drift_error = 0;  // slope and its standard error
  double std_total_kj_per_mol = 0;
};

inline EnergySeries sample_total_energy(mdsim::Context& ctx, int steps, int every, int blocks) {
  EnergySeries s;
  double temperature_sum = 0;
  for (int i = 0; i < steps / every; ++i) {
    ctx.step(every);
    const mdsim::SimulationState st = ctx.state(mdsim::StateRequest{false, false, false, true});
    s.time_ps.push_back(st.time_ps);
    s.total_kj_per_mol.push_back(st.potential.total + st.kinetic_kj_per_mol);
    temperature_sum += st.temperature_k;
    s.degrees_of_freedom = st.degrees_of_freedom;
  }
  s.mean_temperature_k = temperature_sum / static_cast<double>(s.time_ps.size());
  const LinearFit fit = block_fit(s.time_ps, s.total_kj_per_mol, blocks);
  s.drift_kj_per_mol_ns = fit.slope * 1000.0;
  s.drift_error = fit.slope_error * 1000.0;
  s.std_total_kj_per_mol = block_mean(s.total_kj_per_mol, blocks).std_dev;
  return s;
}

}  // namespace mdsim_test
