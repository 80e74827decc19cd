// The grid of a launch that gives each of n items to one thread (or to a share of a block): every kernel's launch
// sizes come from here, with its block size stated at the call.
#pragma once

#include <algorithm>

namespace mdsim::cuda {

// Blocks of `per_block` items covering n items: at least one (a launch of no blocks is an error; a kernel's threads
// past n return at once).
inline int blocks_for(long long n, int per_block) {
  return static_cast<int>(std::max<long long>(1, (n + per_block - 1) / per_block));
}

}  // namespace mdsim::cuda
