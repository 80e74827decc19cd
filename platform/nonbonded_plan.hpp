// What every platform derives from a System's nonbonded settings before it sees positions, in one
// place: the checks (InputError for settings the user must fix, RuntimeError for an inconsistent
// System), the Coulomb method and cutoffs of the pair step, the reaction-field constants, the PME
// parameters (alpha, grid: one grid for every platform), the dispersion-correction coefficient, the
// Ewald self energy and the exclusion partners of every particle.
// Units: nm, e, kJ/mol.
#pragma once

#include <cstddef>
#include <vector>

#include "physics/nonbonded.hpp"
#include "physics/pbc.hpp"
#include "physics/pme_params.hpp"
#include "model/system.hpp"

namespace mdsim {

// RuntimeError unless the per-particle arrays have one value per particle, every term refers to
// particles that exist, no sigma or epsilon is negative, no exception pairs a particle with
// itself or repeats a pair, every CMAP map is at least 2 x 2 with size * size finite energies and
// every CMAP torsion refers to one of them.
void validate_system(const System& system);

// InputError unless the box has positive diagonal elements and, for a periodic method, the cutoff
// is at most half the smallest box height.
void check_periodic_box(const NonbondedSettings& settings, const Boxd& box);

CoulombMethod coulomb_method(NonbondedMethod method);

struct NonbondedPlan {
  NonbondedMethod method = NonbondedMethod::NoCutoff;
  CoulombMethod coulomb = CoulombMethod::Plain;
  bool periodic = false;
  bool pme = false;
  double cutoff_nm = 0;     // infinity for NoCutoff
  bool switching = false;   // LJ switching function (never with NoCutoff)
  PairConstants<double> pair{};  // cutoff, switch distance, Ewald alpha (PME), reaction field (cutoff methods)
  PmeParameters pme_parameters;  // valid when pme
  double dispersion_coefficient = 0;       // kJ/mol nm^3: E_disp = coefficient / V (periodic only)
  double self_energy_kj_per_mol = 0;       // Ewald self energy of all charges (PME only), summed in order
  // Every exception partner of each particle (both directions, exception order), CSR layout.
  std::vector<int> exclusion_start, exclusion_partner;
};

// An exception's parameters for the pair step (physics/nonbonded.hpp), computed in double
// and rounded once to T.
template <typename T>
ExceptionParams<T> exception_params(const System& system, const NonbondedException& e) {
  return {T(e.charge_product_e2), T(e.sigma_nm), T(e.epsilon_kj_per_mol),
          T(system.charge_e[static_cast<std::size_t>(e.i)] * system.charge_e[static_cast<std::size_t>(e.j)])};
}

// Validates the System (validate_system, the cutoff, switching distance, Ewald tolerance and box)
// and plans its nonbonded interactions.
NonbondedPlan plan_nonbonded(const System& system);

// PME: |sum_j M(j+1) exp(2 pi i m j / n)|^2 for m = 0..n-1 (n >= kPmeOrder), the B-spline moduli of
// one grid axis, as both PME solvers divide by them. Where it vanishes (m = n/2 for even n and
// even-degree splines) it is replaced by the mean of its neighbours, as OpenMM's reference PME does.
std::vector<double> pme_bspline_moduli(int n);

}  // namespace mdsim
