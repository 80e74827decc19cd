#include "kernels/cpu/cpu_pme.hpp"

#include <algorithm>
#include <cmath>

#include "common/errors.hpp"
#include "physics/bspline.hpp"
#include "physics/nonbonded.hpp"
#include "platform/nonbonded_plan.hpp"

namespace mdsim {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Signed frequency of grid index k on an axis of n points: 0..(n+1)/2-1 positive, the rest negative.
inline int signed_frequency(int k, int n) { return k < (n + 1) / 2 ? k : k - n; }

}  // namespace

CpuPme::CpuPme(int nx, int ny, int nz, double alpha_per_nm)
    : n_{nx, ny, nz}, alpha_(alpha_per_nm), fft_(nx, ny, nz) {
  if (nx < kPmeOrder || ny < kPmeOrder || nz < kPmeOrder)
    throw RuntimeError("PME grid must have at least " + std::to_string(kPmeOrder) + " points per axis");
  if (!(alpha_per_nm > 0.0)) throw RuntimeError("PME: Ewald alpha must be positive");
  for (int d = 0; d < 3; ++d) moduli_[d] = pme_bspline_moduli(n_[d]);
  grid_.resize(static_cast<size_t>(nx) * ny * nz);
}

// 1. Grid index and B-spline weights of every atom along each axis.
void CpuPme::compute_spline_weights(const std::vector<Vec3d>& positions_nm, const Vec3d recip[3]) {
  constexpr int P = kPmeOrder;
  const size_t natoms = positions_nm.size();
  first_index_.resize(3 * natoms);
  theta_.resize(3 * P * natoms);
  dtheta_.resize(3 * P * natoms);
  for (size_t i = 0; i < natoms; ++i) {
    const Vec3d& x = positions_nm[i];
    for (int d = 0; d < 3; ++d) {
      int ti = 0;
      double w = 0.0;
      grid_position(x.x * recip[0][d] + x.y * recip[1][d] + x.z * recip[2][d], n_[d], ti, w);
      first_index_[3 * i + d] = ti;
      bspline_weights<P, double>(w, &theta_[(3 * i + d) * P], &dtheta_[(3 * i + d) * P]);
    }
  }
}

// 2. Spread the charges.
void CpuPme::spread_charges(const std::vector<double>& charges_e, size_t natoms) {
  constexpr int P = kPmeOrder;
  const int nx = n_[0], ny = n_[1], nz = n_[2];
  std::fill(grid_.begin(), grid_.end(), std::complex<double>(0.0, 0.0));
  for (size_t i = 0; i < natoms; ++i) {
    const double q = charges_e[i];
    if (q == 0.0) continue;
    const double* tx = &theta_[(3 * i + 0) * P];
    const double* ty = &theta_[(3 * i + 1) * P];
    const double* tz = &theta_[(3 * i + 2) * P];
    for (int ix = 0; ix < P; ++ix) {
      const int gx = (first_index_[3 * i] + ix) % nx;
      for (int iy = 0; iy < P; ++iy) {
        const int gy = (first_index_[3 * i + 1] + iy) % ny;
        const double qxy = q * tx[ix] * ty[iy];
        std::complex<double>* row = &grid_[(static_cast<size_t>(gx) * ny + gy) * nz];
        for (int iz = 0; iz < P; ++iz) {
          const int gz = (first_index_[3 * i + 2] + iz) % nz;
          row[gz] += qxy * tz[iz];
        }
      }
    }
  }
}

// 3. Forward FFT, multiply by the influence function, accumulate the energy (returned).
double CpuPme::convolve(const Boxd& box, const Vec3d recip[3]) {
  const int nx = n_[0], ny = n_[1], nz = n_[2];
  fft_.forward(grid_.data());
  const double factor = kPi * kPi / (alpha_ * alpha_);
  const double box_factor = kPi * box.volume();
  double energy_sum = 0.0;
  for (int kx = 0; kx < nx; ++kx) {
    const double mx = signed_frequency(kx, nx);
    const double mhx = mx * recip[0][0];
    const double bx = box_factor * moduli_[0][static_cast<size_t>(kx)];
    for (int ky = 0; ky < ny; ++ky) {
      const double my = signed_frequency(ky, ny);
      const double mhy = mx * recip[1][0] + my * recip[1][1];
      const double bxy = bx * moduli_[1][static_cast<size_t>(ky)];
      std::complex<double>* row = &grid_[(static_cast<size_t>(kx) * ny + ky) * nz];
      for (int kz = 0; kz < nz; ++kz) {
        if (kx == 0 && ky == 0 && kz == 0) {
          row[kz] = 0.0;  // the k = 0 term is left out (tin-foil boundary conditions)
          continue;
        }
        const double mz = signed_frequency(kz, nz);
        const double mhz = mx * recip[2][0] + my * recip[2][1] + mz * recip[2][2];
        const double m2 = mhx * mhx + mhy * mhy + mhz * mhz;
        const double eterm = kOneFourPiEps0 * std::exp(-factor * m2) / (m2 * bxy * moduli_[2][static_cast<size_t>(kz)]);
        energy_sum += eterm * std::norm(row[kz]);
        row[kz] *= eterm;
      }
    }
  }
  return 0.5 * energy_sum;
}

// 4. Back to real space: the grid now holds the potential convolved with the spline; the force
//    on an atom is minus its charge times the gradient of the interpolated potential.
void CpuPme::gather_forces(const std::vector<double>& charges_e, size_t natoms, const Vec3d recip[3],
                           std::vector<Vec3d>& forces) {
  constexpr int P = kPmeOrder;
  const int nx = n_[0], ny = n_[1], nz = n_[2];
  fft_.backward(grid_.data());
  for (size_t i = 0; i < natoms; ++i) {
    const double q = charges_e[i];
    if (q == 0.0) continue;
    const double* tx = &theta_[(3 * i + 0) * P];
    const double* ty = &theta_[(3 * i + 1) * P];
    const double* tz = &theta_[(3 * i + 2) * P];
    const double* dtx = &dtheta_[(3 * i + 0) * P];
    const double* dty = &dtheta_[(3 * i + 1) * P];
    const double* dtz = &dtheta_[(3 * i + 2) * P];
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int ix = 0; ix < P; ++ix) {
      const int gx = (first_index_[3 * i] + ix) % nx;
      for (int iy = 0; iy < P; ++iy) {
        const int gy = (first_index_[3 * i + 1] + iy) % ny;
        const std::complex<double>* row = &grid_[(static_cast<size_t>(gx) * ny + gy) * nz];
        for (int iz = 0; iz < P; ++iz) {
          const int gz = (first_index_[3 * i + 2] + iz) % nz;
          const double v = row[gz].real();
          fx += dtx[ix] * ty[iy] * tz[iz] * v;
          fy += tx[ix] * dty[iy] * tz[iz] * v;
          fz += tx[ix] * ty[iy] * dtz[iz] * v;
        }
      }
    }
    // Chain rule from the scaled fractional coordinates u_d = n_d s_d to Cartesian x.
    fx *= nx;
    fy *= ny;
    fz *= nz;
    Vec3d& f = forces[i];
    f.x -= q * (fx * recip[0][0] + fy * recip[0][1] + fz * recip[0][2]);
    f.y -= q * (fx * recip[1][0] + fy * recip[1][1] + fz * recip[1][2]);
    f.z -= q * (fx * recip[2][0] + fy * recip[2][1] + fz * recip[2][2]);
  }
}

double CpuPme::compute(const std::vector<Vec3d>& positions_nm, const std::vector<double>& charges_e,
                       const Boxd& box, std::vector<Vec3d>* forces) {
  Vec3d recip[3];
  reciprocal_box_vectors(box, recip);
  compute_spline_weights(positions_nm, recip);
  spread_charges(charges_e, positions_nm.size());
  const double energy = convolve(box, recip);
  if (forces == nullptr) return energy;
  gather_forces(charges_e, positions_nm.size(), recip, *forces);
  return energy;
}

double ewald_reciprocal_direct(const std::vector<Vec3d>& positions_nm, const std::vector<double>& charges_e,
                               const Boxd& box, double alpha_per_nm, const int kmax[3],
                               std::vector<Vec3d>* forces) {
  Vec3d recip[3];
  reciprocal_box_vectors(box, recip);
  // Reciprocal lattice vectors g_d (columns of recip): fractional coordinate s_d = x . g_d.
  const Vec3d g[3] = {Vec3d(recip[0][0], recip[1][0], recip[2][0]), Vec3d(recip[0][1], recip[1][1], recip[2][1]),
                      Vec3d(recip[0][2], recip[1][2], recip[2][2])};
  const size_t n = positions_nm.size();
  const double volume = box.volume();
  const double factor = kPi * kPi / (alpha_per_nm * alpha_per_nm);
  const double prefactor = kOneFourPiEps0 / (2.0 * kPi * volume);
  std::vector<double> c(n), s(n);
  double energy = 0.0;
  for (int kx = -kmax[0]; kx <= kmax[0]; ++kx)
    for (int ky = -kmax[1]; ky <= kmax[1]; ++ky)
      for (int kz = -kmax[2]; kz <= kmax[2]; ++kz) {
        if (kx == 0 && ky == 0 && kz == 0) continue;
        const Vec3d m = g[0] * double(kx) + g[1] * double(ky) + g[2] * double(kz);
        const double m2 = dot(m, m);
        const double f = prefactor * std::exp(-factor * m2) / m2;
        double sc = 0.0, ss = 0.0;
        for (size_t i = 0; i < n; ++i) {
          const double arg = 2.0 * kPi * dot(m, positions_nm[i]);
          c[i] = std::cos(arg);
          s[i] = std::sin(arg);
          sc += charges_e[i] * c[i];
          ss += charges_e[i] * s[i];
        }
        energy += f * (sc * sc + ss * ss);
        if (forces != nullptr) {
          // dE/dx_i = f * 2 * 2 pi m q_i (ss c_i - sc s_i)
          for (size_t i = 0; i < n; ++i)
            (*forces)[i] -= m * (4.0 * kPi * f * charges_e[i] * (ss * c[i] - sc * s[i]));
        }
      }
  return energy;
}

}  // namespace mdsim
