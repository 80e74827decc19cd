// The CUDA platform's options from a config's `platform` section. Engine-internal: it includes the CUDA
// platform's header, which nothing above the engine sees.
#pragma once

#include "kernels/cuda/cuda_forces.hpp"
#include "model/run_config.hpp"

namespace mdsim {

CudaOptions cuda_options(const PlatformConfig& settings, int device);

}  // namespace mdsim
