// CUDA device discovery (host-only header; device_query.cu makes only runtime API calls). Never
// throws, never aborts: a machine without a driver yields an empty list and a reason.
#pragma once

#include <cstddef>

#include "platform/devices.hpp"

namespace mdsim {

CudaProbe probe_cuda();

// Free memory of the current device (bytes; 0 when it cannot be read), for memory figures measured as
// differences.
std::size_t cuda_free_memory_bytes();

}  // namespace mdsim
