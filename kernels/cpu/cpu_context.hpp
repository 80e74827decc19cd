// The CPU reference platform's Context (platform/context.hpp): double precision throughout, forces
// from CpuForceEvaluator, constraints from CpuConstraints (SETTLE + CCMA), the per-atom integrator
// pieces of physics/integrator_steps.hpp, Philox random numbers, L-BFGS minimiser and Monte
// Carlo barostat of kernels/cpu. Each step costs one force evaluation (forces at the current
// positions are cached and reused by state() and the barostat).
#pragma once

#include <memory>

#include "platform/context.hpp"
#include "model/system.hpp"

namespace mdsim {

// Throws InputError for settings the user must fix (non-positive time step, negative friction,
// non-positive temperature or constraint tolerance, barostat without a periodic box, ...).
std::unique_ptr<Context> make_cpu_context(const System& system, const DynamicsSettings& settings);

}  // namespace mdsim
