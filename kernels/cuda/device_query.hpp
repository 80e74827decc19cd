// CUDA device discovery (host-only header; device_query.cu makes only runtime API calls). Never
// throws, never aborts: a machine without a driver yields an empty list and a reason.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mdsim {

struct CudaDevice {
  int index = 0;
  std::string name;
  std::size_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
};

struct CudaProbe {
  std::vector<CudaDevice> devices;  // empty = no usable device
  std::string reason;               // why none, when empty (the CUDA runtime's message)
  int runtime_version = 0;          // e.g. 13000
  int driver_version = 0;           // 0 when no driver
};

CudaProbe probe_cuda();

// Free memory of the current device (bytes; 0 when it cannot be read), for memory figures measured as
// differences.
std::size_t cuda_free_memory_bytes();

}  // namespace mdsim
