// One interface over the platforms' force evaluation, for commands that need a single point
// (`mdsim energy`, `mdsim check`) and for tests: CPU reference (double) or CUDA (mixed | double).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/platform.hpp"
#include "kernels/cpu/cpu_forces.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "model/run_config.hpp"
#include "model/system.hpp"

namespace mdsim {

class ForceEvaluator {
 public:
  virtual ~ForceEvaluator() = default;
  // Energies by term; forces (kJ/mol/nm) overwritten when non-null.
  virtual EnergyTerms compute(const std::vector<Vec3d>& positions_nm, std::vector<Vec3d>* forces) = 0;
  virtual std::string description() const = 0;  // "cpu (double)", "cuda:0 NVIDIA H100 (mixed)"
};

// The CUDA platform's options from the config's `platform` section, for the given device.
CudaOptions cuda_options(const PlatformConfig& settings, int device);

std::unique_ptr<ForceEvaluator> make_evaluator(const System& system, const PlatformChoice& platform,
                                               const PlatformConfig& settings);

}  // namespace mdsim
