// In-place 3-D complex FFT on a row-major grid [n0][n1][n2] (index (i*n1 + j)*n2 + k), built from
// Eigen's FFT module (unsupported/Eigen/FFT, kissfft backend: any size, mixed radix) applied along
// each axis in turn. forward: X(k) = sum_x x(x) exp(-2 pi i k.x/n); backward: exp(+2 pi i ...), with
// no 1/N scaling (the conventions of OpenMM's reference PME).
#pragma once

#include <complex>
#include <memory>
#include <vector>

namespace mdsim {

class Fft3d {
 public:
  Fft3d(int n0, int n1, int n2);
  ~Fft3d();
  Fft3d(const Fft3d&) = delete;
  Fft3d& operator=(const Fft3d&) = delete;

  void forward(std::complex<double>* grid) { transform(grid, false); }
  void backward(std::complex<double>* grid) { transform(grid, true); }

  int size(int axis) const { return n_[axis]; }

 private:
  void transform(std::complex<double>* grid, bool inverse);

  int n_[3];
  struct Plans;  // Eigen FFT objects, one per thread (their plan caches are not shared)
  std::unique_ptr<Plans> plans_;
};

}  // namespace mdsim
