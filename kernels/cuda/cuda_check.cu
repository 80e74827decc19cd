#include "kernels/cuda/cuda_check.hpp"

#include <fmt/format.h>

namespace mdsim::cuda {

namespace {
std::atomic<std::size_t> g_transfers{0};
}

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw RuntimeError(fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(err), cudaGetErrorString(err),
                                 call, file, line));
}

std::size_t transfer_count() { return g_transfers.load(); }
void count_transfer() { g_transfers.fetch_add(1); }

}  // namespace mdsim::cuda
