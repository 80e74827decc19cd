#include "kernels/cpu/fft3d.hpp"

#include <unsupported/Eigen/FFT>

#include "common/errors.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace mdsim {

struct Fft3d::Plans {
  std::vector<Eigen::FFT<double>> per_thread;
};

Fft3d::Fft3d(int n0, int n1, int n2) : n_{n0, n1, n2}, plans_(std::make_unique<Plans>()) {
  if (n0 < 1 || n1 < 1 || n2 < 1) throw RuntimeError("Fft3d: grid dimensions must be positive");
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  plans_->per_thread.resize(static_cast<size_t>(threads));
  for (auto& fft : plans_->per_thread) fft.SetFlag(Eigen::FFT<double>::Unscaled);
}

Fft3d::~Fft3d() = default;

void Fft3d::transform(std::complex<double>* grid, bool inverse) {
  using cd = std::complex<double>;
  const long n0 = n_[0], n1 = n_[1], n2 = n_[2];
  // Each axis: the grid is viewed as (outer, n, inner) with stride `inner` along the axis.
  const long lengths[3] = {n0, n1, n2};
  const long inners[3] = {n1 * n2, n2, 1};
  const long outers[3] = {1, n0, n0 * n1};
  const int max_threads = static_cast<int>(plans_->per_thread.size());
  for (int axis = 2; axis >= 0; --axis) {
    const long n = lengths[axis];
    const long inner = inners[axis];
    const long lines = outers[axis] * inner;
#pragma omp parallel num_threads(max_threads)
    {
      int tid = 0;
#ifdef _OPENMP
      tid = omp_get_thread_num();
#endif
      Eigen::FFT<double>& fft = plans_->per_thread[static_cast<size_t>(tid)];
      std::vector<cd> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
#pragma omp for schedule(static)
      for (long line = 0; line < lines; ++line) {
        const long o = line / inner;
        const long i = line % inner;
        cd* base = grid + o * n * inner + i;
        for (long k = 0; k < n; ++k) in[static_cast<size_t>(k)] = base[k * inner];
        if (inverse)
          fft.inv(out.data(), in.data(), n);
        else
          fft.fwd(out.data(), in.data(), n);
        for (long k = 0; k < n; ++k) base[k * inner] = out[static_cast<size_t>(k)];
      }
    }
  }
}

}  // namespace mdsim
