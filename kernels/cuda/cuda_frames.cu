// CUDA platform: trajectory frame capture (see cuda_frames.hpp).
#include "kernels/cuda/cuda_frames.hpp"

#include "kernels/cuda/device_atoms.cuh"

namespace mdsim {

namespace cuda {

// A trajectory frame as float (3 per atom): positions (nm), and velocities (nm/ps) / forces
// (kJ/mol/nm, from the fixed-point sums) where the output pointer is not null.
__global__ void frame_kernel(int n, const double4_16a* __restrict__ pos, const Vec3d* __restrict__ v,
                             const unsigned long long* __restrict__ force, int stride, float* __restrict__ out_pos,
                             float* __restrict__ out_v, float* __restrict__ out_f) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec3d x = load_position(pos, i);
  for (int d = 0; d < 3; ++d) out_pos[3 * i + d] = static_cast<float>(x[d]);
  if (out_v != nullptr)
    for (int d = 0; d < 3; ++d) out_v[3 * i + d] = static_cast<float>(v[i][d]);
  if (out_f != nullptr) {
    const Vec3d f = load_force(force, stride, i);
    for (int d = 0; d < 3; ++d) out_f[3 * i + d] = static_cast<float>(f[d]);
  }
}

// Fixed-point force sums to N rows of x, y, z double (kJ/mol/nm).
__global__ void forces_to_double_kernel(int n, const unsigned long long* __restrict__ force, int stride,
                                        Vec3d* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = load_force(force, stride, i);
}

}  // namespace cuda

namespace {

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

}  // namespace

std::shared_ptr<HostBufferAllocator> CudaFrameCapture::allocator() { return std::make_shared<PinnedHostAllocator>(); }

std::function<void()> CudaFrameCapture::capture(const Context::FrameTarget& target, int n, cudaStream_t stream,
                                                const double4_16a* positions, const Vec3d* velocities,
                                                const unsigned long long* forces, int force_stride) {
  const bool want_v = target.velocities_nm_per_ps != nullptr, want_f = target.forces_kj_per_mol_nm != nullptr;
  const std::size_t floats = 3 * static_cast<std::size_t>(n);
  const std::size_t arrays = 1 + (want_v ? 1 : 0) + (want_f ? 1 : 0);
  if (staging_.size() < arrays * floats) {
    if (last_copied_) MDSIM_CUDA_CHECK(cudaEventSynchronize(last_copied_.get()));
    staging_.resize(3 * floats);
  }
  if (last_copied_) MDSIM_CUDA_CHECK(cudaStreamWaitEvent(stream, last_copied_.get(), 0));
  float* staged_pos = staging_.data();
  float* staged_v = want_v ? staged_pos + floats : nullptr;
  float* staged_f = want_f ? staged_pos + (want_v ? 2 : 1) * floats : nullptr;
  cuda::frame_kernel<<<cuda::atom_blocks(n), cuda::kAtomThreads, 0, stream>>>(
      n, positions, velocities, forces, force_stride, staged_pos, staged_v, staged_f);
  MDSIM_CUDA_CHECK_LAUNCH();
  MDSIM_CUDA_CHECK(cudaEventRecord(converted_, stream));
  MDSIM_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, converted_, 0));
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
  last_copied_ = copied;
  return [copied] { MDSIM_CUDA_CHECK(cudaEventSynchronize(copied.get())); };
}

double* CudaFrameCapture::forces_as_double(int n, cudaStream_t stream, const unsigned long long* forces,
                                           int force_stride) {
  if (forces_double_.size() != static_cast<std::size_t>(n)) forces_double_.resize(static_cast<std::size_t>(n));
  cuda::forces_to_double_kernel<<<cuda::atom_blocks(n), cuda::kAtomThreads, 0, stream>>>(n, forces, force_stride,
                                                                                        forces_double_.data());
  MDSIM_CUDA_CHECK_LAUNCH();
  return reinterpret_cast<double*>(forces_double_.data());
}

}  // namespace mdsim
