// Smooth particle-mesh Ewald, reciprocal space, on the GPU (CUDA + cuFFT).
//
// Reproduces mdsim::CpuPme (kernels/cpu/cpu_pme.hpp): order-5 B-splines (physics/bspline.hpp),
// OpenMM's B-spline moduli (taken from CpuPme itself), any box in OpenMM's reduced triclinic form, no
// self energy (the caller adds it). Units: nm, e, kJ/mol; forces kJ/mol/nm.
//
// One compute() enqueues on the caller's stream, with no host synchronisation and no host<->device
// copy:
//   1. spread   — per block of 32 consecutive atoms: one thread per (atom, axis) computes the grid
//                 index and the B-spline weights into shared memory; the block's threads then add the
//                 125 charge contributions of each atom to a 64-bit fixed-point grid (scale 2^40) with
//                 integer atomicAdd: the grid is the same bit for bit whatever order the adds happen
//                 in, and whatever the atom order. In mixed precision with a spatially sorted copy of
//                 the atoms (compute's `sorted`), each block sums its charges in a shared-memory tile
//                 of 32-bit fixed point first and adds each touched point to the grid once.
//   2. convert  — fixed-point grid -> real grid (then a memset zeroes the fixed-point grid for the next call).
//   3. cuFFT R2C (D2Z in double precision).
//   4. convolve — multiply by the influence function; the energy (template flag) is summed in double,
//                 reduced per block in a fixed order and added as fixed point.
//   5. cuFFT C2R (Z2D).
//   2-5 in mixed precision on a grid whose sizes have line transforms (7-smooth, 8 to 48 points: the grids of small
//                 systems): five kernels of pme_line_fft.hpp instead, one thread per grid line.
//   6. gather   — one thread per atom (in the sorted copy's order when given) recomputes its weights and
//                 interpolates the potential gradient; the force is added to the caller's fixed-point
//                 force buffer.
// Kernel times and the variants tried are in docs/PERFORMANCE.md.
// The influence function (on the half-complex grid) is computed on the device when the box differs
// from the box of the previous call (checked on the host, which knows the box it passes), so it costs
// nothing at constant volume. Because that check runs on the host, a CUDA graph captured around
// compute() keeps the influence function of the box at capture time: re-capture after a box change.
//
// Calls on one object must be ordered (one stream, or streams the caller synchronises): the object
// owns one set of grids.
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include <type_traits>

#include "kernels/cuda/cuda_check.hpp"
#include "physics/pbc.hpp"

namespace mdsim::cuda {

// A replica batch (CudaOptions::replicas): `count` systems of atoms_per_replica atoms each (atom a is replica
// a / atoms_per_replica's), each with its own grid, in the one box they share; the reciprocal energy of replica r
// goes to energy_fixed[r * energy_stride].
struct PmeReplicas {
  int count = 1;
  int atoms_per_replica = 0;  // 0: num_atoms / count
  int energy_stride = 0;
};

// Owns one cuFFT plan handle (destroyed with it).
class CufftPlan {
 public:
  CufftPlan() = default;
  ~CufftPlan();
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  void create_3d(int nx, int ny, int nz, cufftType type);
  void create_batch(int nx, int ny, int nz, cufftType type, int batch);  // `batch` contiguous 3-D transforms
  cufftHandle get() const { return handle_; }

 private:
  cufftHandle handle_ = 0;
  bool valid_ = false;
};

template <typename real>  // float (mixed precision) or double; explicitly instantiated in cuda_pme.cu
class CudaPme {
  static_assert(std::is_same_v<real, float> || std::is_same_v<real, double>, "CudaPme<float> or CudaPme<double>");

 public:
  // double4 is deprecated in CUDA 13; double4_16a has the same layout (4 doubles, 16-byte aligned).
  using real4 = std::conditional_t<std::is_same_v<real, float>, float4, double4_16a>;

  // Grid nx x ny x nz (each >= 5), Ewald alpha (1/nm), num_atoms atoms per compute() (a batch's: all its
  // replicas'). Creates the cuFFT plans and device buffers; throws mdsim::RuntimeError on bad arguments or
  // CUDA/cuFFT failure.
  CudaPme(int nx, int ny, int nz, double alpha_per_nm, int num_atoms, PmeReplicas replicas = {});
  ~CudaPme();
  CudaPme(const CudaPme&) = delete;
  CudaPme& operator=(const CudaPme&) = delete;

  // posq[i] = (x, y, z in nm, charge in e), atoms in the caller's order, num_atoms of them.
  // ADDS the reciprocal-space forces (kJ/mol/nm) as fixed point (fixed_point.cuh, scale 2^32) to
  // force_fixed: x of atom i at force_fixed[i], y at force_fixed[stride + i], z at force_fixed[2*stride + i].
  // If energy_fixed is non-null, ADDS the reciprocal energy (kJ/mol, fixed point) to *energy_fixed (a batch's
  // replica r's to energy_fixed[r * energy_stride]).
  // Everything is enqueued on `stream`; no host synchronisation, no host<->device copies.
  //
  // Optionally the same atoms again, spatially sorted in blocks of 32 (any slot left over has charge
  // 0), each slot holding exactly its atom's (x, y, z, q). In mixed precision the spread then
  // sums each block's charges in a shared-memory tile before they go to the grid (spread_tiled_kernel
  // in cuda_pme.cu); with `original` the gather reads them too, in spatial order. Both give the same
  // grid and forces bit for bit as the unsorted atoms (fixed-point sums).
  struct SortedAtoms {
    const real4* posq = nullptr;
    int count = 0;                  // slots, a multiple of 32
    const int* original = nullptr;  // atom index of each slot (-1: unused; its charge is 0)
  };
  // Whether compute() reads posq when given `sorted` with `original`: not in mixed precision, where
  // both the spread and the gather take the sorted copy (posq may then be null).
  static constexpr bool reads_original_order() { return !std::is_same_v<real, float>; }
  void compute(const real4* posq, const BoxVectors<double>& box, unsigned long long* force_fixed, int stride,
               unsigned long long* energy_fixed, cudaStream_t stream, SortedAtoms sorted = {});

  int grid_size(int axis) const { return n_[axis]; }
  double alpha_per_nm() const { return alpha_; }
  int num_atoms() const { return num_atoms_; }

 private:
  void update_influence(const BoxVectors<double>& box, cudaStream_t stream);
  // 6., the force gather from the potential grid (grid_real_), over the sorted copy when given.
  void gather(const SortedAtoms& sorted, const real4* posq, const BoxVectors<double>& box,
              unsigned long long* force_fixed, int stride, cudaStream_t stream);

  int n_[3];
  double alpha_;
  int num_atoms_;
  PmeReplicas replicas_;
  bool gather_per_plane_ = false;  // P threads per atom in the gather (small systems), else one
  DeviceBuffer<unsigned long long> grid_fixed_;  // nx*ny*nz charges, fixed point 2^40, zero between calls
  DeviceBuffer<real> grid_real_;                 // nx*ny*nz: charge grid, later the potential grid
  DeviceBuffer<real> grid_complex_;              // nx*ny*(nz/2+1) complex values (interleaved re, im)
  DeviceBuffer<real> influence_;                 // nx*ny*(nz/2+1) influence function (kJ/mol/e^2)
  DeviceBuffer<double> moduli_;                  // B-spline moduli, nx then ny then nz entries
  CufftPlan forward_, backward_;                 // none with line_fft_
  bool line_fft_ = false;  // steps 2-5 as pme_line_fft.hpp's line passes (float grids with line transforms)
  bool have_box_ = false;
  BoxVectors<double> last_box_{};
};

extern template class CudaPme<float>;
extern template class CudaPme<double>;

}  // namespace mdsim::cuda
