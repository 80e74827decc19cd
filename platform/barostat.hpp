// Isotropic Monte Carlo barostat on the CPU reference platform, as OpenMM's MonteCarloBarostat:
// every `interval` steps a random volume change dV in [-s, s) scales the box and the molecules'
// centres (molecules move rigidly), and the move is accepted with probability min(1, exp(-w/kT)),
//   w = ΔU + P ΔV - N_mol kT ln(V'/V).
// The move size s starts at 1% of the volume; after every 10 attempts it shrinks by 1.1 when fewer
// than 25% were accepted and grows by 1.1 (at most 30% of the volume) when more than 75% were.
// Random numbers come from Philox (kStreamBarostat, keyed by seed and step), so a run restarted from
// a checkpoint (box, positions, velocities, step and state()) repeats the same moves.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"
#include "model/run_config.hpp"
#include "model/molecules.hpp"
#include "model/system.hpp"

namespace mdsim {

// Moves each molecule rigidly: its geometric centre is wrapped into the primary cell of `box` and
// scaled by `scale` (isotropic). `positions` is modified in place.
void scale_molecule_centres(std::vector<Vec3d>& positions, const std::vector<std::vector<int>>& molecules,
                            const Boxd& box, double scale);

// Pressure in kJ/mol/nm^3 from bar.
constexpr double kKjPerMolNm3PerBar = 0.0602214076;

class MonteCarloBarostat {
 public:
  // Throws InputError when the System has no periodic box or the interval is not positive.
  MonteCarloBarostat(const System& system, const BarostatConfig& config);

  int interval() const { return config_.interval_steps; }
  // A move is made before integrating a step whenever the completed step count is a positive
  // multiple of the interval.
  bool due(std::int64_t completed_steps) const {
    return completed_steps > 0 && completed_steps % config_.interval_steps == 0;
  }
  const std::vector<std::vector<int>>& molecules() const { return molecules_; }

  // Trial energy: potential energy (kJ/mol) of the given positions in the given box.
  using TrialEnergy = std::function<double(const std::vector<Vec3d>& positions_nm, const Boxd& box)>;

  // One Monte Carlo volume move from (positions, box) with potential energy current_energy. On
  // acceptance positions and box are replaced by the trial's and true is returned; on rejection
  // they are left unchanged. `step` (completed steps) and `seed` select the random numbers.
  bool attempt(std::vector<Vec3d>& positions, Boxd& box, double current_energy, std::uint64_t seed,
               std::int64_t step, const TrialEnergy& trial_energy);

  // The two halves of attempt(), for platforms that scale the positions themselves (the CUDA
  // context): propose() draws the trial volume for this step; decide() applies the acceptance rule
  // to the trial's energy, counts the attempt and adapts the move size. Returns whether accepted.
  struct Proposal {
    double volume = 0, delta_volume = 0, new_volume = 0;  // nm^3
    double length_scale = 1;                              // box and molecule centres scale by this
    double u_accept = 0;                                  // uniform [0, 1) for the acceptance test
  };
  Proposal propose(const Boxd& box, std::uint64_t seed, std::int64_t step) const;
  bool decide(const Proposal& proposal, double current_energy, double trial_energy);

  // {volume move size (nm^3), attempts since the last adaptation, acceptances since then,
  //  total attempts, total acceptances}
  std::vector<double> state() const;
  void set_state(const std::vector<double>& state);  // throws InputError on a malformed vector

  // The bath temperature of later moves (temperature replica exchange); checked by the caller
  // (with_bath_temperature).
  void set_temperature(double temperature_k) { config_.temperature_k = temperature_k; }

  double volume_scale_nm3() const { return volume_scale_; }
  std::int64_t total_attempted() const { return total_attempted_; }
  std::int64_t total_accepted() const { return total_accepted_; }

 private:
  BarostatConfig config_;
  std::vector<std::vector<int>> molecules_;
  double volume_scale_ = 0.0;
  int attempted_ = 0, accepted_ = 0;
  std::int64_t total_attempted_ = 0, total_accepted_ = 0;
  std::vector<Vec3d> trial_;
};

// Context::barostat_state / set_barostat_state for a context that may have no barostat: an empty
// state for none; restoring a non-empty state without a barostat is an InputError.
std::vector<double> barostat_state_of(const std::optional<MonteCarloBarostat>& barostat);
void restore_barostat_state(std::optional<MonteCarloBarostat>& barostat, const std::vector<double>& state);

}  // namespace mdsim
