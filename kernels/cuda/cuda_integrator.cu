// CUDA platform: the context's integrators (see cuda_integrator.hpp). The CPU reference
// (kernels/cpu/cpu_context.cpp) is the specification; the per-atom arithmetic is
// physics/integrator_steps.hpp on both platforms.
#include "kernels/cuda/cuda_integrator.hpp"

#include <array>
#include <vector>

#include "kernels/cuda/device_atoms.cuh"
#include "kernels/cuda/integrator_kernels.cuh"
#include "kernels/cuda/langevin_step_kernels.cuh"
#include "kernels/cuda/step_timeline.hpp"
#include "physics/integrator_steps.hpp"
#include "platform/virtual_sites.hpp"

namespace mdsim {

namespace {

using cuda::atom_blocks;
using cuda::blocks_for;

// Atoms in no constraint (ascending): neither in a SETTLE water nor at either end of a CCMA
// constraint, nor a water's site that the SETTLE kernel steps (settle_sites). At least one entry (atom 0
// when there is none), so that the buffer is allocated.
std::vector<int> unconstrained_atoms(const ConstraintPlan& plan, const std::vector<cuda::SettleSite>& sites, int n,
                                     int& count) {
  std::vector<char> constrained_atom(static_cast<std::size_t>(n), 0);
  for (const cuda::SettleSite& s : sites)
    if (s.particle >= 0) constrained_atom[static_cast<std::size_t>(s.particle)] = 1;
  for (const ConstraintPlan::Settle& w : plan.settle_waters())
    constrained_atom[static_cast<std::size_t>(w.o)] = constrained_atom[static_cast<std::size_t>(w.h1)] =
        constrained_atom[static_cast<std::size_t>(w.h2)] = 1;
  for (const ConstraintPlan::Ccma& c : plan.ccma_constraints())
    constrained_atom[static_cast<std::size_t>(c.a)] = constrained_atom[static_cast<std::size_t>(c.b)] = 1;
  std::vector<int> free_atoms;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    if (!constrained_atom[i]) free_atoms.push_back(static_cast<int>(i));
  count = static_cast<int>(free_atoms.size());
  if (free_atoms.empty()) free_atoms.push_back(0);
  return free_atoms;
}

// The fused step's rigid-water sites, one per SETTLE water of `plan` (its order): the water's average site
// (TwoParticleAverage, ThreeParticleAverage) whose parents are all members of it, when it has exactly one
// such site (a 4-site water's M); particle -1 otherwise. Empty when no water has one.
std::vector<cuda::SettleSite> settle_sites(const System& system, const ConstraintPlan& plan) {
  std::vector<std::array<int, 3>> waters;
  for (const ConstraintPlan::Settle& w : plan.settle_waters()) waters.push_back({w.o, w.h1, w.h2});
  const std::vector<int> site = water_sites(system, waters, [](const VirtualSite& v) {
    return v.type == VirtualSiteType::TwoParticleAverage || v.type == VirtualSiteType::ThreeParticleAverage;
  });  // two such sites in one water: both left to the evaluation's kernels
  std::vector<cuda::SettleSite> sites(waters.size(), cuda::SettleSite{-1, 3, {0, 0, 0}, {0, 0, 0}});
  bool any = false;
  for (std::size_t w = 0; w < waters.size(); ++w) {
    if (site[w] < 0) continue;
    const VirtualSite& v = system.virtual_sites[static_cast<std::size_t>(site[w])];
    cuda::SettleSite& s = sites[w];
    s = {v.particle, v.num_parents, {0, 0, 0}, {v.weights[0], v.weights[1], v.weights[2]}};
    for (int k = 0; k < v.num_parents; ++k)
      for (int m = 0; m < 3; ++m)
        if (waters[w][static_cast<std::size_t>(m)] == v.parents[static_cast<std::size_t>(k)]) s.member_of_parent[k] = m;
    any = true;
  }
  return any ? sites : std::vector<cuda::SettleSite>{};
}

}  // namespace

DynamicsArrays::DynamicsArrays(const System& system, cudaStream_t stream, int replica_count)
    : n(system.num_particles()), replicas(replica_count) {
  const std::size_t count = static_cast<std::size_t>(n);
  host_inverse_mass.resize(count);
  double total_mass = 0.0;  // of the first replica (all of a single system), summed as alone
  for (std::size_t i = 0; i < count; ++i) {
    host_inverse_mass[i] = system.mass_amu[i] > 0.0 ? 1.0 / system.mass_amu[i] : 0.0;
    if (i < count / static_cast<std::size_t>(replicas)) total_mass += system.mass_amu[i];
  }
  has_mass = total_mass > 0.0;
  inverse_total_mass = has_mass ? 1.0 / total_mass : 0.0;
  mass.upload(system.mass_amu, stream);
  inverse_mass.upload(host_inverse_mass, stream);
  v.upload(std::vector<Vec3d>(count, Vec3d(0, 0, 0)), stream);
  x_old.resize(count);
  x_unconstrained.resize(count);
  v_scratch.resize(count);
  const std::size_t per_replica = static_cast<std::size_t>(replicas);
  com_velocity.resize(per_replica);
  com_partial.resize(cuda::kComVelocityMaxBlocks * per_replica);
  com_done_count.resize(per_replica);
  com_done_count.zero(stream);
  step_done_count.resize(1);
  step_done_count.zero(stream);
  scalar.resize(per_replica);  // the kinetic energy of each replica
  step.upload(std::vector<long long>{0}, stream);
}

// ---------------------------------------------------------------------------------------------
// StepGraph

StepGraph::~StepGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

void StepGraph::reset() {
  if (exec_) MDSIM_CUDA_CHECK(cudaGraphExecDestroy(exec_));
  exec_ = nullptr;
}

// The seed is a kernel argument baked into the step graphs: they are captured again when it changes.
void CudaIntegrator::set_seed(std::uint64_t seed) {
  if (seed == seed_) return;
  seed_ = seed;
  graph_.reset();
  merged_graph_.reset();
  multi_step_graph_.reset();
}

// The Langevin coefficients and the time step are kernel arguments baked into the step graphs: they are captured
// again.
void CudaIntegrator::set_config(const IntegratorConfig& config) {
  config_ = config;
  if (replicas_ > 1) upload_replica_coefficients();  // the friction or time step may have changed
  graph_.reset();
  merged_graph_.reset();
  multi_step_graph_.reset();
}

template <typename Enqueue>
void StepGraph::launch(cudaStream_t stream, const void* positions, const void* forces, std::uint64_t generation,
                       Enqueue&& enqueue) {
  if (exec_ && (positions != positions_ || forces != forces_ || generation != generation_)) {
    MDSIM_CUDA_CHECK(cudaGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  if (!exec_) {
    cudaGraph_t graph = nullptr;
    MDSIM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    MDSIM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    kernels_ = cuda::count_kernel_nodes(graph);
    const cudaError_t err = cuda::instantiate_graph(&exec_, graph);
    cudaGraphDestroy(graph);
    MDSIM_CUDA_CHECK(err);
    positions_ = positions;
    forces_ = forces;
    generation_ = generation;
  }
  MDSIM_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

// ---------------------------------------------------------------------------------------------
// CudaIntegrator

CudaIntegrator::CudaIntegrator(const System& system, const DynamicsSettings& settings, const CudaOptions& options,
                               std::uint64_t seed, const ConstraintPlan& plan, CudaForceEvaluator& evaluator,
                               const CudaStreams& streams, DynamicsArrays& atoms, CudaConstraints& constraints)
    : config_(settings.integrator),
      constrained_(!system.constraints.empty()),
      remove_com_(settings.remove_cm_motion && atoms.has_mass),
      remove_com_interval_(settings.remove_cm_motion_interval),
      // The fused step needs CCMA's single pass and a thread for every atom of a CCMA block; it takes
      // the atoms in no constraint on their own.
      fused_(config_.type == IntegratorType::LangevinMiddle && constrained_ && options.fuse_langevin_step &&
             dynamics_ccma_passes(options) == 1 && constraints.thread_per_block_atom()),
      seed_(seed),
      ccma_passes_(dynamics_ccma_passes(options)),
      n_(atoms.n),
      evaluator_(evaluator),
      streams_(streams),
      atoms_(atoms),
      constraints_(constraints),
      replicas_(atoms.replicas) {
  if (fused_) noise_.resize(static_cast<std::size_t>(n_));
  const std::vector<cuda::SettleSite> sites = fused_ ? settle_sites(system, plan) : std::vector<cuda::SettleSite>{};
  if (!sites.empty()) {
    settle_sites_.upload(sites, streams_.main);
    std::vector<int> particles;
    for (const cuda::SettleSite& s : sites)
      if (s.particle >= 0) particles.push_back(s.particle);
    evaluator_.leave_sites_to_steps(particles);
  }
  free_atoms_.upload(unconstrained_atoms(plan, sites, n_, num_free_atoms_), streams_.main);
  if (replicas_ > 1) {
    replica_temperature_k_.assign(static_cast<std::size_t>(replicas_), config_.temperature_k);
    replica_seed_.assign(static_cast<std::size_t>(replicas_), seed_);
    replica_seeds_.upload(replica_seed_, streams_.main);
    upload_replica_coefficients();
  }
}

// A batch's kernels read each replica's bath coefficients and seed from these arrays; a single system's take the
// configuration's as arguments.
cuda::ReplicaDynamics CudaIntegrator::replica_dynamics() const {
  if (replicas_ == 1) return {};
  return {n_ / replicas_, replica_coefficients_.data(), replica_seeds_.data()};
}

void CudaIntegrator::upload_replica_coefficients() {
  std::vector<LangevinCoefficients> c;
  for (const double t : replica_temperature_k_) c.push_back(replica_bath_coefficients(t));
  replica_coefficients_.upload(c, streams_.main);
}

LangevinCoefficients CudaIntegrator::replica_bath_coefficients(double temperature_k) const {
  return langevin_coefficients(config_.friction_per_ps, config_.timestep_ps, temperature_k);
}

void CudaIntegrator::set_replica_temperature(int replica, double temperature_k) {
  double& recorded = replica_temperature_k_.at(static_cast<std::size_t>(replica));
  if (recorded == temperature_k) return;  // the device holds its coefficients already
  recorded = temperature_k;
  upload_replica_coefficients();
}

void CudaIntegrator::record_replica_temperature(int replica, double temperature_k) {
  replica_temperature_k_.at(static_cast<std::size_t>(replica)) = temperature_k;
}

void CudaIntegrator::scale_velocities(int first, int count, double factor) {
  cuda::scale_velocities_kernel<<<atom_blocks(count), cuda::kAtomThreads, 0, streams_.main>>>(
      count, atoms_.v.data() + first, factor);
  MDSIM_CUDA_CHECK_LAUNCH();
}

void CudaIntegrator::set_replica_seed(int replica, std::uint64_t seed) {
  replica_seed_.at(static_cast<std::size_t>(replica)) = seed;
  replica_seeds_.upload(replica_seed_, streams_.main);
}

void CudaIntegrator::allow_ccma_shared_bytes(std::size_t bytes) {
  MDSIM_CUDA_CHECK(cudaFuncSetAttribute(cuda::ccma_langevin_step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
}

void CudaIntegrator::constrain_positions(const Vec3d* reference, double tolerance) {
  constraints_.constrain_positions(reference, positions(), tolerance, ccma_passes_);
}

void CudaIntegrator::constrain_velocities(Vec3d* v, double tolerance) {
  constraints_.constrain_velocities(positions(), v, tolerance, ccma_passes_);
}

void CudaIntegrator::launch_side_kernels() {
  last_steps_merged_ = 0;
  enqueue_side_kernels(true);
}

// `noise`: the fused step's draws here too (the two-part step); in a step graph they follow the positions'
// preparation instead (enqueue_noise_after_preparation).
void CudaIntegrator::enqueue_side_kernels(bool noise) {
  if (!has_side_kernels()) return;
  const CudaStreams& s = streams_;
  MDSIM_CUDA_CHECK(cudaEventRecord(s.fork, s.main));
  MDSIM_CUDA_CHECK(cudaStreamWaitEvent(s.aux, s.fork, 0));
  if (remove_com_)
    cuda::com_velocity_kernel<<<dim3(cuda::com_velocity_blocks(n_ / replicas_), replicas_), cuda::kComVelocityThreads,
                                0, s.aux>>>(n_ / replicas_, atoms_.mass.data(), atoms_.v.data(),
                                            atoms_.inverse_total_mass, atoms_.com_partial.data(),
                                            atoms_.com_done_count.data(), atoms_.com_velocity.data(),
                                            atoms_.step.data(), remove_com_interval_);
  cuda::timeline_mark(s.aux, "aux: COM velocity");
  if (fused_ && noise) enqueue_noise();
  MDSIM_CUDA_CHECK_LAUNCH();
  MDSIM_CUDA_CHECK(cudaEventRecord(s.com_done, s.aux));
}

void CudaIntegrator::enqueue_noise() {
  cuda::langevin_noise_kernel<<<atom_blocks(n_), cuda::kAtomThreads, 0, streams_.aux>>>(
      n_, seed_, atoms_.step.data(), atoms_.step_done_count.data(), noise_.data(), replica_dynamics());
  MDSIM_CUDA_CHECK_LAUNCH();
  cuda::timeline_mark(streams_.aux, "aux: noise");
}

// In a step graph, the draws beside the pair kernel rather than beside the positions' preparation, which is on
// the evaluation's critical path (the noise kernel is Philox and a double Box-Muller for every atom).
void CudaIntegrator::enqueue_noise_after_preparation() {
  if (!fused_) return;
  MDSIM_CUDA_CHECK(
      cudaStreamWaitEvent(streams_.aux, static_cast<cudaEvent_t>(evaluator_.positions_prepared_event()), 0));
  enqueue_noise();
  MDSIM_CUDA_CHECK(cudaEventRecord(streams_.com_done, streams_.aux));
}

// The step's kernels as one CUDA graph (every pointer and parameter in it is fixed for the context's
// lifetime; the step number is read from device memory).
void CudaIntegrator::launch_step() {
  if (has_side_kernels()) MDSIM_CUDA_CHECK(cudaStreamWaitEvent(streams_.main, streams_.com_done, 0));
  graph_.launch(streams_.main, evaluator_.device_positions(), evaluator_.device_forces_fixed(), 0,
                [this] { enqueue_step(false); });
  if (fused_) evaluator_.forces_zeroed_by_consumer();
}

void CudaIntegrator::launch_steps_with_evaluation(int steps) {
  if (steps != 1 && steps != steps_per_graph())
    throw RuntimeError("launch_steps_with_evaluation: " + std::to_string(steps) + " steps in one graph");
  last_steps_merged_ = steps;
  evaluator_.begin_steady_evaluations(steps);
  StepGraph& graph = steps == 1 ? merged_graph_ : multi_step_graph_;
  graph.launch(streams_.main, evaluator_.device_positions(), evaluator_.device_forces_fixed(),
               evaluator_.graph_generation(), [this, steps] {
                 for (int k = 0; k < steps; ++k) {
                   enqueue_side_kernels(false);
                   evaluator_.enqueue_steady_evaluation();
                   enqueue_noise_after_preparation();
                   if (has_side_kernels())
                     MDSIM_CUDA_CHECK(cudaStreamWaitEvent(streams_.main, streams_.com_done, 0));
                   enqueue_step(true);
                 }
               });
  if (fused_) evaluator_.forces_zeroed_by_consumer();
}

// The integrator's kernels for one step (forces of the current positions already in the evaluator's
// buffer; the centre-of-mass velocity from launch_side_kernels), as CpuContext::step after
// ensure_forces.
void CudaIntegrator::enqueue_step(bool after_steady_evaluation) {
  if (fused_)
    enqueue_fused_langevin_step(after_steady_evaluation);
  else if (config_.type == IntegratorType::LangevinMiddle)
    enqueue_langevin_step();
  else
    enqueue_verlet_step();
  MDSIM_CUDA_CHECK_LAUNCH();
}

// Waters, free atoms and CCMA blocks on three streams side by side (langevin_step_kernels.cuh). They
// do not read the step counter: langevin_noise_kernel, the one reader, advances it. The waters' sites
// (settle_sites_) are placed by the SETTLE kernel, and after a steady evaluation their forces spread there too.
void CudaIntegrator::enqueue_fused_langevin_step(bool spread_water_sites) {
  const double dt = config_.timestep_ps;
  const cuda::LangevinStepArgs args{evaluator_.device_forces_fixed_consumed(),
                                    evaluator_.force_stride(),
                                    atoms_.inverse_mass.data(),
                                    remove_com_ ? atoms_.com_velocity.data() : nullptr,
                                    dt,
                                    0.5 * dt,
                                    1.0 / dt,
                                    langevin_coefficients(config_.friction_per_ps, dt, config_.temperature_k),
                                    positions(),
                                    atoms_.v.data(),
                                    noise_.data(),
                                    replica_dynamics()};
  const CudaStreams& s = streams_;
  CudaConstraints& c = constraints_;
  MDSIM_CUDA_CHECK(cudaEventRecord(s.fork, s.main));
  MDSIM_CUDA_CHECK(cudaStreamWaitEvent(s.aux, s.fork, 0));
  MDSIM_CUDA_CHECK(cudaStreamWaitEvent(s.free, s.fork, 0));
  if (c.num_settle() > 0) {
    const bool sites = settle_sites_.size() > 0;
    const auto kernel = sites ? cuda::settle_langevin_step_kernel<true> : cuda::settle_langevin_step_kernel<false>;
    kernel<<<blocks_for(c.num_settle(), cuda::kSettleWaters), cuda::kSettleThreads, 0, s.aux>>>(
        c.num_settle(), c.settle_waters(), args, sites ? settle_sites_.data() : nullptr, sites && spread_water_sites);
  }
  cuda::timeline_mark(s.aux, "aux: SETTLE step");
  MDSIM_CUDA_CHECK(cudaEventRecord(s.join, s.aux));
  if (num_free_atoms_ > 0)
    cuda::langevin_free_atoms_step_kernel<<<atom_blocks(num_free_atoms_), cuda::kAtomThreads, 0, s.free>>>(
        num_free_atoms_, free_atoms_.data(), args);
  cuda::timeline_mark(s.free, "free: free-atom step");
  MDSIM_CUDA_CHECK(cudaEventRecord(s.free_join, s.free));
  if (c.num_ccma() > 0) {
    const CudaConstraints::CcmaLaunch l = c.ccma_launch();
    const double tolerance = config_.constraint_tolerance;
    if (c.warp_blocks()) {
      // One warp per CCMA block, its working set in registers (small groups: HBonds).
      const auto kernel = c.warp_row() <= 4 && c.warp_entries() <= 4 ? cuda::ccma_warp_langevin_step_kernel<4, 4>
                                                                     : cuda::ccma_warp_langevin_step_kernel<8, 8>;
      kernel<<<l.blocks, 32, 0, s.main>>>(l.view, args, tolerance, ConstraintPlan::kMaxIterations);
    } else {
      cuda::ccma_langevin_step_kernel<<<l.blocks, l.threads, l.shared_bytes, s.main>>>(
          l.view, args, tolerance, ConstraintPlan::kMaxIterations);
    }
  }
  cuda::timeline_mark(s.main, "main: CCMA step");
  MDSIM_CUDA_CHECK(cudaStreamWaitEvent(s.main, s.join, 0));
  MDSIM_CUDA_CHECK(cudaStreamWaitEvent(s.main, s.free_join, 0));
  cuda::timeline_mark(s.main, "main: step end");
}

// Kick, velocity constraints, drift / O step / drift, position constraints, velocity correction.
void CudaIntegrator::enqueue_langevin_step() {
  const double dt = config_.timestep_ps, tolerance = config_.constraint_tolerance;
  const LangevinCoefficients coef = langevin_coefficients(config_.friction_per_ps, dt, config_.temperature_k);
  const Vec3d* com = remove_com_ ? atoms_.com_velocity.data() : nullptr;
  double4_16a* pos = positions();
  Vec3d* v = atoms_.v.data();
  const double* inverse_mass = atoms_.inverse_mass.data();
  const int blocks = atom_blocks(n_);
  const cudaStream_t stream = streams_.main;
  cuda::langevin_kick_kernel<<<blocks, cuda::kAtomThreads, 0, stream>>>(
      n_, v, inverse_mass, evaluator_.device_forces_fixed(), evaluator_.force_stride(), dt, com, replica_dynamics());
  if (constrained_) constrain_velocities(v, tolerance);
  cuda::langevin_drift_kernel<<<blocks, cuda::kAtomThreads, 0, stream>>>(
      n_, pos, v, atoms_.x_old.data(), atoms_.x_unconstrained.data(), inverse_mass, 0.5 * dt, coef, seed_,
      atoms_.step.data(), replica_dynamics());
  if (constrained_) {
    constrain_positions(atoms_.x_old.data(), tolerance);
    cuda::velocity_correction_kernel<<<blocks, cuda::kAtomThreads, 0, stream>>>(
        n_, pos, v, atoms_.x_unconstrained.data(), inverse_mass, 1.0 / dt, atoms_.step.data());
  } else {
    cuda::advance_step_kernel<<<1, 1, 0, stream>>>(atoms_.step.data());
  }
}

// Leapfrog: kick and drift, position constraints, velocities from the displacement.
void CudaIntegrator::enqueue_verlet_step() {
  const double dt = config_.timestep_ps;
  const Vec3d* com = remove_com_ ? atoms_.com_velocity.data() : nullptr;
  double4_16a* pos = positions();
  const int blocks = atom_blocks(n_);
  const cudaStream_t stream = streams_.main;
  cuda::verlet_kick_drift_kernel<<<blocks, cuda::kAtomThreads, 0, stream>>>(
      n_, pos, atoms_.v.data(), atoms_.x_old.data(), atoms_.inverse_mass.data(), evaluator_.device_forces_fixed(),
      evaluator_.force_stride(), dt, com, replica_dynamics());
  if (constrained_) constrain_positions(atoms_.x_old.data(), config_.constraint_tolerance);
  cuda::leapfrog_velocity_kernel<<<blocks, cuda::kAtomThreads, 0, stream>>>(
      n_, pos, atoms_.v.data(), atoms_.x_old.data(), atoms_.inverse_mass.data(), 1.0 / dt, atoms_.step.data());
}

std::vector<double> CudaIntegrator::kinetic_energies() {
  const cudaStream_t stream = streams_.main;
  const Vec3d* v = atoms_.v.data();
  if (config_.type == IntegratorType::Verlet) {
    cuda::shifted_velocity_kernel<<<atom_blocks(n_), cuda::kAtomThreads, 0, stream>>>(
        n_, atoms_.v.data(), atoms_.inverse_mass.data(), evaluator_.device_forces_fixed(), evaluator_.force_stride(),
        0.5 * config_.timestep_ps, atoms_.v_scratch.data());
    MDSIM_CUDA_CHECK_LAUNCH();
    if (constrained_) constrain_velocities(atoms_.v_scratch.data(), config_.constraint_tolerance);
    v = atoms_.v_scratch.data();
  }
  cuda::twice_kinetic_energy_kernel<<<replicas_, cuda::kReduceThreads, 0, stream>>>(n_ / replicas_, atoms_.mass.data(),
                                                                                   v, atoms_.scalar.data());
  MDSIM_CUDA_CHECK_LAUNCH();
  std::vector<double> out = atoms_.scalar.download(stream);
  for (double& e : out) e *= 0.5;
  return out;
}

}  // namespace mdsim
