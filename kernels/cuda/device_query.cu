// CUDA device discovery (device_query.hpp). Only runtime API calls; failures become a reason string.
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/device_query.hpp"

namespace mdsim {

CudaProbe probe_cuda() {
  CudaProbe probe;
  cudaRuntimeGetVersion(&probe.runtime_version);
  if (cudaDriverGetVersion(&probe.driver_version) != cudaSuccess) probe.driver_version = 0;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    probe.reason = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky-free error state
    return probe;
  }
  if (count == 0) {
    probe.reason = "the CUDA runtime reports no devices";
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    CudaDevice d;
    d.index = i;
    d.name = prop.name;
    d.memory_bytes = prop.totalGlobalMem;
    d.compute_major = prop.major;
    d.compute_minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    probe.devices.push_back(d);
  }
  if (probe.devices.empty()) probe.reason = "no device could be queried";
  return probe;
}

std::size_t cuda_free_memory_bytes() {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free;
}

}  // namespace mdsim
