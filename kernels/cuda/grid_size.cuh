// The grid of a launch that gives each of n items to one thread (or to a share of a block): every kernel's launch
// sizes come from here, with its block size stated at the call; and the device's multiprocessor count, by which
// the launch choices that depend on a system's size are made.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace mdsim::cuda {

// Blocks of `per_block` items covering n items: at least one (a launch of no blocks is an error; a kernel's threads
// past n return at once).
inline int blocks_for(long long n, int per_block) {
  return static_cast<int>(std::max<long long>(1, (n + per_block - 1) / per_block));
}

// Multiprocessors (SMs) of CUDA device `device`; throws mdsim::RuntimeError when it cannot be read.
inline int multiprocessor_count(int device) {
  int sms = 1;
  MDSIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace mdsim::cuda
