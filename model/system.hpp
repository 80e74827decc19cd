// System: the force-field-parameterised model a platform simulates. Units: nm, ps, kJ/mol, amu, e, rad.
// Built by model/forcefield (build_system) from a Topology and force field files; same content as OpenMM's System
// for the same inputs (HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce, NonbondedForce); other
// sources may also fill RBTorsionForce, CHARMM's harmonic impropers and CMAPTorsionForce terms.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "physics/bonded.hpp"
#include "physics/pbc.hpp"
#include "physics/pme_params.hpp"

namespace mdsim {

// The energy term (EnergyTerms field, OpenMM force group) a bonded term's energy is reported in.
enum class BondedEnergy { Bond, Angle, Torsion, RbTorsion, Improper, Cmap };
inline constexpr int kNumBondedEnergies = 6;

// Bonded terms. Each type says, for code that treats them alike (the platforms' force loops, the
// checks, molecule finding, replication): its atom count and atoms() in the order its physics
// takes them, its name in messages, its energy term, and params<T>() for
// evaluate_bonded (physics/bonded.hpp). System::for_each_bonded visits every list.
struct HarmonicBondTerm {  // E = 1/2 k (r - r0)^2
  static constexpr int kAtoms = 2;
  static constexpr const char* kName = "bond";
  static constexpr BondedEnergy kEnergy = BondedEnergy::Bond;
  int i, j;
  double length_nm;
  double k_kj_per_mol_nm2;
  std::array<int, kAtoms> atoms() const { return {i, j}; }
  void shift_atoms(int offset) { i += offset, j += offset; }
  template <typename T>
  HarmonicBondParams<T> params() const { return {T(length_nm), T(k_kj_per_mol_nm2)}; }
};

struct HarmonicAngleTerm {  // E = 1/2 k (theta - theta0)^2
  static constexpr int kAtoms = 3;
  static constexpr const char* kName = "angle";
  static constexpr BondedEnergy kEnergy = BondedEnergy::Angle;
  int i, j, k;  // j is the vertex
  double angle_rad;
  double k_kj_per_mol_rad2;
  std::array<int, kAtoms> atoms() const { return {i, j, k}; }
  void shift_atoms(int offset) { i += offset, j += offset, k += offset; }
  template <typename T>
  HarmonicAngleParams<T> params() const { return {T(angle_rad), T(k_kj_per_mol_rad2)}; }
};

struct PeriodicTorsionTerm {  // E = k (1 + cos(n phi - phase)); one entry per periodicity
  static constexpr int kAtoms = 4;
  static constexpr const char* kName = "torsion";
  static constexpr BondedEnergy kEnergy = BondedEnergy::Torsion;
  int i, j, k, l;
  int periodicity;
  double phase_rad;
  double k_kj_per_mol;
  std::array<int, kAtoms> atoms() const { return {i, j, k, l}; }
  void shift_atoms(int offset) { i += offset, j += offset, k += offset, l += offset; }
  template <typename T>
  PeriodicTorsionParams<T> params() const { return {periodicity, T(phase_rad), T(k_kj_per_mol)}; }
};

struct RbTorsionTerm {  // E = sum_n C_n cos^n(phi - pi), n = 0..5 (OpenMM's RBTorsionForce, GROMACS dihedral type 3)
  static constexpr int kAtoms = 4;
  static constexpr const char* kName = "RB torsion";
  static constexpr BondedEnergy kEnergy = BondedEnergy::RbTorsion;
  int i, j, k, l;
  std::array<double, 6> c_kj_per_mol;  // C0 .. C5
  std::array<int, kAtoms> atoms() const { return {i, j, k, l}; }
  void shift_atoms(int offset) { i += offset, j += offset, k += offset, l += offset; }
  template <typename T>
  RbTorsionParams<T> params() const {
    RbTorsionParams<T> p{};
    for (int n = 0; n < 6; ++n) p.c_kj_per_mol[n] = T(c_kj_per_mol[static_cast<std::size_t>(n)]);
    return p;
  }
};

// E = k dtheta^2 (no 1/2), dtheta the difference of the dihedral angle from theta0 the short way round:
// CHARMM's improper as OpenMM's charmm36.xml writes it (a CustomTorsionForce).
struct HarmonicImproperTerm {
  static constexpr int kAtoms = 4;
  static constexpr const char* kName = "improper";
  static constexpr BondedEnergy kEnergy = BondedEnergy::Improper;
  int i, j, k, l;  // the dihedral angle of i-j-k-l, in CHARMM's order (the central atom first)
  double theta0_rad;
  double k_kj_per_mol_rad2;
  std::array<int, kAtoms> atoms() const { return {i, j, k, l}; }
  void shift_atoms(int offset) { i += offset, j += offset, k += offset, l += offset; }
  template <typename T>
  HarmonicImproperParams<T> params() const { return {T(theta0_rad), T(k_kj_per_mol_rad2)}; }
};

// One CMAP grid (OpenMM's CMAPTorsionForce map): energy[i + size j] at phi = i 2pi/size, psi = j 2pi/size
// (periodic; index 0 at angle 0, so a table tabulated from -180 degrees is shifted by size/2 on reading).
struct CmapMap {
  int size = 0;
  std::vector<double> energy_kj_per_mol;  // size * size values
};

// E = map(phi, psi) by bicubic interpolation (physics/cmap.hpp); the maps' patch coefficients are shared by
// every term (System::cmap_maps, tabulated by model/cmap's make_cmap_table for both platforms).
struct CmapTorsionTerm {
  static constexpr int kAtoms = 8;
  static constexpr const char* kName = "CMAP torsion";
  static constexpr BondedEnergy kEnergy = BondedEnergy::Cmap;
  std::array<int, kAtoms> atom;  // phi's four atoms, then psi's four
  int map;                       // index into System::cmap_maps
  std::array<int, kAtoms> atoms() const { return atom; }
  void shift_atoms(int offset) {
    for (int& a : atom) a += offset;
  }
  template <typename T>
  CmapTorsionParams<T> params() const { return {map}; }
};

struct NonbondedException {  // replaces the normal pair interaction of i and j
  int i, j;
  double charge_product_e2;  // 0 with epsilon 0 = excluded pair
  double sigma_nm;
  double epsilon_kj_per_mol;
};

struct DistanceConstraint {
  int i, j;
  double distance_nm;
};

struct RigidWater {  // SETTLE triple (also present as three DistanceConstraints)
  int oxygen, hydrogen1, hydrogen2;
  double oh_distance_nm, hh_distance_nm;
};

enum class NonbondedMethod { NoCutoff, CutoffNonPeriodic, CutoffPeriodic, PME };

// The methods that need a periodic box.
constexpr bool is_periodic(NonbondedMethod m) { return m == NonbondedMethod::CutoffPeriodic || m == NonbondedMethod::PME; }

struct NonbondedSettings {
  NonbondedMethod method = NonbondedMethod::PME;
  double cutoff_nm = 1.0;
  double ewald_tolerance = 5.0e-4;
  std::optional<double> switch_distance_nm;  // none = no switching function
  bool dispersion_correction = true;
  double reaction_field_dielectric = 78.3;   // for the cutoff methods, as OpenMM
  // PME grid size policy (config key system.pme_grid), the same on every platform:
  //   Exact (default): OpenMM's formula as is, as OpenMM's Reference platform (which produced the
  //     numbers under shared/reference) uses it; sizes may have large prime factors (111 = 3*37).
  //   FftFriendly: each size rounded up to the next one with prime factors 2, 3, 5, 7 only
  //     (legal_fft_dimension), as OpenMM's CUDA and OpenCL platforms do; fast FFTs, a grid never
  //     coarser than Exact's, so the Ewald error stays within ewald_tolerance.
  PmeGridSizes pme_grid = PmeGridSizes::Exact;
};

// The PME parameters (alpha, grid) for these settings in this box: the one place every platform
// and command takes them from.
inline PmeParameters choose_pme_parameters(const Boxd& box, const NonbondedSettings& nb) {
  return choose_pme_parameters(box, nb.cutoff_nm, nb.ewald_tolerance, nb.pme_grid);
}

struct System {
  // per particle
  std::vector<double> mass_amu;
  std::vector<double> charge_e;
  std::vector<double> sigma_nm;
  std::vector<double> epsilon_kj_per_mol;

  std::vector<HarmonicBondTerm> bonds;
  std::vector<HarmonicAngleTerm> angles;
  std::vector<PeriodicTorsionTerm> torsions;  // propers and impropers
  std::vector<RbTorsionTerm> rb_torsions;
  std::vector<HarmonicImproperTerm> impropers;  // harmonic (CHARMM); periodic impropers are in torsions
  std::vector<CmapTorsionTerm> cmap_torsions;
  std::vector<CmapMap> cmap_maps;               // the grids cmap_torsions refer to
  std::vector<NonbondedException> exceptions;
  std::vector<DistanceConstraint> constraints;
  std::vector<RigidWater> rigid_waters;

  NonbondedSettings nonbonded;
  std::optional<Boxd> box;  // required for periodic methods

  int num_particles() const { return static_cast<int>(mass_amu.size()); }

  // Calls f(list) for every bonded term list, in this order (BondedTermTypes' order).
  template <typename F>
  void for_each_bonded(F&& f) const {
    f(bonds);
    f(angles);
    f(torsions);
    f(rb_torsions);
    f(impropers);
    f(cmap_torsions);
  }
  template <typename F>
  void for_each_bonded(F&& f) {
    f(bonds);
    f(angles);
    f(torsions);
    f(rb_torsions);
    f(impropers);
    f(cmap_torsions);
  }
};

// The bonded term types, in for_each_bonded's order (the CUDA platform's device lists follow it).
using BondedTermTypes = std::tuple<HarmonicBondTerm, HarmonicAngleTerm, PeriodicTorsionTerm, RbTorsionTerm,
                                   HarmonicImproperTerm, CmapTorsionTerm>;

}  // namespace mdsim
