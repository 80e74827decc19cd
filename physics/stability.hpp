// When a simulation has blown up: an atom's position is NaN or infinite, or farther from the origin than
// kMaxCoordinateNm. No real trajectory carries an atom a millimetre (diffusion would need seconds of
// simulated time), so a coordinate beyond it means a step flung the atom; in the mixed-precision kernels
// its pair geometry would be noise long before the number overflows. Both platforms stop the run with the
// same error (the CPU after each step, CUDA at its next synchronisation).
#pragma once

#include <cmath>

#include "physics/vec3.hpp"

namespace mdsim {

constexpr double kMaxCoordinateNm = 1.0e6;

// False for NaN too (every comparison with NaN is false).
MDSIM_HD bool position_in_range(double x, double y, double z) {
  return fabs(x) <= kMaxCoordinateNm && fabs(y) <= kMaxCoordinateNm && fabs(z) <= kMaxCoordinateNm;
}

// The message both platforms end an unstable run with ("at step N" where the platform knows it).
inline const char* unstable_simulation_reason() {
  return "an atom's position is not finite or more than 1e6 nm from the origin; a smaller time step or an "
         "energy minimisation first may help";
}

}  // namespace mdsim
