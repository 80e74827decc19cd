// Solvent and ions, as OpenMM's Modeller.addSolvent / _addIons (7.7; box shapes as OpenMM 8):
//  - add_solvent tiles the bundled pre-equilibrated TIP3P box (data/tip3p.pdb) over the periodic box
//    centred on the solute, drops waters whose oxygen lies closer to a solute atom than the sum of their
//    van der Waals radii (0.5612310241546864907 sigma; solute atoms with epsilon 0 count as radius 0) and
//    waters that clash with another across the periodic boundary.
//  - add_ions replaces randomly chosen waters (seeded, repeatable) by ions: first the ions that neutralise,
//    then ion pairs for the ionic strength, counted exactly as Modeller counts them.
// Units: nm, e, mol/L.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "model/system.hpp"
#include "model/topology.hpp"
#include "model/prepare_options.hpp"  // BoxShape

namespace mdsim {

struct SolventOptions {
  std::string water_model = "tip3p";  // the bundled box <model>.pdb; only tip3p is bundled
  // Box from padding: width = the solute's largest extent along x, y or z + 2 * padding (Modeller 7.7);
  // the shape's vectors (OpenMM 8's cube / rhombic dodecahedron / truncated octahedron) have that width as
  // their minimum image distance. The cube keeps every solute atom at least 2 * padding from the solute's
  // periodic images; a dodecahedron or octahedron of that width keeps at least padding (OpenMM 8's
  // guarantee) for a compact solute; for an elongated one its width is increased until it does.
  double padding_nm = 1.0;
  BoxShape shape = BoxShape::Cube;
  std::optional<std::array<double, 3>> box_nm;  // explicit rectangular box edges a, b, c; overrides padding, shape
  double cutoff_nm = 1.0;  // the nonbonded cutoff the system will run with: the box must allow it
  // Also drop a water with any atom within 0.1 nm of an atom of a water across the periodic boundary (Modeller
  // compares oxygens only and keeps pairs whose hydrogens nearly coincide, which the engine refuses as
  // overlapping atoms). False reproduces Modeller's waters exactly.
  bool drop_atom_clashes = true;
};

struct SolventReport {
  int waters_added = 0;
  int removed_near_solute = 0;        // tiled waters dropped for overlapping the solute
  int removed_boundary_clashes = 0;   // dropped for clashing with a water across the periodic boundary (oxygens, Modeller's rule)
  int removed_atom_clashes = 0;       // dropped by drop_atom_clashes
  Boxd box;                           // reduced triclinic form, nm
  double width_nm = 0;                // minimum image distance of the box
  bool enlarged = false;              // width increased to keep the solute `padding` from its images
};

// The box vectors (reduced form) of a shape with minimum image distance `width_nm`.
Boxd shaped_box(BoxShape shape, double width_nm);

// The solute (bonds filled, positions_nm set) with water added: the solute copied unchanged (its chains,
// residues, positions and bonds), then one new chain of HOH residues (atoms O, H1, H2; bonds O-H1, O-H2).
// The result's box is set. `solute_system` (build_system of `solute`) gives each atom's sigma, epsilon.
// Throws InputError for a non-positive padding, an unknown water model, a box too small for the cutoff, an
// explicit box that does not hold the solute, or a solute_system that does not match the solute.
Topology add_solvent(const Topology& solute, const System& solute_system, const SolventOptions& options,
                     SolventReport* report = nullptr);

struct IonOptions {
  bool neutralize = true;
  double ionic_strength_molar = 0.15;  // salt pairs added besides the neutralising ions
  std::string positive_ion = "Na+";    // Na+ | K+ | Li+ | Rb+ | Cs+
  std::string negative_ion = "Cl-";    // Cl- | Br- | F- | I-
  std::uint64_t seed = 1;              // which waters become ions (std::mt19937_64; same seed, same result)
  double ion_cutoff_nm = 0.05;         // no two ions closer than this (Modeller's ionCutoff)
  // Waters whose oxygen lies within this distance of a solute atom become ions only when too few other
  // waters are left (an addition to Modeller, which draws from all waters).
  double solute_distance_nm = 0.5;
};

struct IonReport {
  int positive = 0;                 // positive ions added (neutralising + salt)
  int negative = 0;                 // negative ions added
  int neutralizing = 0;             // of those, the ones added to neutralise
  int pairs = 0;                    // salt pairs
  int near_solute = 0;              // ions placed within solute_distance_nm of the solute (too few waters)
  int net_charge_before = 0;        // e, the rounded total charge passed in
  int net_charge_after = 0;
  int waters_left = 0;
  double ionic_strength_molar = 0;  // reached: pairs * 55.4 M / (waters - neutralising ions), Modeller's count
};

// The total charge as Modeller takes it: the sum of the particles' charges rounded to the nearest integer.
int rounded_total_charge(const System& system);

// `solvated` with waters (HOH residues) replaced by ions at their oxygen positions: each ion its own residue
// (NA/NA, K/K, CL/CL, ... as amber14's tip3p.xml names them; elements Na, K, Cl, ...) in one new chain after
// the others; positive ions first. total_charge_e is rounded to the nearest integer. Throws InputError for an
// unknown ion, a charge that needs more ions than there are waters, or a salt concentration that needs
// more ions than there are waters.
Topology add_ions(const Topology& solvated, double total_charge_e, const IonOptions& options,
                  IonReport* report = nullptr);

}  // namespace mdsim
