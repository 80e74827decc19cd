// Platform discovery. The CUDA platform is used when the CUDA runtime finds a usable device;
// otherwise (no driver, no device, incompatible driver) the CPU reference platform runs.
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

// Never throws, never aborts: a machine without a driver yields an empty list and a reason.
CudaProbe probe_cuda();

enum class PlatformKind { Cpu, Cuda };

struct PlatformChoice {
  PlatformKind kind = PlatformKind::Cpu;
  int device = 0;
  std::string notice;  // one line for the user when the choice differs from the request ("auto" fell back)
};

// requested: "auto" | "cpu" | "cuda". Throws mdsim::InputError for "cuda" without a usable device
// or a device index out of range.
PlatformChoice choose_platform(const std::string& requested, int device_index);

const char* to_string(PlatformKind kind);

}  // namespace mdsim
