// Constraints of the CUDA context on the device (host-only header): a ConstraintPlan's SETTLE waters
// and CCMA blocks (constraint_layout.hpp) with the launches of constraint_kernels.cuh, and the
// minimiser's constraint operations (CudaMinimizerConstraints) on them. The plan is the platform-
// neutral one (platform/constraint_plan.hpp), so both platforms run the same iteration.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/cuda/constraint_layout.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_forces.hpp"
#include "kernels/cuda/cuda_minimizer.hpp"
#include "kernels/cuda/cuda_streams.hpp"
#include "physics/vec3.hpp"
#include "platform/constraint_plan.hpp"
#include "model/system.hpp"

namespace mdsim {

// CCMA launches per solve of the dynamics: every block iterates until its own coupled groups converge
// to the tolerance; in double precision a second pass continues every block to the largest block's
// iteration count, which is the CPU's global count, so that the platforms agree to round-off. Mixed
// precision stops after the first.
inline int dynamics_ccma_passes(const CudaOptions& options) { return options.double_precision ? 2 : 1; }

// The device's opt-in shared memory per block (bounds a CCMA block's working set in shared memory).
int max_shared_bytes_per_block(int device);

// One ConstraintPlan on the device. SETTLE runs on the aux stream concurrently with CCMA on the main
// one (disjoint atoms), both joined back into main.
class CudaConstraints {
 public:
  // Uploads the plan (synchronises main). max_shared_bytes: max_shared_bytes_per_block. atoms_per_replica > 0: the
  // plan of a replica batch's System (model/system_copies), whose CCMA blocks each hold one replica's groups.
  CudaConstraints(const ConstraintPlan& plan, const CudaStreams& streams, int max_shared_bytes,
                  int atoms_per_replica = 0);
  CudaConstraints(const CudaConstraints&) = delete;
  CudaConstraints& operator=(const CudaConstraints&) = delete;

  // Allows every later launch of the CCMA kernels of constraint_kernels.cuh `bytes` of dynamic shared
  // memory (a per-kernel attribute).
  static void allow_shared_bytes(std::size_t bytes);

  // Positions `pos` (in place) onto the constraint surface along the constraint vectors of
  // `reference`, with `passes` CCMA launches (dynamics_ccma_passes, or 2).
  void constrain_positions(const Vec3d* reference, double4_16a* pos, double tolerance, int passes);
  // Velocities `v` (in place): their components along the constraints at the geometry `pos` removed.
  void constrain_velocities(const double4_16a* pos, Vec3d* v, double tolerance, int passes);

  int num_settle() const { return num_settle_; }
  int num_ccma() const { return num_ccma_; }
  const cuda::SettleWater* settle_waters() const { return settle_.data(); }
  // Dynamic shared memory of a CCMA launch (0: the working sets are in global scratch).
  std::size_t shared_bytes() const { return shared_bytes_; }
  // Whether every CCMA block has a thread for each of its atoms (what the fused LangevinMiddle step
  // needs).
  bool thread_per_block_atom() const { return max_block_atoms_ <= ccma_threads_; }

  // Whether the CCMA blocks are packed for the warp kernels (every coupled group within
  // kCcmaWarpLanes constraints and atoms; ccma_warp.cuh), and the longest matrix row and most
  // constraints on an atom, which pick the kernel's register slots.
  bool warp_blocks() const { return warp_blocks_; }
  int warp_row() const { return warp_row_; }
  int warp_entries() const { return warp_entries_; }

  // A CCMA kernel's launch over this plan: one thread block per CCMA block.
  struct CcmaLaunch {
    int blocks = 0, threads = 0;
    std::size_t shared_bytes = 0;
    cuda::CcmaView view;
  };
  CcmaLaunch ccma_launch();

 private:
  template <typename SettleLaunch, typename CcmaLaunchFn>
  void run(SettleLaunch&& settle, CcmaLaunchFn&& ccma);

  const CudaStreams& streams_;
  int num_settle_ = 0, num_ccma_ = 0, ccma_blocks_ = 0, ccma_threads_ = 64, max_block_atoms_ = 0;
  cuda::DeviceBuffer<cuda::SettleWater> settle_;
  cuda::DeviceBuffer<int2> atoms_, local_;
  cuda::DeviceBuffer<double> distance_, reduced_mass_, value_, atom_inverse_mass_, r_ref2_, delta_, delta_tmp_;
  cuda::DeviceBuffer<int> block_constraint_start_, block_atom_start_, block_iterations_;
  cuda::DeviceBuffer<int> row_start_, column_, atom_index_, atom_start_, atom_entry_, iterations_;
  cuda::DeviceBuffer<Vec3d> x_scratch_, r_ref_;
  bool use_shared_ = false, warp_blocks_ = false;
  int warp_row_ = 0, warp_entries_ = 0;
  std::size_t shared_bytes_ = 0;
};

// Layout conversions on `stream`, one thread per atom: the evaluator's double4_16a positions to
// Vec3d, and back.
void copy_positions(int n, const double4_16a* pos, Vec3d* out, cudaStream_t stream);
void vec3_to_positions(int n, const Vec3d* x, double4_16a* pos, cudaStream_t stream);

// The minimiser's constraint operations (cuda_minimizer.hpp) on the device, enqueued on main: the
// retraction and the tangent projections with a unit-mass plan of the system's constraints
// (ConstraintPlan decides SETTLE and the CCMA preconditioner from the masses, as cpu_minimizer's
// projector does), the start positions' projection with the context's system-mass plan. Vec3d arrays
// go through a double4_16a copy, the layout the constraint kernels take positions in. CCMA runs both
// passes in either precision (every block to the CPU's global iteration count; the minimiser's
// tolerances are 1e-10 and 1e-9). For a system with constraints.
class CudaMinimizerConstraintSolver final : public CudaMinimizerConstraints {
 public:
  // system_masses: the context's plan; reference_scratch: n Vec3d the operations may overwrite.
  CudaMinimizerConstraintSolver(const System& system, CudaConstraints& system_masses, const CudaStreams& streams,
                                int max_shared_bytes, Vec3d* reference_scratch);

  const CudaConstraints& unit_masses() const { return unit_masses_; }

  void retract(const Vec3d* reference, Vec3d* x, double tolerance) override;
  void project(const Vec3d* at, Vec3d* v, double tolerance) override;
  void constrain(Vec3d* x, double tolerance) override;

 private:
  double4_16a* scratch();

  int n_;
  cudaStream_t stream_;
  CudaConstraints unit_masses_;
  CudaConstraints& system_masses_;
  Vec3d* reference_scratch_;
  cuda::DeviceBuffer<double4_16a> positions_;  // allocated on first use
};

}  // namespace mdsim
