// What a machine offers the CUDA platform: its devices and why there are none. Plain data, filled by the
// CUDA platform's probe (kernels/cuda/device_query) and read by the engine and the command line.
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

}  // namespace mdsim
