// CUDA platform: constraints on the device (see cuda_constraints.hpp). The CPU reference
// (kernels/cpu/cpu_constraints.cpp) is the specification.
#include "kernels/cuda/cuda_constraints.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "kernels/cuda/constraint_kernels.cuh"
#include "kernels/cuda/device_atoms.cuh"

namespace mdsim {

namespace {

using cuda::atom_blocks;

// CCMA constraints are packed into thread blocks of whole coupled groups, about this many each.
constexpr int kCcmaBlockConstraints = 64;
// The plan in the device layout, on the host: the CCMA data in the layout of cuda::CcmaView
// (constraints numbered block by block).
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
  int max_row = 0, max_entries = 0;  // matrix entries in a row; constraints on one atom
  bool warp_blocks = false;          // packed for the warp kernels (ccma_warp.cuh)
  std::size_t max_block_shared_bytes = 0;
  int num_ccma() const { return static_cast<int>(ccma_atoms.size()); }
  int num_blocks() const { return static_cast<int>(block_constraint_start.size()) - 1; }
};

std::vector<cuda::SettleWater> settle_waters(const ConstraintPlan& host) {
  std::vector<cuda::SettleWater> waters;
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
    waters.push_back(s);
  }
  return waters;
}

// A coupled group's size as the warp kernels see it.
struct GroupShape {
  int constraints = 0, atoms = 0, longest_row = 0, most_entries = 0;
};

GroupShape group_shape(const ConstraintPlan& host, const std::vector<int>& group) {
  GroupShape shape;
  shape.constraints = static_cast<int>(group.size());
  std::map<int, int> per_atom;
  for (int c : group) {
    const ConstraintPlan::Ccma& k = host.ccma_constraints()[static_cast<std::size_t>(c)];
    ++per_atom[k.a];
    ++per_atom[k.b];
    shape.longest_row =
        std::max(shape.longest_row, static_cast<int>(host.inverse_coupling()[static_cast<std::size_t>(c)].size()));
  }
  shape.atoms = static_cast<int>(per_atom.size());
  for (const auto& [atom, count] : per_atom) shape.most_entries = std::max(shape.most_entries, count);
  return shape;
}

// Whether every coupled group fits one warp (HBonds constraints do: a heavy atom and its hydrogens).
bool groups_fit_warps(const std::vector<GroupShape>& shapes) {
  for (const GroupShape& shape : shapes)
    if (shape.constraints > cuda::kCcmaWarpLanes || shape.atoms > cuda::kCcmaWarpLanes ||
        shape.longest_row > cuda::kCcmaWarpMaxRow || shape.most_entries > cuda::kCcmaWarpMaxEntries)
      return false;
  return true;
}

// Whole coupled groups into blocks: for the warp kernels at most 32 constraints and 32 atoms each,
// otherwise about kCcmaBlockConstraints constraints each. Within a block the constraints keep their
// CPU order (ascending), so each atom still sums its updates in the CPU's order. shapes: one per group.
// A replica batch's plan (atoms_per_replica > 0) starts a block at each replica's first group, so every replica
// has the blocks, and so the iterations, it would have alone.
std::vector<std::vector<int>> ccma_blocks(const ConstraintPlan& host, const std::vector<GroupShape>& shapes,
                                          bool warp_blocks, int atoms_per_replica) {
  std::vector<std::vector<int>> blocks;
  int block_atoms = 0, block_replica = 0;
  for (std::size_t i = 0; i < host.coupled_groups().size(); ++i) {
    const std::vector<int>& g = host.coupled_groups()[i];
    const int atoms = warp_blocks ? shapes[i].atoms : 0;
    const int replica =
        atoms_per_replica > 0 ? host.ccma_constraints()[static_cast<std::size_t>(g.front())].a / atoms_per_replica : 0;
    const bool full =
        blocks.empty() || replica != block_replica ||
        (warp_blocks ? blocks.back().size() + g.size() > static_cast<std::size_t>(cuda::kCcmaWarpLanes) ||
                           block_atoms + atoms > cuda::kCcmaWarpLanes
                     : blocks.back().size() + g.size() > static_cast<std::size_t>(kCcmaBlockConstraints));
    if (full) {
      blocks.emplace_back();
      block_atoms = 0;
      block_replica = replica;
    }
    blocks.back().insert(blocks.back().end(), g.begin(), g.end());
    block_atoms += atoms;
  }
  for (auto& b : blocks) std::sort(b.begin(), b.end());
  return blocks;
}

// Appends one block of CCMA constraints (indices into host.ccma_constraints()); new_index: each
// constraint's number in the device layout.
void add_ccma_block(const ConstraintPlan& host, const std::vector<int>& b, const std::vector<int>& new_index,
                    DeviceConstraintPlan& plan) {
  const std::vector<ConstraintPlan::Ccma>& ccma = host.ccma_constraints();
  const auto& inverse_coupling = host.inverse_coupling();
  const std::vector<double>& inverse_mass = host.inverse_masses();
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

// The platform-neutral plan (its SETTLE selection, CCMA constraint order, inverse coupling matrix
// with the element cutoff, coupled groups) laid out for the device.
DeviceConstraintPlan build_constraint_plan(const ConstraintPlan& host, int atoms_per_replica) {
  DeviceConstraintPlan plan;
  plan.settle = settle_waters(host);
  std::vector<GroupShape> shapes;
  for (const auto& g : host.coupled_groups()) {
    shapes.push_back(group_shape(host, g));
    plan.max_row = std::max(plan.max_row, shapes.back().longest_row);
    plan.max_entries = std::max(plan.max_entries, shapes.back().most_entries);
  }
  plan.warp_blocks = groups_fit_warps(shapes);
  const std::vector<std::vector<int>> blocks = ccma_blocks(host, shapes, plan.warp_blocks, atoms_per_replica);
  std::vector<int> new_index(host.ccma_constraints().size(), -1);
  int next = 0;
  for (const auto& b : blocks)
    for (int c : b) new_index[static_cast<std::size_t>(c)] = next++;
  for (const auto& b : blocks) add_ccma_block(host, b, new_index, plan);
  return plan;
}

}  // namespace

int max_shared_bytes_per_block(int device) {
  int max_shared = 0;
  MDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return max_shared;
}

CudaConstraints::CudaConstraints(const ConstraintPlan& host, const CudaStreams& streams, int max_shared_bytes,
                                 int atoms_per_replica)
    : streams_(streams) {
  const DeviceConstraintPlan plan = build_constraint_plan(host, atoms_per_replica);
  const cudaStream_t stream = streams_.main;
  num_settle_ = static_cast<int>(plan.settle.size());
  num_ccma_ = plan.num_ccma();
  ccma_blocks_ = plan.num_blocks();
  ccma_threads_ = std::clamp((std::max(plan.max_block_constraints, plan.max_block_atoms) + 31) / 32 * 32, 64, 1024);
  max_block_atoms_ = plan.max_block_atoms;
  warp_blocks_ = plan.warp_blocks && num_ccma_ > 0;
  warp_row_ = plan.max_row;
  warp_entries_ = plan.max_entries;
  settle_.upload(plan.settle, stream);
  block_constraint_start_.upload(plan.block_constraint_start, stream);
  block_atom_start_.upload(plan.block_atom_start, stream);
  block_iterations_.resize(static_cast<std::size_t>(std::max(ccma_blocks_, 1)));
  atoms_.upload(plan.ccma_atoms, stream);
  local_.upload(plan.ccma_local, stream);
  atom_inverse_mass_.upload(plan.atom_inverse_mass, stream);
  distance_.upload(plan.distance, stream);
  reduced_mass_.upload(plan.reduced_mass, stream);
  row_start_.upload(plan.row_start, stream);
  column_.upload(plan.column, stream);
  value_.upload(plan.value, stream);
  atom_index_.upload(plan.atom_index, stream);
  atom_start_.upload(plan.atom_start, stream);
  atom_entry_.upload(plan.atom_entry, stream);
  iterations_.upload(std::vector<int>{0, 0}, stream);
  // Each CCMA block's working set in shared memory when the largest fits (HBonds: a few KB),
  // otherwise in global scratch.
  const int touched = static_cast<int>(plan.atom_index.size());
  shared_bytes_ = plan.max_block_shared_bytes;
  use_shared_ = num_ccma_ > 0 && shared_bytes_ + 64 <= static_cast<std::size_t>(max_shared_bytes);
  if (!use_shared_) {
    shared_bytes_ = 0;
    x_scratch_.resize(static_cast<std::size_t>(touched));
    r_ref_.resize(static_cast<std::size_t>(num_ccma_));
    r_ref2_.resize(static_cast<std::size_t>(num_ccma_));
    delta_.resize(static_cast<std::size_t>(num_ccma_));
    delta_tmp_.resize(static_cast<std::size_t>(num_ccma_));
  }
}

void CudaConstraints::allow_shared_bytes(std::size_t bytes) {
  MDSIM_CUDA_CHECK(cudaFuncSetAttribute(cuda::ccma_positions_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  MDSIM_CUDA_CHECK(cudaFuncSetAttribute(cuda::ccma_velocities_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
}

CudaConstraints::CcmaLaunch CudaConstraints::ccma_launch() {
  CcmaLaunch l;
  l.blocks = ccma_blocks_;
  l.threads = ccma_threads_;
  l.shared_bytes = shared_bytes_;
  cuda::CcmaView& c = l.view;
  c.blocks = ccma_blocks_;
  c.block_constraint_start = block_constraint_start_.data();
  c.block_atom_start = block_atom_start_.data();
  c.atoms = atoms_.data();
  c.local = local_.data();
  c.distance = distance_.data();
  c.reduced_mass = reduced_mass_.data();
  c.row_start = row_start_.data();
  c.column = column_.data();
  c.value = value_.data();
  c.atom_index = atom_index_.data();
  c.atom_inverse_mass = atom_inverse_mass_.data();
  c.atom_start = atom_start_.data();
  c.atom_entry = atom_entry_.data();
  c.use_shared = use_shared_;
  c.x_scratch = x_scratch_.data();
  c.r_ref_scratch = r_ref_.data();
  c.r_ref2_scratch = r_ref2_.data();
  c.delta_scratch = delta_.data();
  c.delta_tmp_scratch = delta_tmp_.data();
  c.block_iterations = block_iterations_.data();
  c.iterations = iterations_.data();
  return l;
}

// SETTLE on aux beside CCMA on main when the plan has both, otherwise whichever it has on main.
template <typename SettleLaunch, typename CcmaLaunchFn>
void CudaConstraints::run(SettleLaunch&& settle, CcmaLaunchFn&& ccma) {
  const CudaStreams& s = streams_;
  if (num_settle_ > 0 && num_ccma_ > 0) {
    MDSIM_CUDA_CHECK(cudaEventRecord(s.fork, s.main));
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(s.aux, s.fork, 0));
    settle(s.aux);
    MDSIM_CUDA_CHECK(cudaEventRecord(s.join, s.aux));
    ccma(s.main);
    MDSIM_CUDA_CHECK(cudaStreamWaitEvent(s.main, s.join, 0));
  } else if (num_settle_ > 0) {
    settle(s.main);
  } else if (num_ccma_ > 0) {
    ccma(s.main);
  }
  MDSIM_CUDA_CHECK_LAUNCH();
}

void CudaConstraints::constrain_positions(const Vec3d* reference, double4_16a* pos, double tolerance, int passes) {
  const cuda::SettleWater* waters = settle_.data();
  const int nw = num_settle_;
  const CcmaLaunch l = ccma_launch();
  run(
      [&](cudaStream_t s) {
        cuda::settle_positions_kernel<<<atom_blocks(nw), cuda::kAtomThreads, 0, s>>>(nw, waters, reference, pos);
      },
      [&](cudaStream_t s) {
        for (int pass = 0; pass < passes; ++pass)
          cuda::ccma_positions_kernel<<<l.blocks, l.threads, l.shared_bytes, s>>>(
              l.view, reference, pos, tolerance, ConstraintPlan::kMaxIterations, pass == 1);
      });
}

void CudaConstraints::constrain_velocities(const double4_16a* pos, Vec3d* v, double tolerance, int passes) {
  const cuda::SettleWater* waters = settle_.data();
  const int nw = num_settle_;
  const CcmaLaunch l = ccma_launch();
  run(
      [&](cudaStream_t s) {
        cuda::settle_velocities_kernel<<<atom_blocks(nw), cuda::kAtomThreads, 0, s>>>(nw, waters, pos, v);
      },
      [&](cudaStream_t s) {
        for (int pass = 0; pass < passes; ++pass)
          cuda::ccma_velocities_kernel<<<l.blocks, l.threads, l.shared_bytes, s>>>(
              l.view, pos, v, tolerance, ConstraintPlan::kMaxIterations, pass == 1);
      });
}

void copy_positions(int n, const double4_16a* pos, Vec3d* out, cudaStream_t stream) {
  cuda::copy_positions_kernel<<<atom_blocks(n), cuda::kAtomThreads, 0, stream>>>(n, pos, out);
  MDSIM_CUDA_CHECK_LAUNCH();
}

void vec3_to_positions(int n, const Vec3d* x, double4_16a* pos, cudaStream_t stream) {
  cuda::vec3_to_positions_kernel<<<atom_blocks(n), cuda::kAtomThreads, 0, stream>>>(n, x, pos);
  MDSIM_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------------
// The minimiser's constraint operations.

CudaMinimizerConstraintSolver::CudaMinimizerConstraintSolver(const System& system, CudaConstraints& system_masses,
                                                             const CudaStreams& streams, int max_shared_bytes,
                                                             Vec3d* reference_scratch)
    : n_(system.num_particles()),
      stream_(streams.main),
      unit_masses_(ConstraintPlan(system, std::vector<double>(static_cast<std::size_t>(system.num_particles()), 1.0)),
                   streams, max_shared_bytes),
      system_masses_(system_masses),
      reference_scratch_(reference_scratch) {}

double4_16a* CudaMinimizerConstraintSolver::scratch() {
  positions_.resize(static_cast<std::size_t>(n_));  // allocated on first use (no copy)
  return positions_.data();
}

void CudaMinimizerConstraintSolver::retract(const Vec3d* reference, Vec3d* x, double tolerance) {
  double4_16a* positions = scratch();
  vec3_to_positions(n_, x, positions, stream_);
  unit_masses_.constrain_positions(reference, positions, tolerance, 2);
  copy_positions(n_, positions, x, stream_);
}

void CudaMinimizerConstraintSolver::project(const Vec3d* at, Vec3d* v, double tolerance) {
  double4_16a* positions = scratch();
  vec3_to_positions(n_, at, positions, stream_);
  unit_masses_.constrain_velocities(positions, v, tolerance, 2);
}

void CudaMinimizerConstraintSolver::constrain(Vec3d* x, double tolerance) {
  double4_16a* positions = scratch();
  MDSIM_CUDA_CHECK(cudaMemcpyAsync(reference_scratch_, x, static_cast<std::size_t>(n_) * sizeof(Vec3d),
                                   cudaMemcpyDeviceToDevice, stream_));
  vec3_to_positions(n_, x, positions, stream_);
  system_masses_.constrain_positions(reference_scratch_, positions, tolerance, 2);
  copy_positions(n_, positions, x, stream_);
}

}  // namespace mdsim
