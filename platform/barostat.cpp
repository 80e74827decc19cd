#include "platform/barostat.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "common/errors.hpp"
#include "physics/integrator_steps.hpp"
#include "physics/philox.hpp"

namespace mdsim {

void scale_molecule_centres(std::vector<Vec3d>& positions, const std::vector<std::vector<int>>& molecules,
                            const Boxd& box, double scale) {
  for (const auto& molecule : molecules) {
    Vec3d centre(0.0, 0.0, 0.0);
    for (int a : molecule) centre += positions[static_cast<std::size_t>(a)];
    centre = centre / static_cast<double>(molecule.size());
    Vec3d wrapped = centre;
    wrapped -= box.c * std::floor(wrapped.z / box.c.z);
    wrapped -= box.b * std::floor(wrapped.y / box.b.y);
    wrapped -= box.a * std::floor(wrapped.x / box.a.x);
    const Vec3d offset = wrapped * scale - centre;
    for (int a : molecule) positions[static_cast<std::size_t>(a)] += offset;
  }
}

MonteCarloBarostat::MonteCarloBarostat(const System& system, const BarostatConfig& config) : config_(config) {
  if (!system.box)
    throw InputError("barostat: a Monte Carlo barostat needs a periodic box (CRYST1 record and a periodic "
                     "nonbonded method)");
  if (config.interval_steps <= 0)
    throw InputError("barostat: interval must be a positive number of steps, got " +
                     std::to_string(config.interval_steps));
  if (!(config.temperature_k > 0.0))
    throw InputError("barostat: temperature must be positive, got " + std::to_string(config.temperature_k) + " K");
  molecules_ = find_molecules(system);
  volume_scale_ = 0.01 * system.box->volume();
}

MonteCarloBarostat::Proposal MonteCarloBarostat::propose(const Boxd& box, std::uint64_t seed,
                                                               std::int64_t step) const {
  const Philox4x32 r = philox_draw(seed, kStreamBarostat, static_cast<std::uint64_t>(step), 0u);
  Proposal p;
  const double u_volume = static_cast<double>(r.v[0]) * 2.3283064365386962890625e-10;  // [0, 1)
  p.u_accept = static_cast<double>(r.v[1]) * 2.3283064365386962890625e-10;
  p.volume = box.volume();
  p.delta_volume = volume_scale_ * 2.0 * (u_volume - 0.5);
  p.new_volume = p.volume + p.delta_volume;
  p.length_scale = std::cbrt(p.new_volume / p.volume);
  return p;
}

bool MonteCarloBarostat::decide(const Proposal& p, double current_energy, double trial_energy) {
  const double kt = kBoltzmannKjPerMolK * config_.temperature_k;
  const double pressure = config_.pressure_bar * kKjPerMolNm3PerBar;
  const double w = trial_energy - current_energy + pressure * p.delta_volume -
                   static_cast<double>(molecules_.size()) * kt * std::log(p.new_volume / p.volume);
  const bool accept = std::isfinite(trial_energy) && !(w > 0.0 && p.u_accept > std::exp(-w / kt));
  const double volume_now = accept ? p.new_volume : p.volume;
  if (accept) {
    ++accepted_;
    ++total_accepted_;
  }
  ++attempted_;
  ++total_attempted_;
  if (attempted_ >= 10) {
    if (accepted_ < 0.25 * attempted_) {
      volume_scale_ /= 1.1;
      attempted_ = accepted_ = 0;
    } else if (accepted_ > 0.75 * attempted_) {
      volume_scale_ = std::min(volume_scale_ * 1.1, volume_now * 0.3);
      attempted_ = accepted_ = 0;
    }
  }
  return accept;
}

bool MonteCarloBarostat::attempt(std::vector<Vec3d>& positions, Boxd& box, double current_energy,
                                    std::uint64_t seed, std::int64_t step, const TrialEnergy& trial_energy) {
  const Proposal p = propose(box, seed, step);
  trial_ = positions;
  scale_molecule_centres(trial_, molecules_, box, p.length_scale);
  Boxd trial_box = box;
  trial_box.a *= p.length_scale;
  trial_box.b *= p.length_scale;
  trial_box.c *= p.length_scale;
  const bool accept = decide(p, current_energy, trial_energy(trial_, trial_box));
  if (accept) {
    std::copy(trial_.begin(), trial_.end(), positions.begin());  // in place: the caller's storage stays
    box = trial_box;
  }
  return accept;
}

std::vector<double> MonteCarloBarostat::state() const {
  return {volume_scale_, static_cast<double>(attempted_), static_cast<double>(accepted_),
          static_cast<double>(total_attempted_), static_cast<double>(total_accepted_)};
}

void MonteCarloBarostat::set_state(const std::vector<double>& state) {
  if (state.size() != 5)
    throw InputError("barostat state: expected 5 values (move size > 0, attempts, acceptances, total attempts, "
                     "total acceptances), got " + std::to_string(state.size()) + " values");
  // Counts are whole, non-negative and fit their integers (a crafted checkpoint must not reach the casts).
  const auto count = [](double v, double limit) { return v >= 0.0 && v <= limit && v == std::floor(v); };
  constexpr double kIntMax = 2147483647.0, kTotalMax = 9007199254740992.0;  // int; 2^53 (exact in a double)
  if (!(std::isfinite(state[0]) && state[0] > 0.0) || !count(state[1], kIntMax) || !count(state[2], state[1]) ||
      !count(state[3], kTotalMax) || !count(state[4], state[3]))
    throw InputError("barostat state: expected a finite move size > 0 and whole counts (acceptances at most the "
                     "attempts), got [" + quoted_number(state[0]) + ", " + quoted_number(state[1]) + ", " +
                     quoted_number(state[2]) + ", " + quoted_number(state[3]) + ", " + quoted_number(state[4]) + "]");
  volume_scale_ = state[0];
  attempted_ = static_cast<int>(state[1]);
  accepted_ = static_cast<int>(state[2]);
  total_attempted_ = static_cast<std::int64_t>(state[3]);
  total_accepted_ = static_cast<std::int64_t>(state[4]);
}

std::vector<double> barostat_state_of(const std::optional<MonteCarloBarostat>& barostat) {
  return barostat ? barostat->state() : std::vector<double>{};
}

void restore_barostat_state(std::optional<MonteCarloBarostat>& barostat, const std::vector<double>& state) {
  if (!barostat) {
    if (state.empty()) return;
    throw InputError("barostat state given, but the run has no barostat");
  }
  barostat->set_state(state);
}

}  // namespace mdsim
