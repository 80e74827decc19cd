#include "platform/velocities.hpp"

#include <cmath>

#include "common/errors.hpp"
#include "physics/integrator_steps.hpp"
#include "physics/philox.hpp"

namespace mdsim {

void check_initial_temperature(double temperature_k) {
  if (!(temperature_k >= 0.0) || !std::isfinite(temperature_k))
    throw InputError("initial velocities: temperature must be zero or positive, got " + quoted_number(temperature_k) + " K");
}

std::vector<Vec3d> thermal_velocities(const std::vector<double>& inverse_mass, double temperature_k,
                                      std::uint64_t seed) {
  const double kt = kBoltzmannKjPerMolK * temperature_k;
  std::vector<Vec3d> v(inverse_mass.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = inverse_mass[i] > 0.0
               ? thermal_velocity(inverse_mass[i], kt, gaussian3(seed, kStreamInitialVelocities, 0, static_cast<std::uint32_t>(i)))
               : Vec3d(0, 0, 0);
  return v;
}

void remove_com_velocity(std::vector<Vec3d>& v, const std::vector<double>& mass_amu,
                         const std::vector<double>& inverse_mass) {
  Vec3d momentum(0, 0, 0);
  double mass = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    momentum += v[i] * mass_amu[i];
    mass += mass_amu[i];
  }
  if (!(mass > 0.0)) return;
  const Vec3d v_cm = momentum / mass;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (inverse_mass[i] > 0.0) v[i] -= v_cm;
}

}  // namespace mdsim
