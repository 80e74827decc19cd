#include "kernels/cpu/cpu_context.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "common/errors.hpp"
#include "physics/stability.hpp"
#include "kernels/cpu/cpu_constraints.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cpu/cpu_minimizer.hpp"
#include "physics/integrator_steps.hpp"
#include "physics/philox.hpp"
#include "platform/barostat.hpp"
#include "platform/velocities.hpp"
#include "platform/virtual_sites.hpp"

namespace mdsim {

namespace {

class CpuContext final : public Context {
 public:
  CpuContext(const System& system, const DynamicsSettings& settings)
      : system_(system),
        settings_((check_dynamics_settings(system, settings), settings)),
        evaluator_(system_),
        constraints_(system_, system_.mass_amu),
        seed_(choose_seed(settings.integrator.seed)),
        dof_(degrees_of_freedom(system_, settings.remove_cm_motion)) {
    const std::size_t n = static_cast<std::size_t>(system_.num_particles());
    inverse_mass_.resize(n);
    for (std::size_t i = 0; i < n; ++i) inverse_mass_[i] = system_.mass_amu[i] > 0.0 ? 1.0 / system_.mass_amu[i] : 0.0;
    // x_, v_ and f_ keep their storage for the context's life (views of them, state_array, stay valid).
    x_.assign(n, Vec3d(0, 0, 0));
    v_.assign(n, Vec3d(0, 0, 0));
    f_.assign(n, Vec3d(0, 0, 0));
    x_new_.resize(n);
    x_unconstrained_.resize(n);
    if (system_.box) box_ = *system_.box;
    if (settings_.barostat) barostat_.emplace(system_, *settings_.barostat);
  }

  void set_positions(const std::vector<Vec3d>& positions) override {
    check_size(positions, "positions");
    check_finite_input(positions, "positions");
    std::copy(positions.begin(), positions.end(), x_.begin());  // in place: views of x_ stay valid
    place_virtual_sites(system_, x_);
    positions_set_ = true;
    forces_valid_ = false;
  }

  void set_velocities(const std::vector<Vec3d>& velocities) override {
    check_size(velocities, "velocities");
    check_finite_input(velocities, "velocities");
    std::copy(velocities.begin(), velocities.end(), v_.begin());
  }

  void set_velocities_to_temperature(double temperature_k, std::uint64_t seed) override {
    check_initial_temperature(temperature_k);
    if (!constraints_.empty()) require_positions("set_velocities_to_temperature");
    const std::vector<Vec3d> v = thermal_velocities(inverse_mass_, temperature_k, seed != 0 ? seed : seed_);
    std::copy(v.begin(), v.end(), v_.begin());
    if (settings_.remove_cm_motion) remove_com_velocity(v_, system_.mass_amu, inverse_mass_);
    if (!constraints_.empty()) constraints_.apply_velocities(x_, v_, settings_.integrator.constraint_tolerance);
  }

  void apply_constraints(double tolerance) override {
    require_positions("apply_constraints");
    if (!(tolerance > 0.0)) throw InputError("apply_constraints: tolerance must be positive, got " + quoted_number(tolerance));
    if (constraints_.empty()) return;
    const std::vector<Vec3d> reference = x_;
    constraints_.apply_positions(reference, x_, tolerance);
    constraints_.apply_velocities(x_, v_, tolerance);
    place_virtual_sites(system_, x_);
    forces_valid_ = false;
  }

  void set_box(const Boxd& box) override {
    if (!system_.box) throw InputError("set_box: the system is not periodic");
    evaluator_.set_box(box);
    box_ = box;
    forces_valid_ = false;
  }

  void set_step(std::int64_t step, double time_ps) override {
    if (step < 0) throw InputError("set_step: step must not be negative, got " + std::to_string(step));
    step_ = step;
    time_ps_ = time_ps;
  }

  void step(int steps) override {
    require_positions("step");
    for (int s = 0; s < steps; ++s) {
      if (settings_.removes_cm_motion_at(step_)) remove_com_velocity(v_, system_.mass_amu, inverse_mass_);
      if (barostat_ && barostat_->due(step_)) barostat_move();
      ensure_forces();
      if (settings_.integrator.type == IntegratorType::LangevinMiddle)
        langevin_middle_step();
      else
        verlet_step();
      place_virtual_sites(system_, x_);  // sites follow their parents (trajectories and checkpoints read x_)
      check_finite();
      ++step_;
      time_ps_ += settings_.integrator.timestep_ps;
      forces_valid_ = false;
    }
  }

  StateArray state_array(StateField field) override {
    static_assert(sizeof(Vec3d) == 3 * sizeof(double), "Vec3d rows are x, y, z doubles");
    StateArray a;
    a.rows = x_.size();
    switch (field) {
      case StateField::Positions: a.data = reinterpret_cast<double*>(x_.data()); break;
      case StateField::Velocities: a.data = reinterpret_cast<double*>(v_.data()); break;
      case StateField::Forces:
        require_positions("forces");
        ensure_forces();
        a.data = reinterpret_cast<double*>(f_.data());
        break;
    }
    return a;
  }

  void add_external_force(std::shared_ptr<ExternalForce> force) override {
    externals_.push_back(std::move(force));
    forces_valid_ = false;
  }
  void remove_external_force(const ExternalForce* force) override {
    erase_external_force(externals_, force);
    forces_valid_ = false;
  }

  // In the evaluator: every evaluation of the context (steps, minimisation, barostat trials, state())
  // goes through evaluator_.compute.
  void set_position_restraints(const PositionRestraints& restraints) override {
    evaluator_.set_position_restraints(restraints);
    forces_valid_ = false;
  }

  void state_written(StateField field) override {
    if (field == StateField::Positions) {
      check_finite_input(x_, "positions");
      place_virtual_sites(system_, x_);
      forces_valid_ = false;
      positions_set_ = true;
    } else if (field == StateField::Velocities) {
      check_finite_input(v_, "velocities");
    }
  }

  SimulationState state(const StateRequest& request) override {
    StateReaders read;
    read.positions = [this] { return x_; };
    read.velocities = [this] { return v_; };
    read.evaluate = [this] {
      require_positions("state");
      ensure_forces();
    };
    read.forces = [this] { return f_; };
    read.potential = [this] { return energy_; };
    read.kinetic_energy = [this] { return kinetic_energy(); };
    return assemble_state(request, step_, time_ps_, system_.box ? &box_ : nullptr, dof_, read);
  }

  MinimizationResult minimize(double tolerance, int max_iterations) override {
    require_positions("minimize");
    forces_valid_ = false;
    const EnergyAndForces energy_and_forces = [this](const std::vector<Vec3d>& x, std::vector<Vec3d>& f) {
      return evaluate(x, f, true).total;
    };
    return minimize_on_manifold(energy_and_forces, system_, constraints_, x_, tolerance, max_iterations,
                                settings_.integrator.constraint_tolerance);
  }

  std::uint64_t seed() const override { return seed_; }
  void set_seed(std::uint64_t seed) override { seed_ = seed; }

  std::vector<double> barostat_state() const override { return barostat_state_of(barostat_); }
  void set_barostat_state(const std::vector<double>& state) override { restore_barostat_state(barostat_, state); }
  const DynamicsSettings& dynamics() const override { return settings_; }
  void set_integrator(const IntegratorConfig& integrator) override {
    settings_ = with_integrator(settings_, integrator);
    if (barostat_ && settings_.barostat) barostat_->set_temperature(settings_.barostat->temperature_k);
  }

 private:
  void check_size(const std::vector<Vec3d>& v, const char* what) const { check_particle_count(v.size(), x_.size(), what); }

  void require_positions(const char* what) const {
    if (!positions_set_) throw RuntimeError(std::string(what) + ": positions have not been set");
  }

  void check_finite() const {
    for (const Vec3d& p : x_)
      if (!position_in_range(p.x, p.y, p.z))
        throw RuntimeError("the simulation became unstable at step " + std::to_string(step_ + 1) + ": " +
                           unstable_simulation_reason());
  }

  // The platform's forces and energies, then each external force's added in. The external forces see
  // `x` and `f` as arrays of the context's layout (the positions evaluated may be a trial's).
  EnergyTerms evaluate(const std::vector<Vec3d>& x, std::vector<Vec3d>& f, bool energy_wanted) {
    EnergyTerms e = evaluator_.compute(x, &f);
    if (externals_.empty()) return e;
    site_forces_.clear();  // the sites' rows before the external forces: what they add there is spread below
    for (const VirtualSite& site : system_.virtual_sites) site_forces_.push_back(f[static_cast<std::size_t>(site.particle)]);
    StateArray positions, forces;
    positions.data = const_cast<double*>(reinterpret_cast<const double*>(x.data()));
    positions.rows = forces.rows = x.size();
    forces.data = reinterpret_cast<double*>(f.data());
    for (const auto& external : externals_) {
      e.external += checked_external_energy(*external, external->add(positions, forces, evaluator_.box(), energy_wanted));
    }
    for (std::size_t i = 0; i < f.size(); ++i)
      if (!std::isfinite(f[i].x) || !std::isfinite(f[i].y) || !std::isfinite(f[i].z))
        throw RuntimeError("the forces on particle " + std::to_string(i) + " are not finite after the external "
                           "forces (" + external_force_names(externals_) + ") were added");
    if (!system_.virtual_sites.empty()) spread_external_site_forces(x, f);
    e.total += e.external;
    return e;
  }

  // Spreads onto the parents what the external forces added to the sites' rows (site_forces_: the rows before),
  // at x with the sites placed; the sites' rows keep the force on them (getState's convention).
  void spread_external_site_forces(const std::vector<Vec3d>& x, std::vector<Vec3d>& f) {
    std::vector<Vec3d> added(f.size(), Vec3d(0, 0, 0));
    for (std::size_t k = 0; k < system_.virtual_sites.size(); ++k) {
      const auto site = static_cast<std::size_t>(system_.virtual_sites[k].particle);
      added[site] = f[site] - site_forces_[k];
    }
    std::vector<Vec3d> placed = x;
    place_virtual_sites(system_, placed);
    spread_virtual_site_forces(system_, placed, added);
    for (std::size_t k = 0; k < system_.virtual_sites.size(); ++k)
      added[static_cast<std::size_t>(system_.virtual_sites[k].particle)] = Vec3d(0, 0, 0);
    for (std::size_t i = 0; i < f.size(); ++i) f[i] += added[i];
  }

  void ensure_forces() {
    if (forces_valid_) return;
    energy_ = evaluate(x_, f_, true);
    forces_valid_ = true;
  }

  void barostat_move() {
    ensure_forces();
    Boxd box = box_;
    auto trial = [this](const std::vector<Vec3d>& positions, const Boxd& b) {
      try {
        evaluator_.set_box(b);
      } catch (const InputError& e) {  // e.g. the box fell below twice the cutoff
        throw RuntimeError("barostat at step " + std::to_string(step_) + ": " + e.what());
      }
      trial_energy_ = evaluate(positions, trial_forces_, true);
      return trial_energy_.total;
    };
    if (barostat_->attempt(x_, box, energy_.total, seed_, step_, trial)) {
      place_virtual_sites(system_, x_);  // as the trial evaluation placed them
      box_ = box;
      std::copy(trial_forces_.begin(), trial_forces_.end(), f_.begin());
      energy_ = trial_energy_;
    } else {
      evaluator_.set_box(box_);
    }
  }

  void langevin_middle_step() {
    const IntegratorConfig& in = settings_.integrator;
    const double dt = in.timestep_ps, half_dt = 0.5 * dt, inverse_dt = 1.0 / dt;
    const LangevinCoefficients coef = langevin_coefficients(in.friction_per_ps, dt, in.temperature_k);
    const std::size_t n = x_.size();
    for (std::size_t i = 0; i < n; ++i)
      if (inverse_mass_[i] != 0.0) v_[i] = velocity_kick(v_[i], f_[i], inverse_mass_[i], dt);
    if (!constraints_.empty()) constraints_.apply_velocities(x_, v_, in.constraint_tolerance);
    const std::uint64_t step = static_cast<std::uint64_t>(step_);
    for (std::size_t i = 0; i < n; ++i) {
      if (inverse_mass_[i] == 0.0) {
        x_new_[i] = x_[i];
        x_unconstrained_[i] = x_[i];
        continue;
      }
      Vec3d x = drift(x_[i], v_[i], half_dt);
      v_[i] = langevin_o_step(v_[i], inverse_mass_[i], coef,
                              gaussian3(seed_, kStreamLangevin, step, static_cast<std::uint32_t>(i)));
      x = drift(x, v_[i], half_dt);
      x_new_[i] = x;
      x_unconstrained_[i] = x;
    }
    if (!constraints_.empty()) {
      constraints_.apply_positions(x_, x_new_, in.constraint_tolerance);
      for (std::size_t i = 0; i < n; ++i)
        if (inverse_mass_[i] != 0.0)
          v_[i] = constraint_velocity_correction(v_[i], x_new_[i], x_unconstrained_[i], inverse_dt);
    }
    std::copy(x_new_.begin(), x_new_.end(), x_.begin());
  }

  void verlet_step() {
    const IntegratorConfig& in = settings_.integrator;
    const double dt = in.timestep_ps, inverse_dt = 1.0 / dt;
    const std::size_t n = x_.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (inverse_mass_[i] == 0.0) {
        x_new_[i] = x_[i];
        continue;
      }
      v_[i] = velocity_kick(v_[i], f_[i], inverse_mass_[i], dt);
      x_new_[i] = drift(x_[i], v_[i], dt);
    }
    if (!constraints_.empty()) constraints_.apply_positions(x_, x_new_, in.constraint_tolerance);
    for (std::size_t i = 0; i < n; ++i)
      if (inverse_mass_[i] != 0.0) v_[i] = leapfrog_velocity(x_new_[i], x_[i], inverse_dt);
    std::copy(x_new_.begin(), x_new_.end(), x_.begin());
  }

  // Requires forces at the current positions (Verlet's on-step velocity estimate).
  double kinetic_energy() {
    const std::size_t n = v_.size();
    double twice = 0.0;
    if (settings_.integrator.type == IntegratorType::Verlet) {
      shifted_v_.resize(n);
      const double shift = 0.5 * settings_.integrator.timestep_ps;
      for (std::size_t i = 0; i < n; ++i) shifted_v_[i] = velocity_kick(v_[i], f_[i], inverse_mass_[i], shift);
      if (!constraints_.empty()) constraints_.apply_velocities(x_, shifted_v_, settings_.integrator.constraint_tolerance);
      for (std::size_t i = 0; i < n; ++i) twice += twice_kinetic_energy(system_.mass_amu[i], shifted_v_[i]);
    } else {
      for (std::size_t i = 0; i < n; ++i) twice += twice_kinetic_energy(system_.mass_amu[i], v_[i]);
    }
    return 0.5 * twice;
  }

  System system_;
  DynamicsSettings settings_;
  CpuForceEvaluator evaluator_;
  CpuConstraints constraints_;
  std::optional<MonteCarloBarostat> barostat_;
  std::uint64_t seed_;
  int dof_;
  std::vector<double> inverse_mass_;
  std::vector<Vec3d> x_, v_, f_, x_new_, x_unconstrained_, shifted_v_, trial_forces_, site_forces_;
  std::vector<std::shared_ptr<ExternalForce>> externals_;
  EnergyTerms energy_, trial_energy_;
  bool forces_valid_ = false;
  bool positions_set_ = false;
  Boxd box_{};
  std::int64_t step_ = 0;
  double time_ps_ = 0.0;
};

}  // namespace

std::unique_ptr<Context> make_cpu_context(const System& system, const DynamicsSettings& settings) {
  return std::make_unique<CpuContext>(system, settings);
}

}  // namespace mdsim
