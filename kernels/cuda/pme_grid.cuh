// The PME charge grid's fixed point and the block reduction that cuda_pme.cu's convolution and
// pme_line_fft.cu's line passes share (device code only).
#pragma once

#include <cuda_runtime.h>

namespace mdsim::cuda {

// Charge grid fixed point: scale 2^40 (resolution 9.1e-13 e, range +-8.4e6 e per grid point).
constexpr double kGridScale = 1099511627776.0;
constexpr float kGridScaleF = 1099511627776.0f;
constexpr double kGridInvScale = 1.0 / 1099511627776.0;

// A fixed-point grid value as a real: int64 -> real directly, then the exact power-of-two scale (the same value
// as through double, |v| < 2^53). The pointer argument only selects the precision.
__device__ __forceinline__ float grid_value(unsigned long long v, const float*) {
  return __ll2float_rn(static_cast<long long>(v)) * static_cast<float>(kGridInvScale);
}
__device__ __forceinline__ double grid_value(unsigned long long v, const double*) {
  return static_cast<double>(static_cast<long long>(v)) * kGridInvScale;
}

// Sum of v over the block, valid in thread 0 (fixed order: deterministic). Every thread of the block calls it.
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[32];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  double total = 0.0;
  if (warp == 0) {
    const int nwarps = (blockDim.x + 31) >> 5;
    v = lane < nwarps ? warp_sums[lane] : 0.0;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    total = v;
  }
  return total;
}

}  // namespace mdsim::cuda
