// PME's reciprocal-space middle in mixed precision on lines of the grid: five kernels in place of the fixed-point
// conversion, cuFFT's real-to-complex transform, the convolution and cuFFT's complex-to-real transform
// (cuda_pme.hpp's steps 2-5), for grids whose three sizes each have a line transform here (physics/fft_line.hpp:
// no prime factor above 7, 8 to 48 points).
//   1. z lines, two at a time as one complex line: the fixed-point charges to float, the transform, the two half
//      spectra (kz <= nz/2) to the half-complex grid;
//   2. y lines, forward;
//   3. x lines: forward, times the influence function (with the energy), inverse;
//   4. y lines, inverse;
//   5. z lines, two at a time: the potential grid for the gather; the fixed-point grid set back to zero for the
//      next spread.
// One thread per line (per pair of z lines), the line in registers; a block's z lines pass through shared memory
// so that the grid is read and written in whole rows. A batch's replicas are blockIdx.y: every line of a replica
// is computed as in a system alone, so a replica's forces and energy are that system's bit for bit.
// MDSIM_PME_LINE_FFT=0 in the environment keeps cuFFT for every grid (for comparisons; CudaPme reads it).
#pragma once

#include <cuda_runtime.h>

namespace mdsim::cuda {

// Whether an nx x ny x nz grid has line transforms along all three axes.
bool line_fft_supports(int nx, int ny, int nz);

struct LineFftGrids {
  int n[3] = {0, 0, 0};
  int replicas = 1;
  unsigned long long* fixed = nullptr;  // replicas x nx ny nz charges, fixed point 2^40; zero on return
  float* half = nullptr;                // replicas x nx ny (nz/2 + 1) complex values (re, im)
  float* potential = nullptr;           // replicas x nx ny nz: the potential grid the gather reads
  const float* influence = nullptr;     // nx ny (nz/2 + 1), kJ/mol/e^2, one for every replica
};

// Enqueues the five passes on `stream`. With energy_fixed, adds replica r's reciprocal energy (kJ/mol, fixed point)
// to energy_fixed[r * energy_stride]. Throws mdsim::RuntimeError if the grid is not supported or a launch fails.
void line_fft_convolve(const LineFftGrids& grids, unsigned long long* energy_fixed, int energy_stride,
                       cudaStream_t stream);

}  // namespace mdsim::cuda
