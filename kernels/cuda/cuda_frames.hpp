// Trajectory frames of the CUDA context without stopping the GPU (host-only header): Context::capture_frame
// converts positions (and velocities, forces) to float into a device staging buffer on the main
// stream, then copies them on a copy stream into the caller's host arrays (pinned:
// Context::frame_allocator); the main stream goes on with the next steps at once.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>

#include "common/host_buffer.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "physics/vec3.hpp"
#include "platform/context.hpp"

namespace mdsim {

class CudaFrameCapture {
 public:
  CudaFrameCapture() = default;
  CudaFrameCapture(const CudaFrameCapture&) = delete;
  CudaFrameCapture& operator=(const CudaFrameCapture&) = delete;

  // Pinned host memory for the frame arrays.
  static std::shared_ptr<HostBufferAllocator> allocator();

  // Context::capture_frame for n atoms, after `stream`'s work so far: positions (required), and the
  // velocities and fixed-point forces (planes of `force_stride`) where `target` asks for them. On the
  // device, the main stream waits only for the previous frame's copy out of the staging buffer before
  // overwriting it. The returned function waits for the copy.
  std::function<void()> capture(const Context::FrameTarget& target, int n, cudaStream_t stream,
                                const double4_16a* positions, const Vec3d* velocities,
                                const unsigned long long* forces, int force_stride);

  // The fixed-point forces (planes of `force_stride`) as N rows of x, y, z double (kJ/mol/nm) in a device
  // array this object keeps (the same pointer on every call), converted on `stream`.
  double* forces_as_double(int n, cudaStream_t stream, const unsigned long long* forces, int force_stride);

  // Waits for the copies enqueued so far.
  void synchronize() const { cudaStreamSynchronize(copy_stream_); }

 private:
  cuda::Stream copy_stream_;             // device -> host
  cuda::Event converted_;                // the frame is in the staging buffer
  std::shared_ptr<CUevent_st> last_copied_;  // the last frame's copy (outlives this when a wait does)
  cuda::DeviceBuffer<float> staging_;
  cuda::DeviceBuffer<Vec3d> forces_double_;  // forces_as_double's array
};

}  // namespace mdsim
