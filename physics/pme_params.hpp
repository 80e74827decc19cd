// Choice of the Ewald splitting parameter and the PME grid from the cutoff and the Ewald error
// tolerance, as OpenMM 7.7's NonbondedForceImpl::calcPMEParameters does (checked against every
// reference JSON under shared/reference):
//   alpha = sqrt(-ln(2 tol)) / cutoff
//   n_d   = max(6, ceil(2 alpha L_d / (3 tol^(1/5))))   with L_d the diagonal element of box vector d.
// OpenMM's Reference platform (which produced the reference numbers) uses these sizes as they are
// (e.g. 26 = 2*13, 37); its GPU platforms round each up to a size with small prime factors
// (`legal_fft_dimension`). Which of the two mdsim does is the config's choice (`PmeGridSizes`,
// `system.pme_grid`), the same on every platform, so the CPU and CUDA platforms use one grid.
#pragma once

#include <cmath>
#include <initializer_list>

#include "physics/pbc.hpp"

namespace mdsim {

struct PmeParameters {
  double alpha_per_nm = 0.0;
  int grid[3] = {0, 0, 0};
};

inline double ewald_alpha_per_nm(double cutoff_nm, double ewald_tolerance) {
  return std::sqrt(-std::log(2.0 * ewald_tolerance)) / cutoff_nm;
}

// Smallest size >= n whose only prime factors are 2, 3, 5 and 7.
inline int legal_fft_dimension(int n) {
  if (n < 1) n = 1;
  for (int candidate = n;; ++candidate) {
    int rest = candidate;
    for (int f : {2, 3, 5, 7})
      while (rest % f == 0) rest /= f;
    if (rest == 1) return candidate;
  }
}

// How the PME grid size along each box vector follows from OpenMM's formula above.
enum class PmeGridSizes {
  Exact,        // the formula's size as is: OpenMM's Reference platform (default)
  FftFriendly,  // rounded up to legal_fft_dimension: OpenMM's CUDA and OpenCL platforms; never coarser
};

inline PmeParameters choose_pme_parameters(const BoxVectors<double>& box, double cutoff_nm, double ewald_tolerance,
                                           PmeGridSizes sizes = PmeGridSizes::Exact) {
  PmeParameters p;
  p.alpha_per_nm = ewald_alpha_per_nm(cutoff_nm, ewald_tolerance);
  const double diagonal[3] = {box.a.x, box.b.y, box.c.z};
  const double denominator = 3.0 * std::pow(ewald_tolerance, 0.2);
  for (int d = 0; d < 3; ++d) {
    // Capped (far above any usable grid) so that an absurd tolerance cannot overflow the int;
    // plan_nonbonded refuses grids that large.
    const double size = std::ceil(2.0 * p.alpha_per_nm * diagonal[d] / denominator);
    const int n = size < 1.0e6 ? static_cast<int>(size) : 1000000;
    p.grid[d] = n < 6 ? 6 : n;
    // Only ever rounds up: a finer grid keeps the reciprocal-space error within the tolerance.
    if (sizes == PmeGridSizes::FftFriendly) p.grid[d] = legal_fft_dimension(p.grid[d]);
  }
  return p;
}

}  // namespace mdsim
