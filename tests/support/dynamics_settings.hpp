// Dynamics settings for tests: DynamicsSettings' defaults (LangevinMiddle, 300 K, 1/ps, 2 fs, constraint tolerance
// 1e-6, the centre-of-mass motion removed every step) with the seed, and the timestep and tolerance a test names.
#pragma once

#include <cstdint>

#include "platform/context.hpp"

namespace mdsim_test {

inline mdsim::DynamicsSettings langevin(std::uint64_t seed, double timestep_ps = 0.002,
                                        double constraint_tolerance = 1e-6) {
  mdsim::DynamicsSettings s;
  s.integrator.type = mdsim::IntegratorType::LangevinMiddle;
  s.integrator.seed = seed;
  s.integrator.timestep_ps = timestep_ps;
  s.integrator.temperature_k = 300.0;
  s.integrator.friction_per_ps = 1.0;
  s.integrator.constraint_tolerance = constraint_tolerance;
  return s;
}

}  // namespace mdsim_test
