// System: the force-field-parameterised model a platform simulates. Units: nm, ps, kJ/mol, amu, e, rad.
// Built by model/forcefield (build_system) from a Topology and force field files; same content as OpenMM's System
// for the same inputs (HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce, NonbondedForce); other
// sources may also fill RBTorsionForce, CHARMM's harmonic impropers, Urey-Bradley terms and CMAPTorsionForce terms.
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
enum class BondedEnergy { Bond, Angle, Torsion, RbTorsion, Improper, Cmap, UreyBradley };
inline constexpr int kNumBondedEnergies = 7;

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

// CHARMM's Urey-Bradley term on the outer atoms of an angle: E = 1/2 k (r13 - r0)^2, the physics of
// HarmonicBondTerm (OpenMM puts these in a HarmonicBondForce of their own). Its own energy term (as OpenMM's
// references report it), and not a chemical bond: System::bonds, the topology's bonds and the constraints
// applied by bond never hold it.
struct UreyBradleyTerm {
  static constexpr int kAtoms = 2;
  static constexpr const char* kName = "Urey-Bradley";
  static constexpr BondedEnergy kEnergy = BondedEnergy::UreyBradley;
  int i, k;  // the angle's outer atoms
  double r13_nm;
  double k_kj_per_mol_nm2;
  std::array<int, kAtoms> atoms() const { return {i, k}; }
  void shift_atoms(int offset) { i += offset, k += offset; }
  template <typename T>
  HarmonicBondParams<T> params() const { return {T(r13_nm), T(k_kj_per_mol_nm2)}; }
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

// A virtual site (OpenMM's VirtualSite): a massless particle whose position is a function of its parents'
// positions, set before each force evaluation; the force on it is spread onto the parents (the chain rule of that
// function). Mass 0: not integrated, not constrained, no degrees of freedom, no kinetic energy, not moved by the
// minimiser. Types and weights as OpenMM's TwoParticleAverageSite, ThreeParticleAverageSite, OutOfPlaneSite and
// LocalCoordinatesSite (three parents).
enum class VirtualSiteType { TwoParticleAverage, ThreeParticleAverage, OutOfPlane, LocalCoordinates };

struct VirtualSite {
  int particle = -1;  // the site itself
  VirtualSiteType type = VirtualSiteType::TwoParticleAverage;
  int num_parents = 2;             // 2 for TwoParticleAverage, else 3
  std::array<int, 3> parents{};    // parents[0..num_parents)
  // TwoParticleAverage, ThreeParticleAverage: r = sum_i weights[i] r_i.
  // OutOfPlane: weights = {w12, w13, wcross}: r = r1 + w12 r12 + w13 r13 + wcross (r12 x r13), rij = rj - ri.
  std::array<double, 3> weights{};
  // LocalCoordinates: origin = sum w_o r_i, x dir = sum w_x r_i, y dir = sum w_y r_i; z = x cross y, y = z cross x,
  // each normalised; r = origin + p.x x + p.y y + p.z z.
  std::array<double, 3> origin_weights{}, x_weights{}, y_weights{};
  Vec3d local_position_nm{};
  void shift_atoms(int offset) {
    particle += offset;
    for (int k = 0; k < num_parents; ++k) parents[static_cast<std::size_t>(k)] += offset;
  }
};

// Pair-specific Lennard-Jones by atom type (NBFIX): AMBER's LJ A/B tables where they break the combining rule,
// GROMACS's [nonbond_params], CHARMM's NBFIX, OpenMM's tabulated CustomNonbondedForce (acoef(type1,type2)/r^12 -
// bcoef(type1,type2)/r^6 with Discrete2DFunctions). When System::lj_types is set, a pair that is not an exception
// interacts by E = c12/r^12 - c6/r^6 with its two types' entries, and the per-particle sigma/epsilon are not used
// for pairs (exceptions keep their own sigma/epsilon; the dispersion correction sums over type pairs).
struct LjTypeTable {
  int num_types = 0;
  std::vector<int> particle_type;           // per particle, 0 .. num_types - 1
  std::vector<double> c12_kj_per_mol_nm12;  // [t1 * num_types + t2], symmetric
  std::vector<double> c6_kj_per_mol_nm6;    // [t1 * num_types + t2], symmetric
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
  std::vector<UreyBradleyTerm> urey_bradleys;   // CHARMM's 1-3 terms (not in bonds)
  std::vector<NonbondedException> exceptions;
  std::vector<DistanceConstraint> constraints;
  std::vector<RigidWater> rigid_waters;
  std::vector<VirtualSite> virtual_sites;  // their particles have mass 0
  std::optional<LjTypeTable> lj_types;     // pair-specific LJ (NBFIX); none = combining rule on sigma/epsilon

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
    f(urey_bradleys);
  }
  template <typename F>
  void for_each_bonded(F&& f) {
    f(bonds);
    f(angles);
    f(torsions);
    f(rb_torsions);
    f(impropers);
    f(cmap_torsions);
    f(urey_bradleys);
  }
};

// The bonded term types, in for_each_bonded's order (the CUDA platform's device lists follow it).
using BondedTermTypes = std::tuple<HarmonicBondTerm, HarmonicAngleTerm, PeriodicTorsionTerm, RbTorsionTerm,
                                   HarmonicImproperTerm, CmapTorsionTerm, UreyBradleyTerm>;

}  // namespace mdsim
