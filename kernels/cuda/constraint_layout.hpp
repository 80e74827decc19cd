// The device layout of a ConstraintPlan (platform/constraint_plan.hpp) that the CUDA constraint
// kernels read: rigid waters for SETTLE and CCMA's data packed into thread blocks of whole coupled
// groups. Plain data, host and device alike (cuda_constraints.cu builds it).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "physics/vec3.hpp"

namespace mdsim::cuda {

struct SettleWater {
  int o, h1, h2;
  double mass_o, mass_h;        // amu (1 / inverse mass, as the CPU computes them)
  double inv_o, inv_h1, inv_h2; // 1/amu
  double oh, hh;                // nm
};

// A rigid water's average virtual site (a 4-site water's M: its parents are members of the water), which the
// water's fused LangevinMiddle step spreads, places and clears (settle_langevin_step_kernel), so that the
// evaluation before the step need not (CudaForceEvaluator::leave_sites_to_steps). One per SettleWater, in
// the same order; particle -1: the water has none.
struct SettleSite {
  int particle;
  int num_parents;          // 2 (TwoParticleAverage) or 3 (ThreeParticleAverage)
  int member_of_parent[3];  // the water member (0 O, 1 H1, 2 H2) of each parent
  double w[3];              // the parents' weights (physics/virtual_sites.hpp: average_site_position)
};

// Device view of the CCMA data (built on the host by cuda_constraints.cu from the CPU's construction).
// Constraints are numbered block by block (ascending original order within a block); every index
// below a block's data is local to the block (constraint k - constraint_begin, atom slot s -
// atom_begin). The working set lives in shared memory when use_shared, otherwise in the global
// scratch arrays (indexed like the constraint and atom arrays).
struct CcmaView {
  int blocks = 0;
  const int* block_constraint_start = nullptr;  // blocks + 1
  const int* block_atom_start = nullptr;        // blocks + 1
  const int2* atoms = nullptr;           // (a, b) per constraint, system atom indices
  const int2* local = nullptr;           // (a, b) per constraint, local atom slots
  const double* distance = nullptr;      // nm
  const double* reduced_mass = nullptr;  // 1 / (w_a + w_b)
  const int* row_start = nullptr;        // inverse coupling matrix: CSR rows (global entry offsets),
  const int* column = nullptr;           // local columns, in the CPU's element order
  const double* value = nullptr;
  const int* atom_index = nullptr;       // system index per touched atom
  const double* atom_inverse_mass = nullptr;
  const int* atom_start = nullptr;       // CSR into atom_entry (global entry offsets)
  const int* atom_entry = nullptr;       // 2 k (the atom is the a of local constraint k) or 2 k + 1 (the b)
  bool use_shared = false;
  Vec3d* x_scratch = nullptr;            // global working set when !use_shared
  Vec3d* r_ref_scratch = nullptr;
  double* r_ref2_scratch = nullptr;
  double* delta_scratch = nullptr;
  double* delta_tmp_scratch = nullptr;
  int* block_iterations = nullptr;       // n_b of pass 1, per block
  int* iterations = nullptr;             // [0] positions, [1] velocities: N of the last solve
};

// Limits of a CCMA block that one warp takes (ccma_warp.cuh): lanes, and register slots for a row of
// the inverse coupling matrix and for an atom's constraints.
constexpr int kCcmaWarpLanes = 32;
constexpr int kCcmaWarpMaxRow = 8;
constexpr int kCcmaWarpMaxEntries = 8;

// Dynamic shared memory for a block of `atoms` touched atoms and `constraints` constraints.
inline std::size_t ccma_shared_bytes(int atoms, int constraints) {
  return sizeof(double) * (3 * static_cast<std::size_t>(atoms) + 6 * static_cast<std::size_t>(constraints));
}

}  // namespace mdsim::cuda
