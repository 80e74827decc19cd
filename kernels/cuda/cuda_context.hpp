// The CUDA platform's Context (platform/context.hpp), with the semantics of the CPU reference
// context (kernels/cpu/cpu_context), the oracle it is tested against. Host-only header. How it works:
// docs/ARCHITECTURE.md, "Dynamics and the run" and "Restart points"; its parts are cuda_integrator,
// cuda_constraints, cuda_barostat, cuda_frames and cuda_minimizer (kernels/cuda).
//
// What a context guarantees:
//  - step(n) makes no host synchronisation and no host<->device copy, except for a Monte Carlo
//    barostat move (every `interval` steps: two energies downloaded). state(), minimize(),
//    apply_constraints() and set_velocities_to_temperature() synchronise; capture_frame() does not
//    (its returned function waits for the copy).
//  - Integration is in double precision in both precision modes (CudaOptions::double_precision
//    chooses how forces are computed); random numbers are the CPU's (Philox keyed by seed, step and
//    atom), so the platforms agree to ~1e-12 nm in double precision.
//  - A run resumed from a checkpoint taken at a restart point continues bit for bit on the same
//    platform.
#pragma once

#include <memory>
#include <vector>

#include "kernels/cuda/cuda_forces.hpp"
#include "kernels/cuda/cuda_minimizer.hpp"
#include "platform/context.hpp"
#include "model/system.hpp"

namespace mdsim {

// A context on device options.device. The options are the force evaluator's (cuda_forces.hpp), except
// reorder_interval, which the context replaces by its restart points; fuse_langevin_step applies in
// mixed precision to LangevinMiddle with constraints. Throws InputError for the settings the CPU
// context refuses (non-positive time step, negative friction, ...), RuntimeError when no CUDA device
// is usable.
std::unique_ptr<Context> make_cuda_context(const System& system, const DynamicsSettings& settings,
                                           const CudaOptions& options);

// K replicas of `system` stepped together in one batch (CudaOptions::replicas; K = settings.size()): one Context per
// replica, each with its own settings' temperature and seed (the integrator, friction, time step, constraint
// tolerance and centre-of-mass removal the same for all; no barostat; forces from outside only on the whole batch:
// add_replica_batch_force). The replicas
// advance together: a replica's step(n) brings the whole batch to its step + n, or does nothing when another's
// call already did, so a caller steps every replica to the same step before reading any (state() refuses
// otherwise). In mixed precision a replica follows the trajectory of the same replica run alone (same seed, same
// start) bit for bit: its forces are computed in the same blocks and tiles, its random numbers keyed by its own
// seed and atom indices, its constraints in the same CCMA blocks. Minimisation, constraints applied at the start
// and Maxwell-Boltzmann velocities run in a context of one replica alone.
std::vector<std::unique_ptr<Context>> make_cuda_replica_batch(const System& system,
                                                              const std::vector<DynamicsSettings>& settings,
                                                              const CudaOptions& options);

// A force on every replica of a batch at once (ExternalForce::add_batch), through any of the batch's views (a
// replica's own add_external_force is refused); remove_replica_batch_force takes it out. RuntimeError when `view`
// is not a replica of a batch.
void add_replica_batch_force(Context& view, std::shared_ptr<ExternalForce> force);
void remove_replica_batch_force(Context& view, const ExternalForce* force);

// What steady-state steps (no rebuild, no re-sort, no barostat move) launch: `graphs` graph launches
// for every `steps_per_graph` steps, holding `kernels` kernels a step, plus `separate_kernels` a step
// launched on their own. Valid after the context has stepped (the graphs are captured then).
struct CudaStepLaunches {
  int graphs = 0, kernels = 0, separate_kernels = 0, steps_per_graph = 1;
};
CudaStepLaunches cuda_step_launches(const Context& context);

// Tile-list builds of the context's force evaluator so far (synchronises).
int cuda_list_builds(Context& context);

// What the context's last minimize() did (evaluations, downloads): see cuda_minimizer.hpp.
CudaMinimizationStats cuda_minimization_stats(const Context& context);

}  // namespace mdsim
