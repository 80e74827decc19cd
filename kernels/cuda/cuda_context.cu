// CUDA platform: the dynamics Context (see cuda_context.hpp), composed of the force evaluator
// (cuda_forces), the integrators (cuda_integrator), the constraints (cuda_constraints), the barostat
// (cuda_barostat), frame capture (cuda_frames) and the minimiser's device backend (cuda_minimizer).
// The CPU reference context (kernels/cpu/cpu_context.cpp) is the specification; the planning both
// share (constraint plan, barostat, minimiser driver, velocities) comes from platform.
#include "kernels/cuda/cuda_context.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "kernels/cuda/cuda_barostat.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_constraints.hpp"
#include "kernels/cuda/cuda_frames.hpp"
#include "kernels/cuda/cuda_integrator.hpp"
#include "kernels/cuda/cuda_minimizer.hpp"
#include "kernels/cuda/cuda_streams.hpp"
#include "kernels/cuda/device_atoms.cuh"
#include "kernels/cuda/replica_exchange_kernels.cuh"
#include "kernels/cuda/step_timeline.hpp"
#include "model/system_copies.hpp"
#include "platform/constraint_plan.hpp"
#include "platform/minimizer.hpp"
#include "platform/velocities.hpp"

namespace mdsim {

namespace {

CudaOptions context_evaluator_options(CudaOptions options) {
  options.reorder_interval = 0;  // the context re-sorts at restart points (Context::mark_restart_point)
  return options;
}

// A replica batch (options.replicas > 1) is one context over the copies of `system` (model/system_copies), each
// replica with its own bath temperature and seed (CudaIntegrator), seen by the rest of mdsim through one
// CudaReplicaView per replica (below). Its own Context interface then acts on every replica's rows.
class CudaContext final : public Context {
 public:
  CudaContext(const System& system, const DynamicsSettings& settings, const CudaOptions& options)
      : system_(options.replicas > 1 ? repeat_system(system, options.replicas) : system),
        settings_((check_dynamics_settings(system, settings), check_batch_settings(settings, options), settings)),
        evaluator_(system, context_evaluator_options(options)),
        constraint_plan_(system_, system_.mass_amu),
        seed_(choose_seed(settings.integrator.seed)),
        dof_(degrees_of_freedom(system, settings.remove_cm_motion)),
        n_(system_.num_particles()),
        replicas_(options.replicas),
        ccma_passes_(dynamics_ccma_passes(options)),
        stream_(static_cast<cudaStream_t>(evaluator_.device_stream())),
        device_index_(options.device),
        streams_(stream_),
        atoms_(system_, stream_, options.replicas),
        max_shared_bytes_(max_shared_bytes_per_block(options.device)),
        constraints_(constraint_plan_, streams_, max_shared_bytes_, replicas_ > 1 ? system.num_particles() : 0),
        integrator_(system_, settings_, options, seed_, constraint_plan_, evaluator_, streams_, atoms_, constraints_),
        minimizer_constraints_(system_.constraints.empty() || replicas_ > 1  // a batch minimises replica by replica
                                   ? nullptr
                                   : std::make_unique<CudaMinimizerConstraintSolver>(
                                         system_, constraints_, streams_, max_shared_bytes_, atoms_.x_old.data())),
        barostat_(system_, settings_.barostat, stream_) {
    allow_ccma_shared_bytes(constraints_.shared_bytes());
    if (minimizer_constraints_) allow_ccma_shared_bytes(minimizer_constraints_->unit_masses().shared_bytes());
    if (system_.box) box_ = *system_.box;
  }

  // Every stream idle before the members' device buffers are freed.
  ~CudaContext() override {
    cudaStreamSynchronize(stream_);
    cudaStreamSynchronize(streams_.aux);
    cudaStreamSynchronize(streams_.free);
    frames_.synchronize();
  }

  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  void set_positions(const std::vector<Vec3d>& positions) override {
    check_size(positions, "positions");
    check_finite_input(positions, "positions");
    evaluator_.set_positions(positions);
    positions_set_ = true;
    invalidate_forces();
  }

  void set_velocities(const std::vector<Vec3d>& velocities) override {
    check_size(velocities, "velocities");
    check_finite_input(velocities, "velocities");
    atoms_.v.upload(velocities, stream_);
    replica_kinetic_.clear();
  }

  // On the device, no copy (an exchange's rescaling).
  void scale_velocities(double factor) override {
    integrator_.scale_velocities(0, n_, factor);
    replica_kinetic_.clear();
  }

  // As the CPU: Maxwell-Boltzmann draws and the COM removal on the host (the same arithmetic), the
  // velocity constraints on the device.
  void set_velocities_to_temperature(double temperature_k, std::uint64_t seed) override {
    check_initial_temperature(temperature_k);
    std::vector<Vec3d> v = thermal_velocities(atoms_.host_inverse_mass, temperature_k, seed != 0 ? seed : seed_);
    if (settings_.remove_cm_motion) remove_com_velocity(v, system_.mass_amu, atoms_.host_inverse_mass);
    require_positions("set_velocities_to_temperature");
    atoms_.v.upload(v, stream_);
    replica_kinetic_.clear();
    constrain_velocities(atoms_.v.data(), settings_.integrator.constraint_tolerance);
    MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void apply_constraints(double tolerance) override {
    require_positions("apply_constraints");
    if (!(tolerance > 0.0)) throw InputError("apply_constraints: tolerance must be positive, got " + quoted_number(tolerance));
    if (system_.constraints.empty()) return;
    copy_positions(n_, positions(), atoms_.x_old.data(), stream_);
    constrain_positions(atoms_.x_old.data(), tolerance);
    constrain_velocities(atoms_.v.data(), tolerance);
    evaluator_.place_virtual_sites();
    MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    invalidate_forces();
  }

  void set_box(const Boxd& box) override {
    if (!system_.box) throw InputError("set_box: the system is not periodic");
    evaluator_.set_box(box);
    box_ = box;
    invalidate_forces();
  }

  void set_step(std::int64_t step, double time_ps) override {
    if (step < 0) throw InputError("set_step: step must not be negative, got " + std::to_string(step));
    step_ = step;
    time_ps_ = time_ps;
    atoms_.step.upload(std::vector<long long>{static_cast<long long>(step)}, stream_);
  }

  // Per step: the barostat move when due (host synchronisation), then, when the evaluation is steady
  // (no re-sort or forced rebuild due, no forces from outside), one graph of the integrator's side
  // kernels, the evaluation and the step; otherwise the side kernels, the evaluation (its own graph or
  // launches) and the integrator's step graph. No host synchronisation and no host<->device copy
  // otherwise.
  void step(int steps) override {
    require_positions("step");
    for (int s = 0; s < steps;) {
      if (barostat_.due(step_)) barostat_move();
      cuda::timeline_mark(stream_, "step");
      int merged = 0;  // steps in one graph with their evaluations
      if (!forces_valid_) {
        const int k = integrator_.steps_per_graph();
        if (k > 1 && s + k <= steps && steps_merge(k) && evaluator_.next_evaluations_are_steady(k))
          merged = k;
        else if (evaluator_.next_evaluations_are_steady(1))
          merged = 1;
      }
      if (merged > 0) {
        integrator_.launch_steps_with_evaluation(merged);
      } else {
        integrator_.launch_side_kernels();
        if (!forces_valid_) evaluator_.compute(false);
        integrator_.launch_step();
      }
      for (int k = 0; k < std::max(merged, 1); ++k) {
        ++step_;
        time_ps_ += settings_.integrator.timestep_ps;
        if (step_ % kRestartIntervalSteps == 0) evaluator_.reset_neighbor_list();
      }
      s += std::max(merged, 1);
      invalidate_forces();
    }
    // Sites follow their parents in the positions read back (state, frames, checkpoints); every evaluation places
    // them itself. One launch per call, none without sites.
    evaluator_.place_virtual_sites();
  }

  // Whether the `count` steps from step_ on may run as one graph: no barostat move due after the first
  // (the first's is made before the launch) and no periodic restart of the neighbour list after any but
  // the last.
  bool steps_merge(int count) const {
    for (int k = 1; k < count; ++k)
      if (barostat_.due(step_ + k) || (step_ + k) % kRestartIntervalSteps == 0) return false;
    return true;
  }

  // The next evaluation re-sorts the atoms and rebuilds the tile list from the current positions,
  // exactly as a context given these positions through set_positions (a resumed run) does.
  void mark_restart_point() override {
    evaluator_.reset_neighbor_list();
    invalidate_forces();
  }

  std::shared_ptr<HostBufferAllocator> frame_allocator() override { return CudaFrameCapture::allocator(); }

  std::function<void()> capture_frame(const FrameTarget& target) override {
    require_positions("capture_frame");
    if (target.positions_nm == nullptr) throw RuntimeError("capture_frame: positions are required");
    if (target.forces_kj_per_mol_nm != nullptr) ensure_forces(false);
    return frames_.capture(target, n_, stream_, positions(), atoms_.v.data(), evaluator_.device_forces_fixed(),
                           evaluator_.force_stride());
  }

  StateArray state_array(StateField field) override {
    switch (field) {
      case StateField::Positions:
        return device_array(evaluator_.device_positions(), 4);
      case StateField::Velocities:
        return device_array(atoms_.v.data(), 3);
      case StateField::Forces:
        require_positions("forces");
        ensure_forces(false);
        return device_array(
            frames_.forces_as_double(n_, stream_, evaluator_.device_forces_fixed(), evaluator_.force_stride()), 3);
    }
    throw RuntimeError("state_array: unknown field");
  }

  void order_stream_after_context(void* stream) override {
    const auto consumer = static_cast<cudaStream_t>(stream);
    if (consumer == stream_) return;
    MDSIM_CUDA_CHECK(cudaEventRecord(handoff_, stream_));
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(consumer, handoff_, 0));
  }

  void add_external_force(std::shared_ptr<ExternalForce> force) override {
    externals_.push_back(std::move(force));
    if (externals_.size() == 1) external_forces_.resize(static_cast<std::size_t>(n_));
    evaluator_.set_external_hook([this](bool with_energy) { return run_external_forces(with_energy); },
                                 external_force_names(externals_));
    invalidate_forces();
  }
  void remove_external_force(const ExternalForce* force) override {
    erase_external_force(externals_, force);
    if (externals_.empty())
      evaluator_.set_external_hook({}, "");  // steps capture their evaluations in graphs again
    else
      evaluator_.set_external_hook([this](bool with_energy) { return run_external_forces(with_energy); },
                                   external_force_names(externals_));
    invalidate_forces();
  }

  // In the evaluator: steps, minimisation (cuda_minimize evaluates through it), barostat trials and
  // state() all evaluate there.
  void set_position_restraints(const PositionRestraints& restraints) override {
    evaluator_.set_position_restraints(restraints);
    invalidate_forces();
  }

  // A non-finite value written through a view is found by the neighbour list's check at the next
  // synchronisation, as a blown-up step is.
  void state_written(StateField field) override {
    if (field == StateField::Velocities) replica_kinetic_.clear();
    if (field == StateField::Positions) {
      positions_set_ = true;
      evaluator_.place_virtual_sites();
      invalidate_forces();
    }
  }

  SimulationState state(const StateRequest& request) override {
    StateReaders read;
    read.positions = [this] { return evaluator_.positions(); };
    read.velocities = [this] { return atoms_.v.download(stream_); };
    read.evaluate = [this, &request] {
      require_positions("state");
      ensure_forces(request.energy);
    };
    read.forces = [this] { return evaluator_.forces(); };
    read.potential = [this] { return evaluator_.energies(); };
    read.kinetic_energy = [this] { return integrator_.kinetic_energies().front(); };
    return assemble_state(request, step_, time_ps_, system_.box ? &box_ : nullptr, dof_, read);
  }

  // The minimiser of platform/minimizer (L-BFGS on the constraint manifold) on the device
  // backend of kernels/cuda/cuda_minimizer, from and into the evaluator's device positions. The
  // neighbour list is reset before (so the result depends only on the start positions:
  // bit-reproducible) and after (as set_positions would).
  MinimizationResult minimize(double tolerance, int max_iterations) override {
    if (replicas_ > 1) throw RuntimeError("minimize: a replica batch minimises each replica on its own (its views)");
    require_positions("minimize");
    invalidate_forces();
    evaluator_.reset_neighbor_list();
    CudaMinimizerConstraints* device_constraints = minimizer_constraints_.get();  // null without constraints
    const MinimizationResult result =
        cuda_minimize(evaluator_, system_, constraint_plan_, device_constraints, tolerance, max_iterations,
                      settings_.integrator.constraint_tolerance, ForceCriterion::MaxAtom, &minimization_stats_);
    evaluator_.reset_neighbor_list();
    evaluator_.compute(true);
    forces_valid_ = energy_valid_ = true;
    return result;
  }

  const CudaMinimizationStats& minimization_stats() const { return minimization_stats_; }

  std::uint64_t seed() const override { return seed_; }

  // What one steady-state step launches (after a step has run): see cuda_step_launches.
  CudaStepLaunches launches() const {
    CudaStepLaunches l;
    const int merged = integrator_.steps_merged();
    l.steps_per_graph = std::max(merged, 1);
    l.graphs = merged > 0 ? 1 : 2;
    l.kernels = (merged > 0 ? 0 : evaluator_.graph_kernel_count(false)) + integrator_.graph_kernels();
    l.separate_kernels = integrator_.side_kernels();
    return l;
  }

  int list_builds() { return evaluator_.num_list_builds(); }

  // ---- a replica batch (replicas() > 1), for its views ----

  int replicas() const { return replicas_; }
  int replica_atoms() const { return n_ / replicas_; }
  std::int64_t current_step() const { return step_; }

  void set_replica_positions(int r, const std::vector<Vec3d>& x) {
    check_replica_rows(x, "positions");
    evaluator_.set_positions_rows(x, first_row(r));
    positions_set_ = true;
    invalidate_forces();
  }
  void set_replica_velocities(int r, const std::vector<Vec3d>& v) {
    check_replica_rows(v, "velocities");
    replica_kinetic_.clear();
    atoms_.v.upload_range(first_row(r), v.data(), v.size(), stream_);
  }

  // Replica r's state as a context of the replica alone reports it (one evaluation for the whole batch).
  SimulationState replica_state(int r, const StateRequest& request) {
    const std::size_t first = first_row(r), count = static_cast<std::size_t>(replica_atoms());
    StateReaders read;
    read.positions = [&] { return evaluator_.positions_rows(first, count); };
    read.velocities = [&] { return atoms_.v.download_range(first, count, stream_); };
    read.evaluate = [&] {
      require_positions("state");
      ensure_forces(request.energy);
    };
    read.forces = [&] { return evaluator_.forces_rows(first, count); };
    read.potential = [&] {
      if (replica_potentials_.empty()) replica_potentials_ = evaluator_.replica_energies();
      return replica_potentials_.at(static_cast<std::size_t>(r));
    };
    read.kinetic_energy = [&] {
      if (replica_kinetic_.empty()) replica_kinetic_ = integrator_.kinetic_energies();
      return replica_kinetic_.at(static_cast<std::size_t>(r));
    };
    return assemble_state(request, step_, time_ps_, system_.box ? &box_ : nullptr, dof_, read);
  }

  // capture_frame of replica r's rows, staged in `frames` (one per view: the replicas' copies overlap).
  std::function<void()> capture_replica_frame(int r, const FrameTarget& target, CudaFrameCapture& frames) {
    require_positions("capture_frame");
    if (target.positions_nm == nullptr) throw RuntimeError("capture_frame: positions are required");
    if (target.forces_kj_per_mol_nm != nullptr) ensure_forces(false);
    const std::size_t first = first_row(r);
    return frames.capture(target, replica_atoms(), stream_, positions() + first, atoms_.v.data() + first,
                          evaluator_.device_forces_fixed() + first, evaluator_.force_stride());
  }

  void set_replica_temperature(int r, double temperature_k) { integrator_.set_replica_temperature(r, temperature_k); }
  void scale_replica_velocities(int r, double factor) {
    integrator_.scale_velocities(static_cast<int>(first_row(r)), replica_atoms(), factor);
    replica_kinetic_.clear();
  }
  void set_replica_seed(int r, std::uint64_t seed) { integrator_.set_replica_seed(r, seed); }

  // A ladder round on the device (CudaLadderExchanger) at the batch's step, queued on its stream: the evaluation's
  // energies per replica, the decisions, the replicas' bath coefficients and the accepted ones' velocities. False,
  // with nothing queued, when forces from outside act (their energies are the host's).
  bool enqueue_ladder_round(cuda::LadderDevice d, double* energies, std::int64_t round) {
    if (!externals_.empty()) return false;
    require_positions("exchange");
    ensure_forces(true);
    evaluator_.replica_potentials_on_device(energies);
    d.energies = energies;
    d.tile_overflow = evaluator_.device_tile_overflow();
    d.exclusion_overflow = evaluator_.device_exclusion_overflow();
    d.replica_coefficients = integrator_.device_replica_coefficients();
    cuda::ladder_round_kernel<<<1, 256, 0, stream_>>>(d, round);
    cuda::scale_replica_velocities_kernel<<<cuda::atom_blocks(n_), cuda::kAtomThreads, 0, stream_>>>(
        n_, replica_atoms(), atoms_.v.data(), d.velocity_factor);
    MDSIM_CUDA_CHECK_LAUNCH();
    replica_kinetic_.clear();
    return true;
  }
  // The host's record of replica r's bath after a device round (nothing uploaded).
  void record_replica_temperature(int r, double temperature_k) {
    integrator_.record_replica_temperature(r, temperature_k);
  }
  LangevinCoefficients bath_coefficients(double temperature_k) const {
    return integrator_.replica_bath_coefficients(temperature_k);
  }
  cudaStream_t stream() const { return stream_; }

  // The batch's step count brought to `step` (the replicas advance together: a view asking for a step the batch
  // has reached already asks for nothing).
  void advance_to(std::int64_t step) {
    if (step > step_) this->step(static_cast<int>(step - step_));
  }

  std::vector<double> barostat_state() const override { return barostat_.state(); }
  void set_barostat_state(const std::vector<double>& state) override { barostat_.set_state(state); }
  void set_seed(std::uint64_t seed) override {
    seed_ = seed;
    integrator_.set_seed(seed);
  }
  const DynamicsSettings& dynamics() const override { return settings_; }
  void set_integrator(const IntegratorConfig& integrator) override {
    settings_ = with_integrator(settings_, integrator);
    integrator_.set_config(settings_.integrator);
    if (settings_.barostat) barostat_.set_temperature(settings_.barostat->temperature_k);
  }

 private:
  double4_16a* positions() { return static_cast<double4_16a*>(evaluator_.device_positions()); }

  // A batch: same integrator, no barostat; forces from outside act on the whole batch (ExternalForce::add_batch).
  static void check_batch_settings(const DynamicsSettings& settings, const CudaOptions& options) {
    if (options.replicas < 1) throw RuntimeError("CUDA platform: a replica batch needs at least one replica");
    if (options.replicas > 1 && settings.barostat)
      throw InputError("CUDA platform: a replica batch runs at constant volume (no barostat); replicas with a "
                       "barostat run one by one");
  }
  std::size_t first_row(int r) const {
    if (r < 0 || r >= replicas_) throw RuntimeError("CUDA platform: replica " + std::to_string(r) + " of a batch of " +
                                                    std::to_string(replicas_));
    return static_cast<std::size_t>(r) * static_cast<std::size_t>(replica_atoms());
  }
  void check_replica_rows(const std::vector<Vec3d>& v, const char* what) const {
    check_particle_count(v.size(), static_cast<std::size_t>(replica_atoms()), what);
    check_finite_input(v, what);
  }

  void check_size(const std::vector<Vec3d>& v, const char* what) const {
    check_particle_count(v.size(), static_cast<std::size_t>(n_), what);
  }

  void require_positions(const char* what) const {
    if (!positions_set_) throw RuntimeError(std::string(what) + ": positions have not been set");
  }

  // Also every replica's energies read at the last evaluation (a batch reads them all at once for its views).
  void invalidate_forces() {
    forces_valid_ = energy_valid_ = false;
    replica_potentials_.clear();
    replica_kinetic_.clear();
  }

  // The evaluator's hook: every external force adds into one zeroed N x 3 double array (on the stream,
  // after the evaluation), which then goes into the fixed-point sums. Non-finite forces end the run at
  // the next synchronisation like a blown-up step; a non-finite energy here, naming the force. A batch's forces
  // take every replica's rows at once (ExternalForce::add_batch) and give an energy per replica.
  std::vector<double> run_external_forces(bool with_energy) {
    external_forces_.zero(stream_);
    const StateArray positions = device_array(evaluator_.device_positions(), 4);
    const StateArray forces = device_array(external_forces_.data(), 3);
    const Boxd* box = system_.box ? &evaluator_.box() : nullptr;
    std::vector<double> energy(static_cast<std::size_t>(replicas_), 0.0), each(energy.size(), 0.0);
    for (const auto& external : externals_) {
      if (replicas_ == 1) {
        each[0] = external->add(positions, forces, box, with_energy);
      } else {
        std::fill(each.begin(), each.end(), 0.0);
        external->add_batch(positions, forces, replicas_, box, with_energy, each.data());
      }
      if (with_energy)
        for (std::size_t r = 0; r < energy.size(); ++r) energy[r] += checked_external_energy(*external, each[r]);
    }
    evaluator_.add_external_forces(forces.data);
    return energy;
  }

  // N rows of doubles `row_stride` apart in this context's device memory, ordered on its stream. Positions
  // are rows of 4 (x, y, z and one unused), velocities and forces rows of 3.
  StateArray device_array(void* data, std::size_t row_stride) const {
    static_assert(sizeof(double4_16a) == 4 * sizeof(double), "positions: x, y, z and one unused double");
    StateArray a;
    a.data = static_cast<double*>(data);
    a.rows = static_cast<std::size_t>(n_);
    a.row_stride = row_stride;
    a.on_device = true;
    a.device_index = device_index_;
    a.stream = stream_;
    return a;
  }

  void ensure_forces(bool with_energy) {
    if (forces_valid_ && (energy_valid_ || !with_energy)) return;
    replica_potentials_.clear();
    evaluator_.compute(with_energy);
    forces_valid_ = true;
    energy_valid_ = with_energy;
  }

  // The largest dynamic shared memory any CCMA launch of this context uses (a per-kernel attribute,
  // so it covers both constraint plans).
  void allow_ccma_shared_bytes(std::size_t bytes) {
    if (bytes <= ccma_shared_attribute_) return;
    CudaConstraints::allow_shared_bytes(bytes);
    CudaIntegrator::allow_ccma_shared_bytes(bytes);
    ccma_shared_attribute_ = bytes;
  }

  // The dynamics' constraints (system masses): the context's positions along the constraint vectors
  // of `reference`; velocities at the context's positions.
  void constrain_positions(const Vec3d* reference, double tolerance) {
    constraints_.constrain_positions(reference, positions(), tolerance, ccma_passes_);
  }
  void constrain_velocities(Vec3d* v, double tolerance) {
    constraints_.constrain_velocities(positions(), v, tolerance, ccma_passes_);
  }

  void barostat_move() {
    ensure_forces(true);
    if (barostat_.move(evaluator_, box_, seed_, step_))
      forces_valid_ = energy_valid_ = true;  // the trial evaluation is of the new state
    else
      invalidate_forces();
  }

  System system_;
  DynamicsSettings settings_;
  CudaForceEvaluator evaluator_;
  ConstraintPlan constraint_plan_;  // validation, the minimiser's start projection and final check
  std::uint64_t seed_;
  int dof_;              // of one replica (the system without a batch)
  int n_;                // particles: every replica's
  int replicas_;         // a batch's replicas (1: none)
  int ccma_passes_;      // dynamics_ccma_passes
  cudaStream_t stream_;  // the evaluator's: every operation of the context is ordered on it
  int device_index_;
  // Declared before the parts below, which enqueue work on these streams: destroyed after them.
  CudaStreams streams_;
  CudaFrameCapture frames_;
  DynamicsArrays atoms_;
  int max_shared_bytes_;
  CudaConstraints constraints_;  // system masses
  CudaIntegrator integrator_;
  std::unique_ptr<CudaMinimizerConstraintSolver> minimizer_constraints_;  // when the system has constraints
  CudaMinimizationStats minimization_stats_;
  CudaBarostat barostat_;
  std::vector<std::shared_ptr<ExternalForce>> externals_;
  cuda::DeviceBuffer<Vec3d> external_forces_;  // the external forces' sum of one evaluation
  cuda::Event handoff_;                        // order_stream_after_context's
  std::size_t ccma_shared_attribute_ = 0;

  bool forces_valid_ = false, energy_valid_ = false, positions_set_ = false;
  std::vector<EnergyTerms> replica_potentials_;  // a batch's, of the last evaluation with energies (empty: not read)
  std::vector<double> replica_kinetic_;          // a batch's kinetic energies at the current velocities (empty: not read)
  Boxd box_{};
  std::int64_t step_ = 0;
  double time_ps_ = 0.0;
};

// ---- replica batches ----

// A batch and what its views share: one replica's System, the batch context, each replica's restraints, and a
// context of one replica alone (made on first use) for what a replica does on its own: minimisation,
// constraints applied at the start, Maxwell-Boltzmann velocities. Those run exactly as in a run of the replica
// alone.
struct CudaReplicaBatch {
  System system;  // one replica's
  CudaOptions single_options;
  DynamicsSettings single_settings;
  std::unique_ptr<CudaContext> context;
  std::vector<PositionRestraints> restraints;  // per replica
  std::unique_ptr<Context> single;

  // The context of one replica alone holding replica r's positions, velocities and restraints.
  Context& alone(int r) {
    if (!single) single = make_cuda_context(system, single_settings, single_options);
    StateRequest request;
    request.velocities = true;
    const SimulationState s = context->replica_state(r, request);
    single->set_positions(s.positions_nm);
    single->set_velocities(s.velocities_nm_per_ps);
    single->set_position_restraints(restraints[static_cast<std::size_t>(r)]);
    return *single;
  }

  // Every replica's restraints as the batch's (replica r's atoms shifted to its rows).
  void upload_restraints() {
    PositionRestraints all;
    const int n = system.num_particles();
    for (std::size_t r = 0; r < restraints.size(); ++r)
      for (std::size_t e = 0; e < restraints[r].atoms.size(); ++e)
        all.add(restraints[r].atoms[e] + static_cast<int>(r) * n, restraints[r].reference_nm[e],
                restraints[r].k_kj_per_mol_nm2[e]);
    context->set_position_restraints(all);
  }
};

// One replica of a batch as a Context of its own. The replicas advance together: step(n) brings the batch to this
// replica's step + n (nothing when another replica's call got it there), so a caller steps every replica to the
// same step before it reads any of them (state() refuses a replica the batch has moved past).
class CudaReplicaView final : public Context {
 public:
  CudaReplicaView(std::shared_ptr<CudaReplicaBatch> batch, int replica, const DynamicsSettings& settings,
                  std::uint64_t seed)
      : batch_(std::move(batch)), r_(replica), settings_(settings), seed_(seed) {}
  ~CudaReplicaView() override { frames_.synchronize(); }  // no frame copy in flight from the staging buffer
  CudaReplicaView(const CudaReplicaView&) = delete;
  CudaReplicaView& operator=(const CudaReplicaView&) = delete;

  void set_positions(const std::vector<Vec3d>& x) override { batch().set_replica_positions(r_, x); }
  void set_velocities(const std::vector<Vec3d>& v) override { batch().set_replica_velocities(r_, v); }
  void scale_velocities(double factor) override { batch().scale_replica_velocities(r_, factor); }
  void set_velocities_to_temperature(double temperature_k, std::uint64_t seed) override {
    Context& alone = batch_->alone(r_);
    alone.set_velocities_to_temperature(temperature_k, seed != 0 ? seed : seed_);
    StateRequest request;
    request.positions = false;
    request.velocities = true;
    batch().set_replica_velocities(r_, alone.state(request).velocities_nm_per_ps);
  }
  void apply_constraints(double tolerance) override {
    Context& alone = batch_->alone(r_);
    alone.apply_constraints(tolerance);
    copy_back(alone, true);
  }
  MinimizationResult minimize(double tolerance, int max_iterations) override {
    Context& alone = batch_->alone(r_);
    const MinimizationResult result = alone.minimize(tolerance, max_iterations);
    copy_back(alone, false);
    return result;
  }
  void set_box(const Boxd& box) override { batch().set_box(box); }
  void set_step(std::int64_t step, double time_ps) override {
    batch().set_step(step, time_ps);
    step_ = step;
  }
  void step(int steps) override {
    step_ += steps;
    batch().advance_to(step_);
  }
  // What the batch holds at its step; a request for nothing but the header (step, time, box) answers with this
  // replica's own step, also while the batch is ahead of it (a run's step loop asks where the replica is).
  SimulationState state(const StateRequest& request) override {
    const bool header_only = !request.positions && !request.velocities && !request.forces && !request.energy;
    if (!header_only) check_in_step("state");
    SimulationState s = batch().replica_state(r_, request);
    if (header_only && s.step != step_) {
      s.time_ps -= static_cast<double>(s.step - step_) * settings_.integrator.timestep_ps;
      s.step = step_;
    }
    return s;
  }
  std::function<void()> capture_frame(const FrameTarget& target) override {
    check_in_step("capture_frame");
    return batch().capture_replica_frame(r_, target, frames_);
  }
  std::shared_ptr<HostBufferAllocator> frame_allocator() override { return CudaFrameCapture::allocator(); }
  void mark_restart_point() override { batch().mark_restart_point(); }
  StateArray state_array(StateField field) override {
    StateArray a = batch().state_array(field);
    a.rows = static_cast<std::size_t>(batch().replica_atoms());
    a.data += static_cast<std::size_t>(r_) * a.rows * a.row_stride;
    return a;
  }
  void state_written(StateField field) override { batch().state_written(field); }
  void order_stream_after_context(void* stream) override { batch().order_stream_after_context(stream); }
  void add_external_force(std::shared_ptr<ExternalForce>) override {
    throw InputError("a force added from outside to one replica does not act in a replica batch: add it to the whole "
                     "batch (Python: Ensemble.add_force), or run the replicas one by one");
  }
  void remove_external_force(const ExternalForce* force) override {
    std::vector<std::shared_ptr<ExternalForce>> none;
    erase_external_force(none, force);
  }
  void set_position_restraints(const PositionRestraints& restraints) override {
    check_position_restraints(restraints, static_cast<std::size_t>(batch().replica_atoms()));
    batch_->restraints[static_cast<std::size_t>(r_)] = restraints;
    batch_->upload_restraints();
  }
  // Each replica's own temperature; the friction, time step and constraint tolerance are the batch's.
  void set_integrator(const IntegratorConfig& integrator) override {
    const DynamicsSettings next = with_integrator(settings_, integrator);
    const IntegratorConfig &a = next.integrator, &b = batch().dynamics().integrator;
    if (a.friction_per_ps != b.friction_per_ps || a.timestep_ps != b.timestep_ps ||
        a.constraint_tolerance != b.constraint_tolerance)
      throw InputError("a replica of a batch takes a temperature of its own, not a friction, time step or "
                       "constraint tolerance: those are the batch's");
    batch().set_replica_temperature(r_, a.temperature_k);
    settings_ = next;
  }
  const DynamicsSettings& dynamics() const override { return settings_; }
  std::uint64_t seed() const override { return seed_; }
  void set_seed(std::uint64_t seed) override {
    seed_ = seed;
    batch().set_replica_seed(r_, seed);
  }
  CudaContext& batch_context() const { return batch(); }
  // The whole batch's ladder, asked of its first replica (below CudaLadderExchanger).
  std::unique_ptr<LadderExchanger> ladder_exchanger(const std::vector<double>& temperatures_k,
                                                    const std::vector<int>& replica_at, std::uint64_t seed) override;
  std::vector<double> barostat_state() const override { return {}; }
  void set_barostat_state(const std::vector<double>& state) override {
    if (!state.empty()) throw InputError("a replica batch has no barostat, but the state to load has one");
  }

 private:
  CudaContext& batch() const { return *batch_->context; }
  void check_in_step(const char* what) const {
    if (step_ != batch().current_step())
      throw RuntimeError(fmt::format("{}: replica {} of a batch is at step {}, the batch at {}: step every replica "
                                     "to the same step first",
                                     what, r_, step_, batch().current_step()));
  }
  // The positions (and velocities) of the context of this replica alone into the batch.
  void copy_back(Context& alone, bool velocities) {
    StateRequest request;
    request.velocities = velocities;
    const SimulationState s = alone.state(request);
    batch().set_replica_positions(r_, s.positions_nm);
    if (velocities) batch().set_replica_velocities(r_, s.velocities_nm_per_ps);
  }

  std::shared_ptr<CudaReplicaBatch> batch_;
  int r_;
  DynamicsSettings settings_;
  std::uint64_t seed_;
  std::int64_t step_ = 0;
  CudaFrameCapture frames_;  // this replica's staging: the replicas' frame copies overlap
};

// A temperature ladder held whole by one batch (replica r = the batch's replica r), its rounds decided and applied on
// the device: the host's tables (temperatures, bath coefficients and velocity scales per temperature, as
// set_replica_temperature and ReplicaExchange compute them), the device's map, and the last round's outcome copied to
// pinned memory behind it.
class CudaLadderExchanger final : public LadderExchanger {
 public:
  CudaLadderExchanger(std::shared_ptr<CudaReplicaBatch> batch, const std::vector<double>& temperatures_k,
                      const std::vector<int>& replica_at, std::uint64_t seed)
      : batch_(std::move(batch)), k_(static_cast<int>(temperatures_k.size())), temperatures_k_(temperatures_k) {
    CudaContext& c = *batch_->context;
    if (k_ != c.replicas() || static_cast<int>(replica_at.size()) != k_)
      throw RuntimeError(fmt::format("a ladder of {} temperatures on a batch of {} replicas", k_, c.replicas()));
    std::vector<LangevinCoefficients> coefficients;
    std::vector<double> up, down;
    for (const double t : temperatures_k) coefficients.push_back(c.bath_coefficients(t));
    for (std::size_t t = 0; t + 1 < temperatures_k.size(); ++t) {
      up.push_back(exchange_velocity_scale(temperatures_k[t], temperatures_k[t + 1]));
      down.push_back(exchange_velocity_scale(temperatures_k[t + 1], temperatures_k[t]));
    }
    std::vector<int> temperature_of(static_cast<std::size_t>(k_));
    for (std::size_t t = 0; t < replica_at.size(); ++t)
      temperature_of.at(static_cast<std::size_t>(replica_at[t])) = static_cast<int>(t);
    const cudaStream_t s = c.stream();
    temperatures_.upload(temperatures_k, s);
    coefficients_.upload(coefficients, s);
    scale_up_.upload(up, s);
    scale_down_.upload(down, s);
    replica_at_.upload(replica_at, s);
    temperature_of_.upload(temperature_of, s);
    energies_.resize(static_cast<std::size_t>(k_));
    factor_.resize(static_cast<std::size_t>(k_));
    accepted_.resize(static_cast<std::size_t>(k_));
    skipped_.resize(1);
    device_ = {k_,
               seed,
               temperatures_.data(),
               coefficients_.data(),
               scale_up_.data(),
               scale_down_.data(),
               replica_at_.data(),
               temperature_of_.data(),
               nullptr,
               nullptr,
               nullptr,
               accepted_.data(),
               skipped_.data(),
               factor_.data(),
               nullptr};
    const std::size_t host_bytes =
        sizeof(HostOutcome) + static_cast<std::size_t>(k_) * (sizeof(double) + sizeof(int) + 1);
    MDSIM_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), host_bytes, cudaHostAllocDefault));
    MDSIM_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  }
  ~CudaLadderExchanger() override {
    if (pending_) cudaEventSynchronize(done_);
    cudaEventDestroy(done_);
    cudaFreeHost(host_);
  }
  CudaLadderExchanger(const CudaLadderExchanger&) = delete;
  CudaLadderExchanger& operator=(const CudaLadderExchanger&) = delete;

  bool start_round(std::int64_t round) override {
    if (pending_) throw RuntimeError("exchange round started before the last one's outcome was read");
    CudaContext& c = *batch_->context;
    if (!c.enqueue_ladder_round(device_, energies_.data(), round)) return false;
    const cudaStream_t s = c.stream();
    attempts_ = ladder_round_attempts(k_, round);
    MDSIM_CUDA_CHECK(
        cudaMemcpyAsync(host_energies(), energies_.data(), k_ * sizeof(double), cudaMemcpyDeviceToHost, s));
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(host_temperature_of(), temperature_of_.data(), k_ * sizeof(int),
                                     cudaMemcpyDeviceToHost, s));
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(host_accepted(), accepted_.data(), static_cast<std::size_t>(attempts_),
                                     cudaMemcpyDeviceToHost, s));
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(&host_->skipped, skipped_.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
    MDSIM_CUDA_CHECK(cudaEventRecord(done_, s));
    pending_ = true;
    return true;
  }

  LadderRound finish_round() override {
    if (!pending_) throw RuntimeError("no exchange round to finish");
    MDSIM_CUDA_CHECK(cudaEventSynchronize(done_));
    pending_ = false;
    LadderRound out;
    out.energies_kj_per_mol.assign(host_energies(), host_energies() + k_);
    out.accepted.assign(host_accepted(), host_accepted() + attempts_);
    out.skipped = host_->skipped != 0;
    for (int r = 0; r < k_; ++r)  // the host's record of each bath (what the device now holds)
      batch_->context->record_replica_temperature(
          r, temperatures_k_[static_cast<std::size_t>(host_temperature_of()[r])]);
    return out;
  }

 private:
  struct HostOutcome {
    int skipped;
    int pad;
  };
  double* host_energies() { return reinterpret_cast<double*>(reinterpret_cast<char*>(host_) + sizeof(HostOutcome)); }
  int* host_temperature_of() { return reinterpret_cast<int*>(host_energies() + k_); }
  unsigned char* host_accepted() { return reinterpret_cast<unsigned char*>(host_temperature_of() + k_); }

  std::shared_ptr<CudaReplicaBatch> batch_;
  int k_;
  std::vector<double> temperatures_k_;
  cuda::DeviceBuffer<double> temperatures_, scale_up_, scale_down_, energies_, factor_;
  cuda::DeviceBuffer<LangevinCoefficients> coefficients_;
  cuda::DeviceBuffer<int> replica_at_, temperature_of_, skipped_;
  cuda::DeviceBuffer<unsigned char> accepted_;
  cuda::LadderDevice device_;
  HostOutcome* host_ = nullptr;  // pinned: HostOutcome, then energies, temperature indices, decisions
  cudaEvent_t done_ = nullptr;
  bool pending_ = false;
  int attempts_ = 0;
};

std::unique_ptr<LadderExchanger> CudaReplicaView::ladder_exchanger(const std::vector<double>& temperatures_k,
                                                                   const std::vector<int>& replica_at,
                                                                   std::uint64_t seed) {
  if (r_ != 0 || batch().replicas() != static_cast<int>(temperatures_k.size()) ||
      settings_.integrator.type != IntegratorType::LangevinMiddle)
    return nullptr;
  return std::make_unique<CudaLadderExchanger>(batch_, temperatures_k, replica_at, seed);
}

// The settings a batch's replicas must share (all but the temperature and the seed).
void check_batch_replicas(const std::vector<DynamicsSettings>& settings) {
  if (settings.empty()) throw RuntimeError("a replica batch needs at least one replica");
  const DynamicsSettings& a = settings.front();
  for (const DynamicsSettings& b : settings) {
    const IntegratorConfig &x = a.integrator, &y = b.integrator;
    if (x.type != y.type || x.friction_per_ps != y.friction_per_ps || x.timestep_ps != y.timestep_ps ||
        x.constraint_tolerance != y.constraint_tolerance || a.remove_cm_motion != b.remove_cm_motion ||
        a.remove_cm_motion_interval != b.remove_cm_motion_interval || b.barostat.has_value())
      throw RuntimeError("the replicas of a batch share their integrator but for the temperature and seed, and have "
                         "no barostat");
  }
}

}  // namespace

std::vector<std::unique_ptr<Context>> make_cuda_replica_batch(const System& system,
                                                              const std::vector<DynamicsSettings>& settings,
                                                              const CudaOptions& options) {
  check_batch_replicas(settings);
  auto batch = std::make_shared<CudaReplicaBatch>();
  batch->system = system;
  batch->single_options = options;
  batch->single_options.replicas = 1;
  batch->single_settings = settings.front();
  CudaOptions batch_options = options;
  batch_options.replicas = static_cast<int>(settings.size());
  batch->context = std::make_unique<CudaContext>(system, settings.front(), batch_options);
  batch->restraints.resize(settings.size());
  std::vector<std::unique_ptr<Context>> views;
  for (std::size_t r = 0; r < settings.size(); ++r) {
    const std::uint64_t seed = choose_seed(settings[r].integrator.seed);
    const int replica = static_cast<int>(r);
    if (settings[r].integrator.type == IntegratorType::LangevinMiddle)
      batch->context->set_replica_temperature(replica, settings[r].integrator.temperature_k);
    batch->context->set_replica_seed(replica, seed);
    views.push_back(std::make_unique<CudaReplicaView>(batch, replica, settings[r], seed));
  }
  return views;
}

namespace {
CudaContext& batch_of(Context& view) {
  auto* v = dynamic_cast<CudaReplicaView*>(&view);
  if (v == nullptr) throw RuntimeError("a force on a replica batch needs a replica of a batch (make_cuda_replica_batch)");
  return v->batch_context();
}
}  // namespace

void add_replica_batch_force(Context& view, std::shared_ptr<ExternalForce> force) {
  batch_of(view).add_external_force(std::move(force));
}
void remove_replica_batch_force(Context& view, const ExternalForce* force) {
  batch_of(view).remove_external_force(force);
}

std::unique_ptr<Context> make_cuda_context(const System& system, const DynamicsSettings& settings,
                                           const CudaOptions& options) {
  return std::make_unique<CudaContext>(system, settings, options);
}

CudaStepLaunches cuda_step_launches(const Context& context) {
  const auto* cuda_context = dynamic_cast<const CudaContext*>(&context);
  if (cuda_context == nullptr) throw RuntimeError("cuda_step_launches: not a CUDA context");
  return cuda_context->launches();
}

CudaMinimizationStats cuda_minimization_stats(const Context& context) {
  const auto* cuda_context = dynamic_cast<const CudaContext*>(&context);
  if (cuda_context == nullptr) throw RuntimeError("cuda_minimization_stats: not a CUDA context");
  return cuda_context->minimization_stats();
}

int cuda_list_builds(Context& context) {
  auto* cuda_context = dynamic_cast<CudaContext*>(&context);
  if (cuda_context == nullptr) throw RuntimeError("cuda_list_builds: not a CUDA context");
  return cuda_context->list_builds();
}

}  // namespace mdsim
