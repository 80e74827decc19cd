// One interface over the platforms' force evaluation, for commands that need a single point
// (`mdsim energy`, `mdsim check`, `mdsim bench`) and for tests: CPU reference (double) or CUDA (mixed | double).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/platform.hpp"
#include "model/run_config.hpp"
#include "model/system.hpp"
#include "physics/pme_params.hpp"
#include "platform/energy_terms.hpp"
#include "platform/force_timings.hpp"

namespace mdsim {

// The parts of a device force evaluation, each timed on its own, and the device they ran on.
struct ForceBenchTimings {
  ForcePartTimings parts;               // µs per evaluation
  std::string device_name;
  std::size_t device_memory_bytes = 0;  // what the evaluator allocated
  int tiles = 0;                        // tiles in the neighbour list
};

class ForceEvaluator {
 public:
  virtual ~ForceEvaluator() = default;
  // Energies by term; forces (kJ/mol/nm) overwritten when non-null.
  virtual EnergyTerms compute(const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces) = 0;
  virtual std::string description() const = 0;  // "cpu (double)", "cuda:0 NVIDIA H100 (mixed)"
  // Each part of `repetitions` evaluations at these positions timed (the CUDA platform); none elsewhere.
  virtual std::optional<ForceBenchTimings> time_parts(const std::vector<Vec3d>& positions_nm, int repetitions) {
    (void)positions_nm;
    (void)repetitions;
    return std::nullopt;
  }
};

// `replicas` > 1: a replica batch of that many copies of `system` (the CUDA platform only: CudaOptions::replicas),
// whose positions and forces are every copy's rows one after the other and whose compute() returns the first
// copy's energies.
std::unique_ptr<ForceEvaluator> make_evaluator(const System& system, const PlatformChoice& platform,
                                               const PlatformConfig& settings, int replicas = 1);

// Each energy term's forces (kJ/mol/nm) at `positions_nm`, in `box` when the system is periodic (null: the System's),
// by the CPU reference platform in double precision, as OpenMM's getState(getForces=True, groups={g}) with one term
// per force group: bond, angle, urey_bradley, torsion, rb_torsion, improper, cmap (those the system has),
// nonbonded_direct (with exceptions and the dispersion correction's zero force) and nonbonded_reciprocal (PME).
// Their sum is the System's force; position restraints and external forces are not among them.
std::vector<std::pair<std::string, std::vector<Vec3d>>> term_forces(const System& system,
                                                                    const std::vector<Vec3d>& positions_nm,
                                                                    const Boxd* box);

// α and the grid of a PME system as every platform chooses them; none without PME.
std::optional<PmeParameters> pme_parameters(const System& system);

}  // namespace mdsim
