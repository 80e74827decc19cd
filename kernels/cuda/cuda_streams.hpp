// The streams and events of the CUDA context's dynamics (host-only header). Every operation is
// ordered on `main`, the force evaluator's stream; work forked onto `aux` or `free` first waits for an
// event recorded on main, and main waits for an event recorded after it, so the same code runs alike
// on a stream being captured into a CUDA graph.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"

namespace mdsim {

struct CudaStreams {
  explicit CudaStreams(cudaStream_t main_stream) : main(main_stream) {}

  cudaStream_t main;  // the force evaluator's (not owned)
  cuda::Stream aux;   // SETTLE beside CCMA; the COM velocity and the fused step's noise beside the
                      // force evaluation; the fused step's waters
  cuda::Stream free;  // the fused step's unconstrained atoms
  cuda::Event free_join;  // recorded on `free` when its part of the fused step is enqueued
  cuda::Event fork;       // recorded on main before work is forked onto aux / free
  cuda::Event join;       // recorded on aux when its part of a constraint solve or fused step is enqueued
  cuda::Event com_done;   // recorded on aux after the COM velocity and the noise
};

}  // namespace mdsim
