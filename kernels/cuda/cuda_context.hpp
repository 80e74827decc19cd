// The CUDA platform's Context (kernels/plan/context.hpp): the whole time step runs on the GPU, with the
// semantics of the CPU reference context (kernels/cpu/cpu_context) — the oracle it is tested against.
// Host-only header (no CUDA syntax).
//
// State on the device for the context's lifetime: positions (the CudaForceEvaluator's double
// positions, moved in place), velocities, inverse masses, the step's old and unconstrained positions,
// constraint data (the system-mass plan, and a unit-mass plan for the minimiser) and scratch.
// Integration is in double precision in both precision modes; "mixed" only changes how the forces
// are computed (CudaOptions::double_precision).
//
// One step (no host synchronisation, no host<->device copy): the centre-of-mass velocity (multi-
// block deterministic reduction, on a second stream while the forces are computed), a force
// evaluation (CudaForceEvaluator::compute, its own CUDA graph), then one CUDA graph of the
// integrator: COM removal fused into the kick, the integrator kernels
// (kernels/physics/integrator_steps.hpp, forces read as 64-bit fixed point), SETTLE (one thread per
// water, kernels/physics/settle.hpp) concurrently with CCMA (the CPU's algorithm and preconditioner:
// a Newton iteration on the multipliers with the same sparse inverse coupling matrix; thread blocks
// own whole coupled groups and iterate until their constraints converge; in double precision a
// second pass makes every group run exactly the CPU's global number of iterations — see
// constraint_kernels.cuh), the velocity correction after the position
// constraints. In mixed precision a LangevinMiddle step is instead three kernels side by side, each
// taking its atoms through the whole step: rigid waters, CCMA blocks, unconstrained atoms
// (langevin_step_kernels.cuh; CudaOptions::fuse_langevin_step). Random normals: Philox gaussian3
// keyed by (seed, kStreamLangevin, step, atom) as on the CPU; the step number lives on the device
// and is advanced by the graph.
//
// Host synchronisation outside step(): state() (downloads; Verlet's on-step kinetic energy as the
// CPU defines it), minimize() (kernels/cuda/cuda_minimizer: the L-BFGS driver on the host, every
// vector, energy, force and constraint projection on the GPU, the driver's decisions from one
// downloaded double per reduction), and the Monte Carlo barostat: one move every `interval` steps
// downloads two energies (the trial box through CudaForceEvaluator::set_box, molecule centres scaled
// on the device).
#pragma once

#include <memory>

#include "kernels/plan/context.hpp"
#include "model/system.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "kernels/cuda/cuda_minimizer.hpp"

namespace mdsim {

// Throws InputError for the settings the CPU context refuses (non-positive time step, negative
// friction, ...), RuntimeError when no CUDA device is usable.
std::unique_ptr<Context> make_cuda_context(const System& system, const DynamicsSettings& settings,
                                           const CudaOptions& options);

// What one steady-state step (no rebuild, no re-sort, no barostat move) launches: `graphs` graph
// launches holding `kernels` kernels, plus `separate_kernels` launched on their own. Valid after the
// context has stepped once (the graphs are captured then).
struct CudaStepLaunches {
  int graphs = 0, kernels = 0, separate_kernels = 0;
};
CudaStepLaunches cuda_step_launches(const Context& context);

// Tile-list builds of the context's force evaluator so far (synchronises).
int cuda_list_builds(Context& context);

// What the context's last minimize() did (evaluations, downloads): see cuda_minimizer.hpp.
CudaMinimizationStats cuda_minimization_stats(const Context& context);

}  // namespace mdsim
