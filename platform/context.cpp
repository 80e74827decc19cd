#include "platform/context.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "physics/integrator_steps.hpp"

namespace mdsim {

void check_integrator_config(const IntegratorConfig& in) {
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
}

void check_dynamics_settings(const System& system, const DynamicsSettings& s) {
  check_integrator_config(s.integrator);
  if (s.remove_cm_motion_interval <= 0)
    throw InputError("remove_cm_motion_interval must be a positive number of steps, got " +
                     std::to_string(s.remove_cm_motion_interval));
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

DynamicsSettings with_bath_temperature(const DynamicsSettings& settings, double temperature_k) {
  if (settings.integrator.type != IntegratorType::LangevinMiddle)
    throw InputError(std::string("set_temperature: the ") + to_string(settings.integrator.type) +
                     " integrator has no heat bath; a temperature needs integrator.type langevin_middle");
  if (!(temperature_k > 0.0) || !std::isfinite(temperature_k))
    throw InputError("set_temperature: the temperature must be positive and finite, got " + quoted_number(temperature_k) +
                     " K");
  DynamicsSettings s = settings;
  s.integrator.temperature_k = temperature_k;
  if (s.barostat) s.barostat->temperature_k = temperature_k;
  return s;
}

DynamicsSettings with_integrator(const DynamicsSettings& settings, const IntegratorConfig& next) {
  const IntegratorConfig& now = settings.integrator;
  if (next.type != now.type)
    throw InputError(std::string("the integrator's type stays ") + to_string(now.type) + " for the simulation's life, got " +
                     to_string(next.type) + ": start a new simulation from this state for another integrator");
  if (now.type == IntegratorType::Verlet &&
      (next.temperature_k != now.temperature_k || next.friction_per_ps != now.friction_per_ps))
    throw InputError("the verlet integrator has no heat bath: its temperature and friction cannot be set (a heat bath "
                     "needs integrator.type langevin_middle)");
  check_integrator_config(next);
  DynamicsSettings s = settings;
  s.integrator = next;
  s.integrator.seed = now.seed;
  if (s.barostat && now.type == IntegratorType::LangevinMiddle) s.barostat->temperature_k = next.temperature_k;
  return s;
}

void erase_external_force(std::vector<std::shared_ptr<ExternalForce>>& forces, const ExternalForce* force) {
  const auto it = std::find_if(forces.begin(), forces.end(), [&](const auto& f) { return f.get() == force; });
  if (it == forces.end()) throw InputError("remove_force: the force is not in the simulation (removed already?)");
  forces.erase(it);
}

void Context::set_temperature(double temperature_k) {
  set_integrator(with_bath_temperature(dynamics(), temperature_k).integrator);
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

void check_position_restraints(const PositionRestraints& r, std::size_t particles) {
  if (r.reference_nm.size() != r.atoms.size() || r.k_kj_per_mol_nm2.size() != r.atoms.size())
    throw InputError("position restraints: " + std::to_string(r.atoms.size()) + " atoms but " +
                     std::to_string(r.reference_nm.size()) + " reference positions and " +
                     std::to_string(r.k_kj_per_mol_nm2.size()) + " force constants; give one of each per atom");
  for (std::size_t e = 0; e < r.atoms.size(); ++e) {
    const int atom = r.atoms[e];
    if (atom < 0 || static_cast<std::size_t>(atom) >= particles)
      throw InputError("position restraints: entry " + std::to_string(e) + " restrains atom " + std::to_string(atom) +
                       ", but the system has " + std::to_string(particles) + " particles (indices from 0)");
    const Vec3d& k = r.k_kj_per_mol_nm2[e];
    for (int a = 0; a < 3; ++a)
      if (!std::isfinite(k[a]) || k[a] < 0.0)
        throw InputError("position restraints: k must be finite and zero or positive, got " + quoted_number(k[a]) +
                         " kJ/mol/nm^2 along " + "xyz"[a] + " for atom " + std::to_string(atom) + " (entry " +
                         std::to_string(e) + ")");
    const Vec3d& x0 = r.reference_nm[e];
    if (!std::isfinite(x0.x) || !std::isfinite(x0.y) || !std::isfinite(x0.z))
      throw InputError("position restraints: the reference position of atom " + std::to_string(atom) + " (entry " +
                       std::to_string(e) + ") is not finite");
  }
}

SimulationState assemble_state(const StateRequest& request, std::int64_t step, double time_ps, const Boxd* box,
                               int dof, const StateReaders& read) {
  SimulationState st;
  st.step = step;
  st.time_ps = time_ps;
  st.has_box = box != nullptr;
  if (st.has_box) st.box = *box;
  st.degrees_of_freedom = dof;
  if (request.positions) st.positions_nm = read.positions();
  if (request.velocities) st.velocities_nm_per_ps = read.velocities();
  if (request.forces || request.energy) read.evaluate();
  if (request.forces) st.forces_kj_per_mol_nm = read.forces();
  if (request.energy) {
    st.potential = read.potential();
    st.kinetic_kj_per_mol = read.kinetic_energy();
    st.temperature_k = dof > 0 ? 2.0 * st.kinetic_kj_per_mol / (dof * kBoltzmannKjPerMolK) : 0.0;
  }
  return st;
}

void Context::scale_velocities(double factor) {
  StateRequest request;
  request.positions = false;
  request.velocities = true;
  std::vector<Vec3d> v = state(request).velocities_nm_per_ps;
  for (Vec3d& x : v) x = x * factor;
  set_velocities(v);
}

void ExternalForce::add_batch(const StateArray&, const StateArray&, int, const Boxd*, bool, double*) {
  throw RuntimeError(name() + " acts on one system, not on a batch of replicas");
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
