// CUDA platform: the context's Monte Carlo barostat (see cuda_barostat.hpp); MonteCarloBarostat::attempt
// is the specification.
#include "kernels/cuda/cuda_barostat.hpp"

#include "kernels/cuda/device_atoms.cuh"

#include <string>

#include "common/errors.hpp"

namespace mdsim {

namespace cuda {

// Barostat trial move: each molecule (atoms molecule_atoms[start[m] .. start[m+1])) moved rigidly so
// that its geometric centre, wrapped into the primary cell of `box`, is scaled by `scale` (the
// CPU's scale_molecule_centres, same order of operations). One thread per molecule.
__global__ void scale_molecule_centres_kernel(int molecules, const int* __restrict__ start,
                                              const int* __restrict__ atoms, double4_16a* __restrict__ pos,
                                              Boxd box, double scale) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= molecules) return;
  const int begin = start[m], end = start[m + 1];
  Vec3d centre(0.0, 0.0, 0.0);
  for (int k = begin; k < end; ++k) centre += load_position(pos, atoms[k]);
  centre = centre / static_cast<double>(end - begin);
  Vec3d wrapped = centre;
  wrapped -= box.c * floor(wrapped.z / box.c.z);
  wrapped -= box.b * floor(wrapped.y / box.b.y);
  wrapped -= box.a * floor(wrapped.x / box.a.x);
  const Vec3d offset = wrapped * scale - centre;
  for (int k = begin; k < end; ++k) {
    const int a = atoms[k];
    store_position(pos, a, load_position(pos, a) + offset);
  }
}

}  // namespace cuda

CudaBarostat::CudaBarostat(const System& system, const std::optional<BarostatConfig>& config, cudaStream_t stream)
    : n_(system.num_particles()), stream_(stream) {
  if (!config) return;
  barostat_.emplace(system, *config);
  const std::vector<std::vector<int>>& molecules = barostat_->molecules();
  num_molecules_ = static_cast<int>(molecules.size());
  std::vector<int> start{0}, atoms;
  for (const auto& m : molecules) {
    atoms.insert(atoms.end(), m.begin(), m.end());
    start.push_back(static_cast<int>(atoms.size()));
  }
  molecule_start_.upload(start, stream_);
  molecule_atoms_.upload(atoms, stream_);
  position_backup_.resize(static_cast<std::size_t>(n_));
}

bool CudaBarostat::move(CudaForceEvaluator& evaluator, Boxd& box, std::uint64_t seed, std::int64_t step) {
  const double current_energy = evaluator.energies().total;
  const MonteCarloBarostat::Proposal proposal = barostat_->propose(box, seed, step);

  Boxd trial_box = box;
  trial_box.a *= proposal.length_scale;
  trial_box.b *= proposal.length_scale;
  trial_box.c *= proposal.length_scale;
  try {  // first, so that a refused box leaves the positions as they were
    evaluator.set_box(trial_box);
  } catch (const InputError& e) {  // e.g. the box fell below twice the cutoff: a failure of the run, as on the CPU
    throw RuntimeError("barostat at step " + std::to_string(step) + ": " + e.what());
  }
  double4_16a* pos = static_cast<double4_16a*>(evaluator.device_positions());
  const std::size_t bytes = static_cast<std::size_t>(n_) * sizeof(double4_16a);
  MDSIM_CUDA_CHECK(cudaMemcpyAsync(position_backup_.data(), pos, bytes, cudaMemcpyDeviceToDevice, stream_));
  cuda::scale_molecule_centres_kernel<<<cuda::atom_blocks(num_molecules_), cuda::kAtomThreads, 0, stream_>>>(
      num_molecules_, molecule_start_.data(), molecule_atoms_.data(), pos, box, proposal.length_scale);
  MDSIM_CUDA_CHECK_LAUNCH();
  evaluator.compute(true);
  if (barostat_->decide(proposal, current_energy, evaluator.energies().total)) {
    box = trial_box;
    return true;
  }
  MDSIM_CUDA_CHECK(cudaMemcpyAsync(pos, position_backup_.data(), bytes, cudaMemcpyDeviceToDevice, stream_));
  evaluator.set_box(box);
  return false;
}

}  // namespace mdsim
