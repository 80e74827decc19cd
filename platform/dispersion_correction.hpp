// Long-range dispersion correction for periodic cutoff methods, as OpenMM's
// NonbondedForceImpl::calcDispersionCorrection defines it: the LJ energy missing beyond the cutoff
// (and, with a switching function, the part removed between r_switch and r_cut), for a uniform
// fluid whose pair parameters are averaged over all particle pairs, grouping particles into classes
// of equal (sigma, epsilon):
//   E = 8 pi N^2 / V * ( <eps sigma^12>/(9 rc^9) - <eps sigma^6>/(3 rc^3) + <eps J(sigma)> ),
//   J(sigma) = int_{rs}^{rc} (sigma^12 r^-10 - sigma^6 r^-4) (1 - S(r)) dr   (0 without switching),
// where <.> averages over the N(N+1)/2 pairs i <= j. Exceptions do not change it. With a type table
// (System::lj_types) the average is over type pairs of c12/c6 instead (table_dispersion_coefficient).
#pragma once

#include "model/system.hpp"

namespace mdsim {

// Coefficient C (kJ/mol nm^3) with E_dispersion = C / V; 0 for non-periodic methods or when the
// correction is switched off.
double dispersion_correction_coefficient(const System& system);

// J(sigma) above (nm^-3 ... times sigma^6 units): the switching-region integral, by composite
// Gauss-Legendre quadrature on geometrically graded panels (exact to double rounding for any
// 0 < r_switch < r_cut).
double dispersion_switch_integral(double sigma_nm, double r_switch_nm, double r_cut_nm);

// The switching region's integrals for a type table's c12/c6 (System::lj_types):
// r10 = int_{rs}^{rc} r^-10 (1 - S(r)) dr (nm^-9), r4 = int_{rs}^{rc} r^-4 (1 - S(r)) dr (nm^-3), by the same quadrature.
struct DispersionSwitchIntegrals {
  double r10, r4;
};
DispersionSwitchIntegrals dispersion_switch_integrals(double r_switch_nm, double r_cut_nm);

}  // namespace mdsim
