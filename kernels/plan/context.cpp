#include "kernels/plan/context.hpp"

#include <cmath>
#include <string>

#include "common/errors.hpp"

namespace mdsim {

void check_dynamics_settings(const System& system, const DynamicsSettings& s) {
  const IntegratorConfig& in = s.integrator;
  if (!(in.timestep_ps > 0.0) || !std::isfinite(in.timestep_ps))
    throw InputError("integrator: timestep must be positive, got " + quoted_number(in.timestep_ps) + " ps");
  if (!(in.constraint_tolerance > 0.0) || !(in.constraint_tolerance < 1.0))
    throw InputError("integrator: constraint_tolerance must lie in (0, 1), got " + quoted_number(in.constraint_tolerance));
  if (in.type == IntegratorType::LangevinMiddle) {
    if (!(in.temperature_k > 0.0) || !std::isfinite(in.temperature_k))
      throw InputError("integrator: temperature must be positive, got " + quoted_number(in.temperature_k) + " K");
    if (!(in.friction_per_ps >= 0.0) || !std::isfinite(in.friction_per_ps))
      throw InputError("integrator: friction must be zero or positive, got " + quoted_number(in.friction_per_ps) + " 1/ps");
  }
  if (s.barostat && !system.box)
    throw InputError("barostat: a Monte Carlo barostat needs a periodic box (CRYST1 record and a periodic "
                     "nonbonded method)");
  if (s.barostat && s.barostat->interval_steps <= 0)
    throw InputError("barostat: interval must be a positive number of steps, got " +
                     std::to_string(s.barostat->interval_steps));
  if (s.barostat && !(s.barostat->temperature_k > 0.0))
    throw InputError("barostat: temperature must be positive, got " + quoted_number(s.barostat->temperature_k) + " K");
  for (std::size_t i = 0; i < system.mass_amu.size(); ++i)
    if (!(system.mass_amu[i] >= 0.0) || !std::isfinite(system.mass_amu[i]))
      throw RuntimeError("system: particle " + std::to_string(i) + " has invalid mass " + quoted_number(system.mass_amu[i]));
}

void check_particle_count(std::size_t given, std::size_t particles, const char* what) {
  if (given != particles)
    throw InputError(std::string(what) + ": " + std::to_string(given) + " given, but the system has " +
                     std::to_string(particles) + " particles");
}

void check_finite_input(const std::vector<Vec3d>& values, const char* what) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i].x) || !std::isfinite(values[i].y) || !std::isfinite(values[i].z))
      throw InputError(std::string(what) + ": particle " + std::to_string(i) + " has a non-finite coordinate");
}

double checked_external_energy(const ExternalForce& force, double energy) {
  if (!std::isfinite(energy))
    throw RuntimeError(force.name() + " returned a non-finite energy (" + quoted_number(energy) + " kJ/mol)");
  return energy;
}

std::string external_force_names(const std::vector<std::shared_ptr<ExternalForce>>& forces) {
  std::string names;
  for (const auto& force : forces) names += (names.empty() ? "" : ", ") + force->name();
  return names;
}

}  // namespace mdsim

namespace mdsim {
void Context::set_position_restraints(const PositionRestraints&) {
  throw RuntimeError("position restraints are not implemented on this platform yet");
}
}  // namespace mdsim
