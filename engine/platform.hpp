// Platform discovery. The CUDA platform is used when the CUDA runtime finds a usable device;
// otherwise (no driver, no device, incompatible driver) the CPU reference platform runs.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/cuda/device_query.hpp"

namespace mdsim {

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

// Host <-> device copies the CUDA platform has made in this process so far (every DeviceBuffer upload and
// download, every frame copy): what proves that steps copy nothing.
std::size_t cuda_host_device_copies();

}  // namespace mdsim
