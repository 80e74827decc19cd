// CUDA platform: the minimiser's device backend (see cuda_minimizer.hpp). The algorithm is
// platform/minimizer.cpp's minimize_with_backend; this file holds only the vector kernels and
// the glue to the force evaluator. Every kernel runs on the evaluator's stream.
#include "kernels/cuda/cuda_minimizer.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fixed_point.cuh"
#include "kernels/cuda/grid_size.cuh"

namespace mdsim {

namespace {

using cuda::DeviceBuffer;

constexpr int kThreads = 256;          // per-particle kernels and reductions (blockDim.x)
constexpr int kMaxReduceBlocks = 256;  // partial sums of a reduction

int particle_blocks(int n) { return cuda::blocks_for(n, kThreads); }

// Blocks of a reduction over n particles: a fixed function of n, so every reduction of a run (and
// of every run) sums the same particles in the same order.
int reduce_blocks(int n) {
  const int per_block = 4 * kThreads;
  return std::clamp((n + per_block - 1) / per_block, 1, kMaxReduceBlocks);
}

// ---------------------------------------------------------------------------------------------
// Kernels: one thread per particle (n particles, particle_blocks(n) blocks of kThreads), or the
// reductions (reduce_blocks(n) blocks of kThreads). Vectors are arrays of n Vec3d.

__global__ void negate_kernel(int n, Vec3d* to, const Vec3d* from) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) to[i] = -from[i];
}

__global__ void scale_kernel(int n, Vec3d* v, double a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= a;
}

__global__ void add_scaled_kernel(int n, Vec3d* to, const Vec3d* x, const Vec3d* p, double a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) to[i] = x[i] + p[i] * a;
}

__global__ void subtract_kernel(int n, Vec3d* to, const Vec3d* a, const Vec3d* b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) to[i] = a[i] - b[i];
}

// v += x c (subtract: v -= x c), c read from device memory.
__global__ void add_multiple_kernel(int n, Vec3d* v, const Vec3d* x, const double* coefficient, bool subtract) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double c = *coefficient;
  if (subtract) v[i] -= x[i] * c;
  else v[i] += x[i] * c;
}

// Particle positions from / into the evaluator's array (double4_16a: x, y, z, padding).
__global__ void positions_from_evaluator_kernel(int n, const double4_16a* pos, Vec3d* x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double4_16a p = pos[i];
  x[i] = Vec3d(p.x, p.y, p.z);
}

__global__ void positions_to_evaluator_kernel(int n, const Vec3d* x, double4_16a* pos) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec3d v = x[i];
  pos[i] = make_double4_16a(v.x, v.y, v.z, 0.0);
}

// The evaluator's forces (64-bit fixed point, x of particle i at [i], y at [stride + i], z at
// [2 stride + i]) as Vec3d.
__global__ void forces_kernel(int n, const unsigned long long* force, int stride, Vec3d* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = Vec3d(cuda::from_fixed(force[i]), cuda::from_fixed(force[stride + i]),
                 cuda::from_fixed(force[2 * stride + i]));
}

// max that propagates NaN (a NaN anywhere makes the result NaN, which the driver treats as failure).
__device__ __forceinline__ double max_nan(double a, double b) { return (a > b || a != a) ? a : b; }

template <bool kMax>
__device__ __forceinline__ double combine(double a, double b) {
  return kMax ? max_nan(a, b) : a + b;
}

// Sum (max) over the block of one double per thread, in a fixed order (a tree over shared memory);
// every thread gets the result. blockDim.x must be kThreads.
template <bool kMax>
__device__ double block_reduce(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width >>= 1) {
    if (static_cast<int>(threadIdx.x) < width)
      shared[threadIdx.x] = combine<kMax>(shared[threadIdx.x], shared[threadIdx.x + width]);
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // every thread has read shared[0] before the array is written again
  return total;
}

// What a reduction does with its total t: out = t; out = factor t; out = out - factor t.
enum ReduceFinish : int { kStore = 0, kScaled = 1, kSubtractScaled = 2 };

// kMax = false: t = sum_i a_i . b_i; kMax = true: t = max_i |a_i|^2 (b unused). Launched with
// reduce_blocks(n) blocks of kThreads. Each block reduces its fixed grid-stride share of the particles
// into partial[block]; the last block to finish (atomic counter) adds the partials in block order and
// writes the result, so the result is the same every run (as com_velocity_kernel). `done` must be 0
// before the launch; the kernel leaves it 0. One reduction at a time (partial and done are shared).
template <bool kMax>
__global__ void __launch_bounds__(kThreads)
    reduce_kernel(int n, const Vec3d* a, const Vec3d* b, double* partial, unsigned int* done, double* out, int finish,
                  double factor) {
  __shared__ double shared[kThreads];
  __shared__ bool last;
  double value = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (kMax) value = max_nan(value, dot(a[i], a[i]));
    else value += dot(a[i], b[i]);
  }
  const double block_total = block_reduce<kMax>(value, shared);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = block_total;
    __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;  // uniform over the block
  __threadfence();
  double sum = 0.0;
  for (int blk = threadIdx.x; blk < static_cast<int>(gridDim.x); blk += blockDim.x)
    sum = combine<kMax>(sum, __ldcg(partial + blk));  // past L1: other blocks wrote them
  const double total = block_reduce<kMax>(sum, shared);
  if (threadIdx.x == 0) {
    if (finish == kStore) *out = total;
    else if (finish == kScaled) *out = factor * total;
    else *out = *out - factor * total;
    *done = 0;
  }
}

// ---------------------------------------------------------------------------------------------

class CudaMinimizerBackend final : public MinimizerBackend {
 public:
  CudaMinimizerBackend(CudaForceEvaluator& evaluator, int particles, const ConstraintPlan& host_constraints,
                       CudaMinimizerConstraints* device_constraints, CudaMinimizationStats& stats)
      : evaluator_(evaluator),
        stream_(static_cast<cudaStream_t>(evaluator.device_stream())),
        n_(particles),
        host_constraints_(host_constraints),
        device_constraints_(host_constraints.empty() ? nullptr : device_constraints),
        stats_(stats) {
    if (!host_constraints.empty() && device_constraints == nullptr)
      throw RuntimeError("cuda_minimize: the system has constraints but no device constraint solver was given");
    partial_.resize(kMaxReduceBlocks);
    done_.resize(1);
    done_.zero(stream_);
    result_.resize(1);
  }

  Vec3d* operator[](Vector v) { return vectors_[static_cast<std::size_t>(v)].data(); }

  std::size_t particles() const override { return static_cast<std::size_t>(n_); }
  Vector new_vector() override {
    vectors_.emplace_back(static_cast<std::size_t>(n_));
    return static_cast<Vector>(vectors_.size() - 1);
  }
  void reserve_coefficients(std::size_t slots) override { coefficients_.resize(std::max<std::size_t>(slots, 1)); }

  void copy(Vector to, Vector from) override {
    if (n_ == 0) return;
    MDSIM_CUDA_CHECK(cudaMemcpyAsync((*this)[to], (*this)[from], static_cast<std::size_t>(n_) * sizeof(Vec3d),
                                     cudaMemcpyDeviceToDevice, stream_));
  }
  void negate(Vector to, Vector from) override {
    negate_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, (*this)[to], (*this)[from]);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  void scale(Vector v, double a) override {
    scale_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, (*this)[v], a);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  void add_scaled(Vector to, Vector x, Vector p, double a) override {
    add_scaled_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, (*this)[to], (*this)[x], (*this)[p], a);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  void subtract(Vector to, Vector a, Vector b) override {
    subtract_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, (*this)[to], (*this)[a], (*this)[b]);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  void add_multiple(Vector v, Vector x, std::size_t slot) override {
    add_multiple_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, (*this)[v], (*this)[x], coefficient(slot),
                                                                   false);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  void subtract_multiple(Vector v, Vector x, std::size_t slot) override {
    add_multiple_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, (*this)[v], (*this)[x], coefficient(slot),
                                                                   true);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  void set_coefficient(std::size_t slot, double factor, Vector a, Vector b) override {
    reduce<false>((*this)[a], (*this)[b], coefficient(slot), kScaled, factor);
  }
  void reduce_coefficient(std::size_t slot, double factor, Vector a, Vector b) override {
    reduce<false>((*this)[a], (*this)[b], coefficient(slot), kSubtractScaled, factor);
  }
  double dot(Vector a, Vector b) override {
    reduce<false>((*this)[a], (*this)[b], result_.data(), kStore, 1.0);
    return download_result();
  }
  double max_norm(Vector v) override {
    reduce<true>((*this)[v], nullptr, result_.data(), kStore, 1.0);
    return std::sqrt(download_result());
  }

  bool constrained() const override { return device_constraints_ != nullptr; }
  double energy(Vector x) override { return energy_at((*this)[x]); }
  double evaluate(Vector x, Vector gradient) override {
    const double e = energy_at((*this)[x]);
    // After energies(): an evaluation redone for a tile-list overflow has finished by then.
    Vec3d* g = (*this)[gradient];
    forces_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, evaluator_.device_forces_fixed(),
                                                             evaluator_.force_stride(), g);
    MDSIM_CUDA_CHECK_LAUNCH();
    evaluator_.zero_virtual_site_rows(g);  // a site is placed by each evaluation, never moved by the minimiser
    if (device_constraints_) device_constraints_->project((*this)[x], g, kMinimizerProjectionTolerance);
    negate_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, g, g);
    MDSIM_CUDA_CHECK_LAUNCH();
    return e;
  }
  void retract(Vector reference, Vector x) override {
    if (device_constraints_) device_constraints_->retract((*this)[reference], (*this)[x], kMinimizerManifoldTolerance);
  }
  void project(Vector x, Vector direction) override {
    if (device_constraints_)
      device_constraints_->project((*this)[x], (*this)[direction], kMinimizerProjectionTolerance);
  }
  void constrain(Vector x, double tolerance) override {
    if (device_constraints_) device_constraints_->constrain((*this)[x], tolerance);
  }
  double max_relative_deviation(Vector x) override {
    ++stats_.vector_transfers;
    return host_constraints_.max_relative_deviation(vectors_[static_cast<std::size_t>(x)].download(stream_));
  }

  // The evaluator's device positions into / from a vector.
  void load_positions(Vector x) {
    positions_from_evaluator_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, evaluator_positions(),
                                                                                (*this)[x]);
    MDSIM_CUDA_CHECK_LAUNCH();
  }
  void store_positions(Vector x) {
    positions_to_evaluator_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, (*this)[x], evaluator_positions());
    MDSIM_CUDA_CHECK_LAUNCH();
  }

 private:
  double4_16a* evaluator_positions() { return static_cast<double4_16a*>(evaluator_.device_positions()); }

  double* coefficient(std::size_t slot) {
    if (slot >= coefficients_.size()) throw RuntimeError("cuda_minimize: coefficient slot out of range");
    return coefficients_.data() + slot;
  }

  template <bool kMax>
  void reduce(const Vec3d* a, const Vec3d* b, double* out, int finish, double factor) {
    reduce_kernel<kMax><<<reduce_blocks(n_), kThreads, 0, stream_>>>(n_, a, b, partial_.data(), done_.data(), out,
                                                                     finish, factor);
    MDSIM_CUDA_CHECK_LAUNCH();
  }

  double download_result() {
    ++stats_.scalar_downloads;
    return result_.download(stream_)[0];  // one double; synchronises the stream
  }

  // Positions into the evaluator, one evaluation with energies; the total energy (synchronises).
  double energy_at(const Vec3d* x) {
    positions_to_evaluator_kernel<<<particle_blocks(n_), kThreads, 0, stream_>>>(n_, x, evaluator_positions());
    MDSIM_CUDA_CHECK_LAUNCH();
    evaluator_.compute(true);
    ++stats_.evaluations;
    return evaluator_.energies().total;
  }

  CudaForceEvaluator& evaluator_;
  cudaStream_t stream_;
  int n_;
  const ConstraintPlan& host_constraints_;
  CudaMinimizerConstraints* device_constraints_;
  CudaMinimizationStats& stats_;
  std::deque<DeviceBuffer<Vec3d>> vectors_;  // handle = index
  DeviceBuffer<double> coefficients_, partial_, result_;
  DeviceBuffer<unsigned int> done_;
};

}  // namespace

MinimizationResult cuda_minimize(CudaForceEvaluator& evaluator, const System& system,
                                 const ConstraintPlan& host_constraints, CudaMinimizerConstraints* device_constraints,
                                 double tolerance, int max_iterations, double constraint_tolerance,
                                 ForceCriterion criterion, CudaMinimizationStats* stats) {
  CudaMinimizationStats local;
  CudaMinimizationStats& s = stats ? *stats : local;
  s = CudaMinimizationStats{};
  CudaMinimizerBackend backend(evaluator, system.num_particles(), host_constraints, device_constraints, s);
  const MinimizerBackend::Vector x = backend.new_vector();
  backend.load_positions(x);
  const MinimizationResult result =
      minimize_with_backend(backend, x, tolerance, max_iterations, constraint_tolerance, criterion);
  backend.store_positions(x);  // as the last evaluation left them; explicit for the caller
  MDSIM_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(evaluator.device_stream())));
  return result;
}

}  // namespace mdsim
