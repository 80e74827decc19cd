// CUDA platform: the dynamics Context (see cuda_context.hpp for the design). The CPU reference
// context (kernels/cpu/cpu_context.cpp, cpu_constraints.cpp) is the specification; the planning both
// share (constraint plan, barostat, minimiser driver, velocities) comes from kernels/plan. The minimiser's device backend
// is kernels/cuda/cuda_minimizer.cu; this file gives it the constraint operations
// (CudaMinimizerConstraints) on its SETTLE and CCMA kernels.
#include "kernels/cuda/cuda_context.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "kernels/plan/barostat.hpp"
#include "kernels/plan/constraint_plan.hpp"
#include "kernels/plan/minimizer.hpp"
#include "kernels/plan/velocities.hpp"
#include "kernels/cuda/constraint_kernels.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_minimizer.hpp"
#include "kernels/cuda/integrator_kernels.cuh"
#include "kernels/cuda/langevin_step_kernels.cuh"
#include "kernels/physics/integrator_steps.hpp"
#include "kernels/physics/philox.hpp"

namespace mdsim {

namespace {

using cuda::DeviceBuffer;
using Coords = std::vector<Vec3d>;

int blocks_for(int n, int threads = cuda::kAtomThreads) { return std::max(1, (n + threads - 1) / threads); }

// ---------------------------------------------------------------------------------------------
// Constraint data: the platform-neutral ConstraintPlan (its SETTLE selection, CCMA constraint order,
// inverse coupling matrix with the element cutoff, coupled groups) laid out for the device, so that
// both platforms run the same iteration. The context keeps the plan for the final constraint check.

// CCMA constraints are packed into thread blocks of whole coupled groups, about this many each.
constexpr int kCcmaBlockConstraints = 64;

// The CCMA data in the layout of cuda::CcmaView (constraints numbered block by block).
struct DeviceConstraintPlan {
  std::vector<cuda::SettleWater> settle;
  std::vector<int> block_constraint_start{0}, block_atom_start{0};
  std::vector<int2> ccma_atoms, ccma_local;  // system indices; block-local atom slots
  std::vector<double> distance, reduced_mass;
  std::vector<int> row_start{0}, column;     // block-local columns
  std::vector<double> value;
  std::vector<int> atom_index, atom_start{0}, atom_entry;  // touched atoms, their constraints
  std::vector<double> atom_inverse_mass;
  int max_block_constraints = 0, max_block_atoms = 0;
  std::size_t max_block_shared_bytes = 0;
  int num_ccma() const { return static_cast<int>(ccma_atoms.size()); }
  int num_blocks() const { return static_cast<int>(block_constraint_start.size()) - 1; }
};

DeviceConstraintPlan build_constraint_plan(const ConstraintPlan& host) {
  DeviceConstraintPlan plan;
  const std::vector<double>& inverse_mass = host.inverse_masses();
  for (const ConstraintPlan::Settle& w : host.settle_waters()) {
    cuda::SettleWater s;
    s.o = w.o;
    s.h1 = w.h1;
    s.h2 = w.h2;
    s.inv_o = inverse_mass[static_cast<std::size_t>(w.o)];
    s.inv_h1 = inverse_mass[static_cast<std::size_t>(w.h1)];
    s.inv_h2 = inverse_mass[static_cast<std::size_t>(w.h2)];
    s.mass_o = 1.0 / s.inv_o;  // as CpuConstraints::apply_positions computes them
    s.mass_h = 1.0 / s.inv_h1;
    s.oh = w.oh;
    s.hh = w.hh;
    plan.settle.push_back(s);
  }
  const std::vector<ConstraintPlan::Ccma>& ccma = host.ccma_constraints();
  const auto& inverse_coupling = host.inverse_coupling();
  const int nc = static_cast<int>(ccma.size());
  const std::vector<std::vector<int>>& groups = host.coupled_groups();

  // Whole groups into blocks of about kCcmaBlockConstraints constraints; within a block the
  // constraints keep their CPU order, so each atom still sums its updates in the CPU's order.
  std::vector<std::vector<int>> blocks;
  for (const auto& g : groups) {
    if (blocks.empty() || blocks.back().size() + g.size() > static_cast<std::size_t>(kCcmaBlockConstraints))
      blocks.emplace_back();
    blocks.back().insert(blocks.back().end(), g.begin(), g.end());
  }
  std::vector<int> new_index(static_cast<std::size_t>(nc), -1);
  {
    int next = 0;
    for (auto& b : blocks) {
      std::sort(b.begin(), b.end());
      for (int c : b) new_index[static_cast<std::size_t>(c)] = next++;
    }
  }
  for (const auto& b : blocks) {
    const int c_begin = static_cast<int>(plan.ccma_atoms.size());
    std::vector<int> atoms;
    for (int c : b) {
      atoms.push_back(ccma[static_cast<std::size_t>(c)].a);
      atoms.push_back(ccma[static_cast<std::size_t>(c)].b);
    }
    std::sort(atoms.begin(), atoms.end());
    atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
    std::map<int, int> slot;
    for (std::size_t q = 0; q < atoms.size(); ++q) slot[atoms[q]] = static_cast<int>(q);
    std::map<int, std::vector<int>> entries;  // atom -> 2 k + side, ascending k
    for (int c : b) {
      const ConstraintPlan::Ccma& k = ccma[static_cast<std::size_t>(c)];
      const int local_k = new_index[static_cast<std::size_t>(c)] - c_begin;
      plan.ccma_atoms.push_back(make_int2(k.a, k.b));
      plan.ccma_local.push_back(make_int2(slot.at(k.a), slot.at(k.b)));
      plan.distance.push_back(k.distance);
      plan.reduced_mass.push_back(k.reduced_mass);
      for (const auto& [col, value] : inverse_coupling[static_cast<std::size_t>(c)]) {
        plan.column.push_back(new_index[static_cast<std::size_t>(col)] - c_begin);
        plan.value.push_back(value);
      }
      plan.row_start.push_back(static_cast<int>(plan.column.size()));
      entries[k.a].push_back(2 * local_k);
      entries[k.b].push_back(2 * local_k + 1);
    }
    for (int a : atoms) {
      plan.atom_index.push_back(a);
      plan.atom_inverse_mass.push_back(inverse_mass[static_cast<std::size_t>(a)]);
      for (int e : entries.at(a)) plan.atom_entry.push_back(e);
      plan.atom_start.push_back(static_cast<int>(plan.atom_entry.size()));
    }
    plan.block_constraint_start.push_back(static_cast<int>(plan.ccma_atoms.size()));
    plan.block_atom_start.push_back(static_cast<int>(plan.atom_index.size()));
    const int nb = static_cast<int>(b.size()), na = static_cast<int>(atoms.size());
    plan.max_block_constraints = std::max(plan.max_block_constraints, nb);
    plan.max_block_atoms = std::max(plan.max_block_atoms, na);
    plan.max_block_shared_bytes = std::max(plan.max_block_shared_bytes, cuda::ccma_shared_bytes(na, nb));
  }
  return plan;
}

// One constraint plan on the device: the context's (system masses: the integrators, apply_constraints,
// the minimiser's start positions) or the minimiser's (unit masses: its retraction and tangent
// projections).
struct DeviceConstraints {
  int num_settle = 0, num_ccma = 0, ccma_blocks = 0, ccma_threads = 64;
  DeviceBuffer<cuda::SettleWater> settle;
  DeviceBuffer<int2> atoms, local;
  DeviceBuffer<double> distance, reduced_mass, value, atom_inverse_mass, r_ref2, delta, delta_tmp;
  DeviceBuffer<int> block_constraint_start, block_atom_start, block_iterations;
  DeviceBuffer<int> row_start, column, atom_index, atom_start, atom_entry, iterations;
  DeviceBuffer<Vec3d> x_scratch, r_ref;
  bool use_shared = false;
  std::size_t shared_bytes = 0;  // dynamic shared memory of a CCMA launch (0: the global scratch arrays)

  // max_shared: the device's opt-in shared memory per block.
  void upload(const DeviceConstraintPlan& plan, cudaStream_t stream, int max_shared) {
    num_settle = static_cast<int>(plan.settle.size());
    num_ccma = plan.num_ccma();
    ccma_blocks = plan.num_blocks();
    ccma_threads = std::clamp((std::max(plan.max_block_constraints, plan.max_block_atoms) + 31) / 32 * 32, 64, 1024);
    settle.upload(plan.settle, stream);
    block_constraint_start.upload(plan.block_constraint_start, stream);
    block_atom_start.upload(plan.block_atom_start, stream);
    block_iterations.resize(static_cast<std::size_t>(std::max(ccma_blocks, 1)));
    atoms.upload(plan.ccma_atoms, stream);
    local.upload(plan.ccma_local, stream);
    atom_inverse_mass.upload(plan.atom_inverse_mass, stream);
    distance.upload(plan.distance, stream);
    reduced_mass.upload(plan.reduced_mass, stream);
    row_start.upload(plan.row_start, stream);
    column.upload(plan.column, stream);
    value.upload(plan.value, stream);
    atom_index.upload(plan.atom_index, stream);
    atom_start.upload(plan.atom_start, stream);
    atom_entry.upload(plan.atom_entry, stream);
    iterations.upload(std::vector<int>{0, 0}, stream);
    // Each CCMA block's working set in shared memory when the largest fits (HBonds: a few KB),
    // otherwise in global scratch.
    const int touched = static_cast<int>(plan.atom_index.size());
    shared_bytes = plan.max_block_shared_bytes;
    use_shared = num_ccma > 0 && shared_bytes + 64 <= static_cast<std::size_t>(max_shared);
    if (!use_shared) {
      shared_bytes = 0;
      x_scratch.resize(static_cast<std::size_t>(touched));
      r_ref.resize(static_cast<std::size_t>(num_ccma));
      r_ref2.resize(static_cast<std::size_t>(num_ccma));
      delta.resize(static_cast<std::size_t>(num_ccma));
      delta_tmp.resize(static_cast<std::size_t>(num_ccma));
    }
  }

  cuda::CcmaView view() {
    cuda::CcmaView c;
    c.blocks = ccma_blocks;
    c.block_constraint_start = block_constraint_start.data();
    c.block_atom_start = block_atom_start.data();
    c.atoms = atoms.data();
    c.local = local.data();
    c.distance = distance.data();
    c.reduced_mass = reduced_mass.data();
    c.row_start = row_start.data();
    c.column = column.data();
    c.value = value.data();
    c.atom_index = atom_index.data();
    c.atom_inverse_mass = atom_inverse_mass.data();
    c.atom_start = atom_start.data();
    c.atom_entry = atom_entry.data();
    c.use_shared = use_shared;
    c.x_scratch = x_scratch.data();
    c.r_ref_scratch = r_ref.data();
    c.r_ref2_scratch = r_ref2.data();
    c.delta_scratch = delta.data();
    c.delta_tmp_scratch = delta_tmp.data();
    c.block_iterations = block_iterations.data();
    c.iterations = iterations.data();
    return c;
  }
};

// Pinned host memory for trajectory frame buffers (filled by asynchronous device-to-host copies).
class PinnedHostAllocator final : public HostBufferAllocator {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    MDSIM_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    return p;
  }
  void deallocate(void* pointer, std::size_t) override { cudaFreeHost(pointer); }
};

// An event that lives as long as the last function waiting on it.
std::shared_ptr<CUevent_st> make_shared_event() {
  cudaEvent_t e = nullptr;
  MDSIM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync));
  return std::shared_ptr<CUevent_st>(e, [](cudaEvent_t ev) { cudaEventDestroy(ev); });
}

CudaOptions context_evaluator_options(CudaOptions options) {
  options.reorder_interval = 0;  // the context re-sorts at restart points (Context::mark_restart_point)
  return options;
}

class CudaContext final : public Context, private CudaMinimizerConstraints {
 public:
  CudaContext(const System& system, const DynamicsSettings& settings, const CudaOptions& options)
      : system_(system),
        settings_((check_dynamics_settings(system, settings), settings)),
        evaluator_(system_, context_evaluator_options(options)),
        constraint_plan_(system_, system_.mass_amu),
        seed_(choose_seed(settings.integrator.seed)),
        dof_(degrees_of_freedom(system_, settings.remove_cm_motion)),
        n_(system_.num_particles()),
        ccma_passes_(options.double_precision ? 2 : 1) {
    stream_ = static_cast<cudaStream_t>(evaluator_.device_stream());
    MDSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&aux_stream_, cudaStreamNonBlocking));
    MDSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&free_stream_, cudaStreamNonBlocking));
    MDSIM_CUDA_CHECK(cudaEventCreateWithFlags(&free_join_, cudaEventDisableTiming));
    MDSIM_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    MDSIM_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    MDSIM_CUDA_CHECK(cudaEventCreateWithFlags(&com_done_, cudaEventDisableTiming));
    MDSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
    MDSIM_CUDA_CHECK(cudaEventCreateWithFlags(&frame_converted_, cudaEventDisableTiming));

    const std::size_t n = static_cast<std::size_t>(n_);
    host_inverse_mass_.resize(n);
    double total_mass = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      host_inverse_mass_[i] = system_.mass_amu[i] > 0.0 ? 1.0 / system_.mass_amu[i] : 0.0;
      total_mass += system_.mass_amu[i];
    }
    has_mass_ = total_mass > 0.0;
    inverse_total_mass_ = has_mass_ ? 1.0 / total_mass : 0.0;
    mass_.upload(system_.mass_amu, stream_);
    inverse_mass_.upload(host_inverse_mass_, stream_);
    v_.upload(Coords(n, Vec3d(0, 0, 0)), stream_);
    x_old_.resize(n);
    x_unconstrained_.resize(n);
    v_scratch_.resize(n);
    com_velocity_.resize(1);
    com_partial_.resize(cuda::kComVelocityMaxBlocks);
    com_done_count_.resize(1);
    com_done_count_.zero(stream_);
    scalar_.resize(1);
    device_step_.upload(std::vector<long long>{0}, stream_);

    int max_shared = 0;
    MDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, options.device));
    const DeviceConstraintPlan plan = build_constraint_plan(constraint_plan_);
    constraints_.upload(plan, stream_, max_shared);
    allow_ccma_shared_bytes(constraints_.shared_bytes);
    // The fused LangevinMiddle step (langevin_step_kernels.cuh) needs CCMA's single pass and a thread
    // for every atom of a CCMA block; it takes the atoms in no constraint on their own.
    fused_langevin_ = options.fuse_langevin_step && ccma_passes_ == 1 && plan.max_block_atoms <= constraints_.ccma_threads;
    if (fused_step()) noise_.resize(n);
    {
      std::vector<char> constrained_atom(static_cast<std::size_t>(n), 0);
      for (const cuda::SettleWater& w : plan.settle) constrained_atom[w.o] = constrained_atom[w.h1] = constrained_atom[w.h2] = 1;
      for (int a : plan.atom_index) constrained_atom[static_cast<std::size_t>(a)] = 1;
      std::vector<int> free_atoms;
      for (std::size_t i = 0; i < n; ++i)
        if (!constrained_atom[i]) free_atoms.push_back(static_cast<int>(i));
      num_free_atoms_ = static_cast<int>(free_atoms.size());
      if (free_atoms.empty()) free_atoms.push_back(0);  // keep the buffer allocated
      free_atoms_.upload(free_atoms, stream_);
    }
    if (!system_.constraints.empty()) {
      // The minimiser's plan: the same constraints with unit masses (ConstraintPlan decides SETTLE and
      // the CCMA preconditioner from the masses, as cpu_minimizer's projector does).
      const ConstraintPlan unit(system_, std::vector<double>(n, 1.0));
      unit_constraints_.upload(build_constraint_plan(unit), stream_, max_shared);
      allow_ccma_shared_bytes(unit_constraints_.shared_bytes);
    }

    if (system_.box) box_ = *system_.box;
    if (settings_.barostat) {
      barostat_.emplace(system_, *settings_.barostat);
      const std::vector<std::vector<int>>& molecules = barostat_->molecules();
      num_molecules_ = static_cast<int>(molecules.size());
      std::vector<int> start{0}, atoms;
      for (const auto& m : molecules) {
        atoms.insert(atoms.end(), m.begin(), m.end());
        start.push_back(static_cast<int>(atoms.size()));
      }
      molecule_start_.upload(start, stream_);
      molecule_atoms_.upload(atoms, stream_);
      position_backup_.resize(n);
    }
  }

  ~CudaContext() override {
    cudaStreamSynchronize(stream_);
    cudaStreamSynchronize(aux_stream_);
    cudaStreamSynchronize(free_stream_);
    cudaStreamSynchronize(copy_stream_);
    if (step_graph_) cudaGraphExecDestroy(step_graph_);
    cudaEventDestroy(frame_converted_);
    cudaStreamDestroy(copy_stream_);
    cudaEventDestroy(fork_);
    cudaEventDestroy(join_);
    cudaEventDestroy(com_done_);
    cudaEventDestroy(free_join_);
    cudaStreamDestroy(aux_stream_);
    cudaStreamDestroy(free_stream_);
  }

  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  void set_positions(const std::vector<Vec3d>& positions) override {
    check_size(positions, "positions");
    evaluator_.set_positions(positions);
    positions_set_ = true;
    invalidate_forces();
  }

  void set_velocities(const std::vector<Vec3d>& velocities) override {
    check_size(velocities, "velocities");
    v_.upload(velocities, stream_);
  }

  // As the CPU: Maxwell-Boltzmann draws and the COM removal on the host (the same arithmetic), the
  // velocity constraints on the device.
  void set_velocities_to_temperature(double temperature_k, std::uint64_t seed) override {
    check_initial_temperature(temperature_k);
    Coords v = thermal_velocities(host_inverse_mass_, temperature_k, seed != 0 ? seed : seed_);
    if (settings_.remove_cm_motion) remove_com_velocity(v, system_.mass_amu, host_inverse_mass_);
    require_positions("set_velocities_to_temperature");
    v_.upload(v, stream_);
    constrain_velocities(v_.data(), settings_.integrator.constraint_tolerance);
    MDSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void apply_constraints(double tolerance) override {
    require_positions("apply_constraints");
    if (!(tolerance > 0.0)) throw InputError("apply_constraints: tolerance must be positive, got " + quoted_number(tolerance));
    if (system_.constraints.empty()) return;
    cuda::copy_positions_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(n_, positions(), x_old_.data());
    MDSIM_CUDA_CHECK_LAUNCH();
    constrain_positions(x_old_.data(), tolerance);
    constrain_velocities(v_.data(), tolerance);
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
    device_step_.upload(std::vector<long long>{static_cast<long long>(step)}, stream_);
  }

  // Per step: barostat move when due (host sync), the centre-of-mass velocity and (fused
  // LangevinMiddle) the step's normal draws on the auxiliary stream concurrently with the force
  // evaluation (its own graph), then the integrator graph. No host synchronisation and no
  // host<->device copy otherwise.
  void step(int steps) override {
    require_positions("step");
    const bool remove_com = settings_.remove_cm_motion && has_mass_;
    const bool draw_noise = fused_step();
    for (int s = 0; s < steps; ++s) {
      if (settings_.barostat && step_ > 0 && step_ % settings_.barostat->interval_steps == 0) barostat_move();
      if (remove_com || draw_noise) {
        MDSIM_CUDA_CHECK(cudaEventRecord(fork_, stream_));
        MDSIM_CUDA_CHECK(cudaStreamWaitEvent(aux_stream_, fork_, 0));
        if (remove_com)
          cuda::com_velocity_kernel<<<cuda::com_velocity_blocks(n_), cuda::kComVelocityThreads, 0, aux_stream_>>>(
              n_, mass_.data(), v_.data(), inverse_total_mass_, com_partial_.data(), com_done_count_.data(),
              com_velocity_.data());
        if (draw_noise)
          cuda::langevin_noise_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, aux_stream_>>>(
              n_, seed_, device_step_.data(), noise_.data());
        MDSIM_CUDA_CHECK_LAUNCH();
        MDSIM_CUDA_CHECK(cudaEventRecord(com_done_, aux_stream_));
      }
      if (!forces_valid_) evaluator_.compute(false);
      if (remove_com || draw_noise) MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, com_done_, 0));
      launch_step_graph();
      ++step_;
      time_ps_ += settings_.integrator.timestep_ps;
      invalidate_forces();
      if (step_ % kRestartIntervalSteps == 0) evaluator_.reset_neighbor_list();
    }
  }

  // The next evaluation re-sorts the atoms and rebuilds the tile list from the current positions,
  // exactly as a context given these positions through set_positions (a resumed run) does.
  void mark_restart_point() override {
    evaluator_.reset_neighbor_list();
    invalidate_forces();
  }

  std::shared_ptr<HostBufferAllocator> frame_allocator() override { return std::make_shared<PinnedHostAllocator>(); }

  // The frame is converted to float on the main stream into a device staging buffer, then copied to
  // the host arrays on the copy stream; the main stream goes on with the next steps at once (it waits,
  // on the device, only for the previous frame's copy out of the staging buffer before overwriting
  // it). The returned function waits for the copy. Host arrays should be pinned (frame_allocator()).
  std::function<void()> capture_frame(const FrameTarget& target) override {
    require_positions("capture_frame");
    if (target.positions_nm == nullptr) throw RuntimeError("capture_frame: positions are required");
    const bool want_v = target.velocities_nm_per_ps != nullptr, want_f = target.forces_kj_per_mol_nm != nullptr;
    if (want_f) ensure_forces(false);
    const std::size_t floats = 3 * static_cast<std::size_t>(n_);
    const std::size_t arrays = 1 + (want_v ? 1 : 0) + (want_f ? 1 : 0);
    if (frame_staging_.size() < arrays * floats) {
      if (last_frame_copied_) MDSIM_CUDA_CHECK(cudaEventSynchronize(last_frame_copied_.get()));
      frame_staging_.resize(3 * floats);
    }
    if (last_frame_copied_) MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, last_frame_copied_.get(), 0));
    float* staged_pos = frame_staging_.data();
    float* staged_v = want_v ? staged_pos + floats : nullptr;
    float* staged_f = want_f ? staged_pos + (want_v ? 2 : 1) * floats : nullptr;
    cuda::frame_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(
        n_, positions(), v_.data(), evaluator_.device_forces_fixed(), evaluator_.force_stride(), staged_pos, staged_v,
        staged_f);
    MDSIM_CUDA_CHECK_LAUNCH();
    MDSIM_CUDA_CHECK(cudaEventRecord(frame_converted_, stream_));
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, frame_converted_, 0));
    const auto copy = [&](const float* from, float* to) {
      if (to == nullptr) return;
      cuda::count_transfer();
      MDSIM_CUDA_CHECK(cudaMemcpyAsync(to, from, floats * sizeof(float), cudaMemcpyDeviceToHost, copy_stream_));
    };
    copy(staged_pos, target.positions_nm);
    copy(staged_v, target.velocities_nm_per_ps);
    copy(staged_f, target.forces_kj_per_mol_nm);
    std::shared_ptr<CUevent_st> copied = make_shared_event();
    MDSIM_CUDA_CHECK(cudaEventRecord(copied.get(), copy_stream_));
    last_frame_copied_ = copied;
    return [copied] { MDSIM_CUDA_CHECK(cudaEventSynchronize(copied.get())); };
  }

  SimulationState state(const StateRequest& request) override {
    SimulationState st;
    st.step = step_;
    st.time_ps = time_ps_;
    st.has_box = system_.box.has_value();
    if (st.has_box) st.box = box_;
    st.degrees_of_freedom = dof_;
    if (request.positions) st.positions_nm = evaluator_.positions();
    if (request.velocities) st.velocities_nm_per_ps = v_.download(stream_);
    if (request.forces || request.energy) {
      require_positions("state");
      ensure_forces(request.energy);
    }
    if (request.forces) st.forces_kj_per_mol_nm = evaluator_.forces();
    if (request.energy) {
      st.potential = evaluator_.energies();
      st.kinetic_kj_per_mol = kinetic_energy();
      st.temperature_k = dof_ > 0 ? 2.0 * st.kinetic_kj_per_mol / (dof_ * kBoltzmannKjPerMolK) : 0.0;
    }
    return st;
  }

  // The minimiser of kernels/plan/minimizer (L-BFGS on the constraint manifold) on the device
  // backend of kernels/cuda/cuda_minimizer: energies, forces, vector algebra and constraint
  // projections on the GPU (this context's SETTLE and CCMA kernels), from and into the evaluator's
  // device positions. The neighbour list is reset before (so the result depends only on the start
  // positions: bit-reproducible) and after (as set_positions would).
  MinimizationResult minimize(double tolerance, int max_iterations) override {
    require_positions("minimize");
    invalidate_forces();
    evaluator_.reset_neighbor_list();
    CudaMinimizerConstraints* device_constraints = system_.constraints.empty() ? nullptr : this;
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
    l.graphs = 2;
    l.kernels = evaluator_.graph_kernel_count(false) + step_graph_kernels_;
    // On the aux stream: the COM velocity, and the fused step's normal draws.
    l.separate_kernels = (settings_.remove_cm_motion && has_mass_ ? 1 : 0) + (fused_step() ? 1 : 0);
    return l;
  }

  int list_builds() { return evaluator_.num_list_builds(); }

  std::vector<double> barostat_state() const override { return barostat_state_of(barostat_); }
  void set_barostat_state(const std::vector<double>& state) override { restore_barostat_state(barostat_, state); }

 private:
  double4_16a* positions() { return static_cast<double4_16a*>(evaluator_.device_positions()); }

  void check_size(const std::vector<Vec3d>& v, const char* what) const {
    check_particle_count(v.size(), static_cast<std::size_t>(n_), what);
  }

  void require_positions(const char* what) const {
    if (!positions_set_) throw RuntimeError(std::string(what) + ": positions have not been set");
  }

  void invalidate_forces() { forces_valid_ = energy_valid_ = false; }

  void ensure_forces(bool with_energy) {
    if (forces_valid_ && (energy_valid_ || !with_energy)) return;
    evaluator_.compute(with_energy);
    forces_valid_ = true;
    energy_valid_ = with_energy;
  }

  // The largest dynamic shared memory any CCMA launch of this context uses (a per-kernel attribute,
  // so it covers both constraint plans).
  void allow_ccma_shared_bytes(std::size_t bytes) {
    if (bytes <= ccma_shared_attribute_) return;
    MDSIM_CUDA_CHECK(cudaFuncSetAttribute(cuda::ccma_positions_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
    MDSIM_CUDA_CHECK(cudaFuncSetAttribute(cuda::ccma_velocities_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
    MDSIM_CUDA_CHECK(cudaFuncSetAttribute(cuda::ccma_langevin_step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
    ccma_shared_attribute_ = bytes;
  }

  // SETTLE on the auxiliary stream concurrently with CCMA on the main one (disjoint atoms); both
  // joined back into the main stream. Works alike when the main stream is being captured.
  template <typename SettleLaunch, typename CcmaLaunch>
  void run_constraints(const DeviceConstraints& c, SettleLaunch&& settle, CcmaLaunch&& ccma) {
    if (c.num_settle > 0 && c.num_ccma > 0) {
      MDSIM_CUDA_CHECK(cudaEventRecord(fork_, stream_));
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(aux_stream_, fork_, 0));
      settle(aux_stream_);
      MDSIM_CUDA_CHECK(cudaEventRecord(join_, aux_stream_));
      ccma(stream_);
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
    } else if (c.num_settle > 0) {
      settle(stream_);
    } else if (c.num_ccma > 0) {
      ccma(stream_);
    }
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // Positions `pos` (in place) onto the constraint surface of plan `c` along the constraint vectors of
  // `reference`; `passes` CCMA launches (see ccma_passes_).
  void constrain_positions(DeviceConstraints& c, const Vec3d* reference, double4_16a* pos, double tolerance,
                           int passes) {
    const cuda::SettleWater* waters = c.settle.data();
    const int nw = c.num_settle;
    const cuda::CcmaView view = c.view();
    const std::size_t shared = c.shared_bytes;
    const int blocks = c.ccma_blocks, threads = c.ccma_threads;
    run_constraints(
        c,
        [&](cudaStream_t s) {
          cuda::settle_positions_kernel<<<blocks_for(nw), cuda::kAtomThreads, 0, s>>>(nw, waters, reference, pos);
        },
        [&](cudaStream_t s) {
          for (int pass = 0; pass < passes; ++pass)
            cuda::ccma_positions_kernel<<<blocks, threads, shared, s>>>(view, reference, pos, tolerance,
                                                                        ConstraintPlan::kMaxIterations, pass == 1);
        });
  }

  // Velocities `v` (in place): components along the constraints of plan `c` at the geometry `pos`
  // removed.
  void constrain_velocities(DeviceConstraints& c, const double4_16a* pos, Vec3d* v, double tolerance, int passes) {
    const cuda::SettleWater* waters = c.settle.data();
    const int nw = c.num_settle;
    const cuda::CcmaView view = c.view();
    const std::size_t shared = c.shared_bytes;
    const int blocks = c.ccma_blocks, threads = c.ccma_threads;
    run_constraints(
        c,
        [&](cudaStream_t s) {
          cuda::settle_velocities_kernel<<<blocks_for(nw), cuda::kAtomThreads, 0, s>>>(nw, waters, pos, v);
        },
        [&](cudaStream_t s) {
          for (int pass = 0; pass < passes; ++pass)
            cuda::ccma_velocities_kernel<<<blocks, threads, shared, s>>>(view, pos, v, tolerance,
                                                                         ConstraintPlan::kMaxIterations, pass == 1);
        });
  }

  // The dynamics' constraints: the context's positions along the constraint vectors of `reference`;
  // velocities at the context's positions.
  void constrain_positions(const Vec3d* reference, double tolerance) {
    constrain_positions(constraints_, reference, positions(), tolerance, ccma_passes_);
  }
  void constrain_velocities(Vec3d* v, double tolerance) {
    constrain_velocities(constraints_, positions(), v, tolerance, ccma_passes_);
  }

  // CudaMinimizerConstraints: Vec3d arrays through a double4_16a copy (minimizer_positions_), the
  // layout the constraint kernels take positions in. CCMA runs both passes in either precision (every
  // block to the CPU's global iteration count; the minimiser's tolerances are 1e-10 and 1e-9).
  void retract(const Vec3d* reference, Vec3d* x, double tolerance) override {
    double4_16a* scratch = minimizer_scratch();
    cuda::vec3_to_positions_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(n_, x, scratch);
    MDSIM_CUDA_CHECK_LAUNCH();
    constrain_positions(unit_constraints_, reference, scratch, tolerance, 2);
    cuda::copy_positions_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(n_, scratch, x);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  void project(const Vec3d* at, Vec3d* v, double tolerance) override {
    double4_16a* scratch = minimizer_scratch();
    cuda::vec3_to_positions_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(n_, at, scratch);
    MDSIM_CUDA_CHECK_LAUNCH();
    constrain_velocities(unit_constraints_, scratch, v, tolerance, 2);
  }

  void constrain(Vec3d* x, double tolerance) override {
    double4_16a* scratch = minimizer_scratch();
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(x_old_.data(), x, static_cast<std::size_t>(n_) * sizeof(Vec3d),
                                     cudaMemcpyDeviceToDevice, stream_));
    cuda::vec3_to_positions_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(n_, x, scratch);
    MDSIM_CUDA_CHECK_LAUNCH();
    constrain_positions(constraints_, x_old_.data(), scratch, tolerance, 2);
    cuda::copy_positions_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(n_, scratch, x);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  double4_16a* minimizer_scratch() {
    minimizer_positions_.resize(static_cast<std::size_t>(n_));  // allocated on first use (no copy)
    return minimizer_positions_.data();
  }

  // Steps take the fused LangevinMiddle path (langevin_step_kernels.cuh), whose normal draws
  // langevin_noise_kernel makes beforehand, concurrently with the force evaluation.
  bool fused_step() const {
    return settings_.integrator.type == IntegratorType::LangevinMiddle && !system_.constraints.empty() && fused_langevin_;
  }

  // The integrator's kernels for one step (forces of the current positions already in the
  // evaluator's buffer), as CpuContext::step after ensure_forces.
  void enqueue_step() {
    const IntegratorConfig& in = settings_.integrator;
    const double dt = in.timestep_ps, inverse_dt = 1.0 / dt;
    const double tolerance = in.constraint_tolerance;
    const bool constrained = !system_.constraints.empty();
    double4_16a* pos = positions();
    const unsigned long long* force = evaluator_.device_forces_fixed();
    const int stride = evaluator_.force_stride();
    const int blocks = blocks_for(n_);
    // The centre-of-mass velocity is computed before the graph runs (step()).
    const Vec3d* com = settings_.remove_cm_motion && has_mass_ ? com_velocity_.data() : nullptr;
    if (fused_step()) {
      // Waters, free atoms and CCMA blocks on three streams side by side (the waters' kernel is the
      // longest: 26.6 us at 188k atoms, against 17.3 us for CCMA and 5.3 us for the free atoms); the
      // step counter advances once all have read it.
      const cuda::LangevinStepArgs args{force,
                                        stride,
                                        inverse_mass_.data(),
                                        com,
                                        dt,
                                        0.5 * dt,
                                        inverse_dt,
                                        langevin_coefficients(in.friction_per_ps, dt, in.temperature_k),
                                        pos,
                                        v_.data(),
                                        noise_.data()};
      DeviceConstraints& c = constraints_;
      MDSIM_CUDA_CHECK(cudaEventRecord(fork_, stream_));
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(aux_stream_, fork_, 0));
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(free_stream_, fork_, 0));
      if (c.num_settle > 0)
        cuda::settle_langevin_step_kernel<<<blocks_for(c.num_settle), cuda::kAtomThreads, 0, aux_stream_>>>(
            c.num_settle, c.settle.data(), args);
      MDSIM_CUDA_CHECK(cudaEventRecord(join_, aux_stream_));
      if (num_free_atoms_ > 0)
        cuda::langevin_free_atoms_step_kernel<<<blocks_for(num_free_atoms_), cuda::kAtomThreads, 0, free_stream_>>>(
            num_free_atoms_, free_atoms_.data(), args);
      MDSIM_CUDA_CHECK(cudaEventRecord(free_join_, free_stream_));
      if (c.num_ccma > 0)
        cuda::ccma_langevin_step_kernel<<<c.ccma_blocks, c.ccma_threads, c.shared_bytes, stream_>>>(
            c.view(), args, tolerance, ConstraintPlan::kMaxIterations);
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
      MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, free_join_, 0));
      cuda::advance_step_kernel<<<1, 1, 0, stream_>>>(device_step_.data());
    } else if (in.type == IntegratorType::LangevinMiddle) {
      const LangevinCoefficients coef = langevin_coefficients(in.friction_per_ps, dt, in.temperature_k);
      cuda::langevin_kick_kernel<<<blocks, cuda::kAtomThreads, 0, stream_>>>(n_, v_.data(), inverse_mass_.data(), force,
                                                                             stride, dt, com);
      if (constrained) constrain_velocities(v_.data(), tolerance);
      cuda::langevin_drift_kernel<<<blocks, cuda::kAtomThreads, 0, stream_>>>(
          n_, pos, v_.data(), x_old_.data(), x_unconstrained_.data(), inverse_mass_.data(), 0.5 * dt, coef, seed_,
          device_step_.data());
      if (constrained) {
        constrain_positions(x_old_.data(), tolerance);
        cuda::velocity_correction_kernel<<<blocks, cuda::kAtomThreads, 0, stream_>>>(
            n_, pos, v_.data(), x_unconstrained_.data(), inverse_mass_.data(), inverse_dt, device_step_.data());
      } else {
        cuda::advance_step_kernel<<<1, 1, 0, stream_>>>(device_step_.data());
      }
    } else {
      cuda::verlet_kick_drift_kernel<<<blocks, cuda::kAtomThreads, 0, stream_>>>(
          n_, pos, v_.data(), x_old_.data(), inverse_mass_.data(), force, stride, dt, com);
      if (constrained) constrain_positions(x_old_.data(), tolerance);
      cuda::leapfrog_velocity_kernel<<<blocks, cuda::kAtomThreads, 0, stream_>>>(
          n_, pos, v_.data(), x_old_.data(), inverse_mass_.data(), inverse_dt, device_step_.data());
    }
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  // The step's kernels as one CUDA graph, captured on first use (every pointer and parameter in it
  // is fixed for the context's lifetime; the step number is read from device memory).
  void launch_step_graph() {
    const void* pos = evaluator_.device_positions();
    const void* force = evaluator_.device_forces_fixed();
    if (step_graph_ && (pos != graph_positions_ || force != graph_forces_)) {
      MDSIM_CUDA_CHECK(cudaGraphExecDestroy(step_graph_));
      step_graph_ = nullptr;
    }
    if (!step_graph_) {
      cudaGraph_t graph = nullptr;
      MDSIM_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
      try {
        enqueue_step();
      } catch (...) {
        cudaStreamEndCapture(stream_, &graph);
        if (graph) cudaGraphDestroy(graph);
        throw;
      }
      MDSIM_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
      step_graph_kernels_ = cuda::count_kernel_nodes(graph);
      const cudaError_t err = cudaGraphInstantiate(&step_graph_, graph, 0);
      cudaGraphDestroy(graph);
      MDSIM_CUDA_CHECK(err);
      graph_positions_ = pos;
      graph_forces_ = force;
    }
    MDSIM_CUDA_CHECK(cudaGraphLaunch(step_graph_, stream_));
  }

  // Requires forces at the current positions (Verlet's on-step velocity estimate).
  double kinetic_energy() {
    const Vec3d* v = v_.data();
    if (settings_.integrator.type == IntegratorType::Verlet) {
      cuda::shifted_velocity_kernel<<<blocks_for(n_), cuda::kAtomThreads, 0, stream_>>>(
          n_, v_.data(), inverse_mass_.data(), evaluator_.device_forces_fixed(), evaluator_.force_stride(),
          0.5 * settings_.integrator.timestep_ps, v_scratch_.data());
      MDSIM_CUDA_CHECK_LAUNCH();
      if (!system_.constraints.empty())
        constrain_velocities(v_scratch_.data(), settings_.integrator.constraint_tolerance);
      v = v_scratch_.data();
    }
    cuda::twice_kinetic_energy_kernel<<<1, cuda::kReduceThreads, 0, stream_>>>(n_, mass_.data(), v, scalar_.data());
    MDSIM_CUDA_CHECK_LAUNCH();
    return 0.5 * scalar_.download(stream_)[0];
  }

  // MonteCarloBarostat::attempt with the positions on the device: the barostat's proposal
  // (random numbers, trial volume), the molecule centres scaled on the device, its acceptance rule and
  // move-size adaptation.
  void barostat_move() {
    ensure_forces(true);
    const double current_energy = evaluator_.energies().total;
    const MonteCarloBarostat::Proposal proposal = barostat_->propose(box_, seed_, step_);

    double4_16a* pos = positions();
    MDSIM_CUDA_CHECK(cudaMemcpyAsync(position_backup_.data(), pos, static_cast<std::size_t>(n_) * sizeof(double4_16a),
                                     cudaMemcpyDeviceToDevice, stream_));
    cuda::scale_molecule_centres_kernel<<<blocks_for(num_molecules_), cuda::kAtomThreads, 0, stream_>>>(
        num_molecules_, molecule_start_.data(), molecule_atoms_.data(), pos, box_, proposal.length_scale);
    MDSIM_CUDA_CHECK_LAUNCH();
    Boxd trial_box = box_;
    trial_box.a *= proposal.length_scale;
    trial_box.b *= proposal.length_scale;
    trial_box.c *= proposal.length_scale;
    evaluator_.set_box(trial_box);
    evaluator_.compute(true);
    if (barostat_->decide(proposal, current_energy, evaluator_.energies().total)) {
      box_ = trial_box;
      forces_valid_ = energy_valid_ = true;  // the trial evaluation is of the new state
    } else {
      MDSIM_CUDA_CHECK(cudaMemcpyAsync(pos, position_backup_.data(), static_cast<std::size_t>(n_) * sizeof(double4_16a),
                                       cudaMemcpyDeviceToDevice, stream_));
      evaluator_.set_box(box_);
      invalidate_forces();
    }
  }

  System system_;
  DynamicsSettings settings_;
  CudaForceEvaluator evaluator_;
  ConstraintPlan constraint_plan_;  // validation, the minimiser's start projection and final check
  std::uint64_t seed_;
  int dof_;
  int n_;
  cudaStream_t stream_ = nullptr, aux_stream_ = nullptr, free_stream_ = nullptr;  // free_stream_: the fused step's free atoms
  cudaEvent_t fork_ = nullptr, join_ = nullptr, com_done_ = nullptr, free_join_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;  // trajectory frames device -> host
  cudaEvent_t frame_converted_ = nullptr;
  std::shared_ptr<CUevent_st> last_frame_copied_;
  DeviceBuffer<float> frame_staging_;
  cudaGraphExec_t step_graph_ = nullptr;
  int step_graph_kernels_ = 0;
  const void* graph_positions_ = nullptr;
  const void* graph_forces_ = nullptr;

  std::vector<double> host_inverse_mass_;
  bool has_mass_ = false;
  double inverse_total_mass_ = 0.0;
  DeviceBuffer<double> mass_, inverse_mass_, scalar_;
  DeviceBuffer<Vec3d> v_, x_old_, x_unconstrained_, v_scratch_, com_velocity_, com_partial_;
  DeviceBuffer<unsigned int> com_done_count_;
  DeviceBuffer<long long> device_step_;

  DeviceConstraints constraints_;       // system masses
  DeviceConstraints unit_constraints_;  // unit masses (the minimiser), when the system has constraints
  std::size_t ccma_shared_attribute_ = 0;
  DeviceBuffer<double4_16a> minimizer_positions_;  // the minimiser's constraint operations
  CudaMinimizationStats minimization_stats_;
  // CCMA passes: every block iterates until its own coupled groups converge to the tolerance; in double
  // precision a second pass continues every block to the largest block's iteration count, which is the
  // CPU's global count, so that the platforms agree to round-off. Mixed precision stops after the first.
  int ccma_passes_ = 2;
  bool fused_langevin_ = false;     // LangevinMiddle steps through langevin_step_kernels.cuh
  DeviceBuffer<Vec3d> noise_;       // the fused step's normal draws (langevin_noise_kernel)
  int num_free_atoms_ = 0;          // atoms in no constraint
  DeviceBuffer<int> free_atoms_;

  int num_molecules_ = 0;
  DeviceBuffer<int> molecule_start_, molecule_atoms_;
  DeviceBuffer<double4_16a> position_backup_;
  std::optional<MonteCarloBarostat> barostat_;  // proposals, acceptance, adaptation, state

  bool forces_valid_ = false, energy_valid_ = false, positions_set_ = false;
  Boxd box_{};
  std::int64_t step_ = 0;
  double time_ps_ = 0.0;
};

}  // namespace

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
