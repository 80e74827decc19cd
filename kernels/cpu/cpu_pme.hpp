// Reciprocal-space Ewald sums for the CPU reference platform (double precision).
//  - CpuPme: smooth particle-mesh Ewald (Essmann et al. 1995) with order-5 B-splines on an
//    n0 x n1 x n2 grid, complex 3-D FFT (Fft3d, Eigen FFT), B-spline moduli and influence function
//    as OpenMM's reference PME (including its treatment of vanishing moduli on even grids), any
//    box in OpenMM's reduced triclinic form.
//  - ewald_reciprocal_direct: the same reciprocal energy by an explicit sum over k vectors; slow,
//    for validation.
// Neither includes the self energy (see ewald_self_energy in physics/nonbonded.hpp).
// Units: nm, e, kJ/mol; forces kJ/mol/nm.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "kernels/cpu/fft3d.hpp"
#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

class CpuPme {
 public:
  CpuPme(int nx, int ny, int nz, double alpha_per_nm);

  // Reciprocal-space energy (kJ/mol) of the charges; when forces is non-null the reciprocal forces
  // are ADDED to it.
  double compute(const std::vector<Vec3d>& positions_nm, const std::vector<double>& charges_e,
                 const Boxd& box, std::vector<Vec3d>* forces);

  double alpha_per_nm() const { return alpha_; }
  int grid_size(int axis) const { return n_[axis]; }
  // |b_d(m)|^2 of the Essmann paper for axis d, m = 0 .. n_d - 1.
  const std::vector<double>& bspline_moduli(int axis) const { return moduli_[axis]; }

 private:
  // The stages of compute, in order (the grid and the per-atom weights carry between them).
  void compute_spline_weights(const std::vector<Vec3d>& positions_nm, const Vec3d recip[3]);
  void spread_charges(const std::vector<double>& charges_e, std::size_t natoms);
  double convolve(const Boxd& box, const Vec3d recip[3]);  // the energy
  void gather_forces(const std::vector<double>& charges_e, std::size_t natoms, const Vec3d recip[3],
                     std::vector<Vec3d>& forces);

  int n_[3];
  double alpha_;
  std::vector<double> moduli_[3];
  Fft3d fft_;
  std::vector<std::complex<double>> grid_;
  // per atom: first grid index and the B-spline weights and derivatives along each axis
  std::vector<int> first_index_;
  std::vector<double> theta_, dtheta_;
};

// Explicit reciprocal Ewald sum over all k = (kx, ky, kz) != 0 with |k_d| <= kmax[d]:
// E = K/(2 pi V) sum exp(-pi^2 m^2/alpha^2)/m^2 |S(m)|^2, m the reciprocal lattice vector.
// Forces are ADDED when non-null.
double ewald_reciprocal_direct(const std::vector<Vec3d>& positions_nm, const std::vector<double>& charges_e,
                               const Boxd& box, double alpha_per_nm, const int kmax[3],
                               std::vector<Vec3d>* forces);

}  // namespace mdsim
