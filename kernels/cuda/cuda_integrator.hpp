// The CUDA context's integrators (host-only header): LangevinMiddle and Verlet steps of the
// evaluator's device positions, as CpuContext::step does them, with the kernels of
// integrator_kernels.cuh and langevin_step_kernels.cuh. A step is one CUDA graph; the centre-of-mass
// velocity (and, for the fused LangevinMiddle step, the normal draws) run beside the force evaluation
// on the aux stream. Integration is in double precision in both precision modes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_constraints.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "kernels/cuda/cuda_streams.hpp"
#include "physics/integrator_steps.hpp"
#include "physics/vec3.hpp"
#include "platform/constraint_plan.hpp"
#include "platform/context.hpp"
#include "model/system.hpp"

namespace mdsim {

namespace cuda {
struct ReplicaDynamics;  // replica_dynamics.cuh
}  // namespace cuda

// The dynamics' device arrays for the context's lifetime (the positions are the force evaluator's):
// the state the context's parts share, the integrator's work arrays, and the masses on the host.
struct DynamicsArrays {
  // Velocities zero, step 0. Synchronises the stream. A replica batch's `system` holds `replicas` copies of one
  // System (model/system_copies): the centre-of-mass arrays hold one entry (or block of partials) per replica.
  DynamicsArrays(const System& system, cudaStream_t stream, int replicas = 1);

  int n = 0;
  int replicas = 1;
  std::vector<double> host_inverse_mass;  // 1/amu; 0 for massless particles
  bool has_mass = false;                  // total mass > 0
  double inverse_total_mass = 0.0;        // of one replica
  cuda::DeviceBuffer<double> mass, inverse_mass;
  cuda::DeviceBuffer<Vec3d> v;                // nm/ps
  cuda::DeviceBuffer<Vec3d> x_old;            // a step's start positions (the position constraints'
                                              // reference); scratch outside a step
  cuda::DeviceBuffer<Vec3d> x_unconstrained;  // LangevinMiddle: the positions before their constraints
  cuda::DeviceBuffer<Vec3d> v_scratch;        // Verlet's on-step velocity estimate
  cuda::DeviceBuffer<Vec3d> com_velocity, com_partial;  // the centre-of-mass velocity; its block partials
                                                        // (per replica: [r], [r kComVelocityMaxBlocks ...])
  cuda::DeviceBuffer<unsigned int> com_done_count;
  cuda::DeviceBuffer<double> scalar;          // the kinetic energy's reduction
  cuda::DeviceBuffer<long long> step;         // the step number random numbers are keyed by; a step
                                              // advances it
  cuda::DeviceBuffer<unsigned int> step_done_count;  // langevin_noise_kernel's finished blocks (0 between launches)
};

// Work enqueued on a stream, captured once into a CUDA graph and replayed; captured again when the
// evaluator's device positions or forces, whose addresses are baked into it, have moved, or when
// `generation` (the evaluator's graph generation, for a graph holding its evaluation) has changed.
class StepGraph {
 public:
  StepGraph() = default;
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  template <typename Enqueue>
  void launch(cudaStream_t stream, const void* positions, const void* forces, std::uint64_t generation,
              Enqueue&& enqueue);
  int kernels() const { return kernels_; }  // kernel nodes of the graph captured last
  void reset();  // captured again at the next launch (a parameter baked into it changed)

 private:
  cudaGraphExec_t exec_ = nullptr;
  int kernels_ = 0;
  const void* positions_ = nullptr;
  const void* forces_ = nullptr;
  std::uint64_t generation_ = 0;
};

class CudaIntegrator {
 public:
  // constraints: the context's (system masses) plan of `plan`.
  CudaIntegrator(const System& system, const DynamicsSettings& settings, const CudaOptions& options,
                 std::uint64_t seed, const ConstraintPlan& plan, CudaForceEvaluator& evaluator,
                 const CudaStreams& streams, DynamicsArrays& atoms, CudaConstraints& constraints);
  CudaIntegrator(const CudaIntegrator&) = delete;
  CudaIntegrator& operator=(const CudaIntegrator&) = delete;

  // Allows every later launch of the fused step's CCMA kernel `bytes` of dynamic shared memory.
  static void allow_ccma_shared_bytes(std::size_t bytes);

  // One step in two parts around the force evaluation, with no host synchronisation and no copy:
  // launch_side_kernels forks the centre-of-mass velocity and (fused step) the step's normal draws onto
  // aux, to run beside the forces; launch_step joins them and launches the step graph (forces of the
  // current positions in the evaluator's buffer).
  void launch_side_kernels();
  void launch_step();
  // The same three parts (side kernels, the evaluator's steady evaluation, the step) as one graph, for
  // steps whose evaluations are steady (CudaForceEvaluator::next_evaluations_are_steady): one launch,
  // and no join and fork between two graphs. `steps`: 1 or steps_per_graph().
  void launch_steps_with_evaluation(int steps);
  // The most steps one such graph holds: kStepsPerGraph for the fused step (it leaves the force sums
  // zero for the next evaluation in the graph), otherwise 1. Between graphs the GPU waits for the whole
  // of the last step before it starts the next graph's first kernels; inside one, each kernel waits
  // only for what it needs.
  int steps_per_graph() const { return fused_ ? kStepsPerGraph : 1; }
  static constexpr int kStepsPerGraph = 4;
  // Temperature, friction, time step and constraint tolerance from the next step on (checked by the context:
  // the type stays).
  void set_config(const IntegratorConfig& config);
  void set_seed(std::uint64_t seed);  // the noise kernels' key, baked into the step graphs

  // Kinetic energy (kJ/mol) as the CPU defines it (Verlet: of the on-step velocity estimate, so it
  // needs the forces of the current positions), one per replica of a batch (each as alone). Synchronises.
  std::vector<double> kinetic_energies();

  // A replica batch (CudaOptions::replicas > 1): each replica's bath temperature (K) and seed, read by the step
  // graphs from device memory (no recapture). The configuration's temperature and seed are every replica's
  // until set.
  void set_replica_temperature(int replica, double temperature_k);
  void set_replica_seed(int replica, std::uint64_t seed);
  // A batch's per-replica bath coefficients on the device (a ladder exchanger rewrites them there), those of a bath at
  // temperature_k (what set_replica_temperature uploads), and the host's record of a replica's temperature after such
  // a rewrite (no upload: set_replica_temperature with the recorded temperature then uploads nothing either).
  LangevinCoefficients* device_replica_coefficients() { return replica_coefficients_.data(); }
  LangevinCoefficients replica_bath_coefficients(double temperature_k) const;
  void record_replica_temperature(int replica, double temperature_k);
  // Velocities of `count` atoms from `first` times `factor` (Context::scale_velocities), on the main stream.
  void scale_velocities(int first, int count, double factor);

  // What the last step launched: graphs, their kernel nodes (for the two-part step: the step graph's),
  // kernels launched on their own (launch_side_kernels).
  // steps_merged(): the steps in one graph of launch_steps_with_evaluation when the last step ran that
  // way (steps_per_graph() once such a graph has been captured, 1 before), 0 after the two-part step;
  // graph_kernels(): kernel nodes per step.
  int steps_merged() const {
    if (last_steps_merged_ == 0) return 0;
    return multi_step_graph_.kernels() > 0 ? steps_per_graph() : 1;
  }
  int graph_kernels() const {
    const int merged = steps_merged();
    if (merged == 0) return graph_.kernels();
    return merged == 1 ? merged_graph_.kernels() : multi_step_graph_.kernels() / merged;
  }
  int side_kernels() const { return steps_merged() > 0 ? 0 : (remove_com_ ? 1 : 0) + (fused_ ? 1 : 0); }

 private:
  bool has_side_kernels() const { return remove_com_ || fused_; }
  cuda::ReplicaDynamics replica_dynamics() const;
  void upload_replica_coefficients();
  void enqueue_side_kernels(bool noise);
  void enqueue_noise();
  void enqueue_noise_after_preparation();
  void enqueue_step_after_side_kernels();
  double4_16a* positions() { return static_cast<double4_16a*>(evaluator_.device_positions()); }
  // The dynamics' constraints: the positions along the constraint vectors of `reference`; velocities
  // at the positions.
  void constrain_positions(const Vec3d* reference, double tolerance);
  void constrain_velocities(Vec3d* v, double tolerance);

  // after_steady_evaluation: the evaluation before it was a steady one (it left the waters' sites to the step).
  void enqueue_step(bool after_steady_evaluation);
  void enqueue_fused_langevin_step(bool spread_water_sites);
  void enqueue_langevin_step();
  void enqueue_verlet_step();

  IntegratorConfig config_;
  bool constrained_;
  bool remove_com_;  // the centre-of-mass velocity is removed in the kick
  int remove_com_interval_;  // at steps that are multiples of this (DynamicsSettings::remove_cm_motion_interval)
  bool fused_;       // LangevinMiddle steps through langevin_step_kernels.cuh
  std::uint64_t seed_;
  int ccma_passes_;
  int n_;
  CudaForceEvaluator& evaluator_;
  const CudaStreams& streams_;
  DynamicsArrays& atoms_;
  CudaConstraints& constraints_;

  int replicas_ = 1;                 // a batch's replicas (CudaOptions::replicas)
  std::vector<double> replica_temperature_k_;
  std::vector<std::uint64_t> replica_seed_;
  cuda::DeviceBuffer<LangevinCoefficients> replica_coefficients_;  // a batch's, per replica
  cuda::DeviceBuffer<std::uint64_t> replica_seeds_;
  cuda::DeviceBuffer<Vec3d> noise_;  // the fused step's normal draws (langevin_noise_kernel)
  int num_free_atoms_ = 0;           // atoms in no constraint (the fused step's third kernel)
  cuda::DeviceBuffer<cuda::SettleSite> settle_sites_;  // the fused step's rigid-water sites (empty: none)
  cuda::DeviceBuffer<int> free_atoms_;
  StepGraph graph_;
  StepGraph merged_graph_;      // launch_steps_with_evaluation's, one step
  StepGraph multi_step_graph_;  // and steps_per_graph() steps
  int last_steps_merged_ = 0;
};

}  // namespace mdsim
