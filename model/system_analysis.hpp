// What a System made elsewhere (a serialized OpenMM System: io/system_xml) implies, where the template path
// (model/forcefield) knows it from the residues and force-field options instead: its rigid waters (SETTLE), which
// of OpenMM's constraint options and rigid-water settings its constraints agree with, its bonds, and a minimal
// Topology (one residue per molecule, elements from masses) for coordinates that carry no topology.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/run_config.hpp"  // ConstraintMode
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim {

// Heaviest mass (amu) a hydrogen may have, hydrogen mass repartitioning included (OpenMM allows up to ~4 amu).
inline constexpr double kMaxHydrogenMassAmu = 4.5;

// The rigid waters of `system`'s constraints, as the template path's add_rigid_waters finds them: every molecule
// (model/molecules: atoms joined by terms and constraints) of exactly three atoms whose three pairs are all
// constrained, with one atom (the oxygen) whose two constraints have equal lengths; the hydrogens in index order.
// Molecules in order of their first atom (for a structure, residue order).
std::vector<RigidWater> find_rigid_waters(const System& system);

// How the System's constraints (rigid waters aside) and waters compare with OpenMM's createSystem options.
// A hydrogen is an atom of at most kMaxHydrogenMassAmu with one bonded partner (bond terms and constraints).
struct ConstraintSummary {
  int constraints = 0;                  // outside rigid waters
  int rigid_waters = 0;                 // system.rigid_waters
  int flexible_waters = 0;              // three-atom molecules (one atom with two hydrogens) not rigid
  bool heavy_bond_constraints = false;  // a constrained bond without a hydrogen
  bool angle_constraints = false;       // a constraint closing a triangle as its longest side (H-X-H, H-O-X)
  bool unconstrained_h_bonds = false;   // a bond term with a hydrogen and no constraint
  bool unconstrained_bonds = false;     // any bond term without a constraint on the same pair
  std::pair<int, int> example{-1, -1};  // a constraint that sets the mode apart from the one below it
};
ConstraintSummary summarize_constraints(const System& system);

// Whether a `constraints:` option (None, HBonds, AllBonds, HAngles) and a `rigid_water:` setting describe the
// summarised System: None has no constraint outside rigid waters; HBonds constrains every bond with a hydrogen and
// nothing else; AllBonds every bond and no angle; HAngles every bond. rigid_water true: no flexible water; false:
// no rigid water.
bool constraints_agree(const ConstraintSummary& summary, ConstraintMode mode);
bool rigid_water_agrees(const ConstraintSummary& summary, bool rigid_water);

// The first of None, HBonds, AllBonds, HAngles the summary agrees with; where none does, the one nearest it
// (HAngles with angle constraints, else AllBonds with heavy-atom constraints, else HBonds).
ConstraintMode system_constraint_mode(const ConstraintSummary& summary);

// The System's chemical bonds: every bond term's pair and every constraint, except a constraint that is the
// longest side of a triangle of those links (an angle constraint: water H-H, H-X-H). Sorted pairs (i < j), unique.
std::vector<std::pair<int, int>> system_bonds(const System& system);

// A Topology for a System whose coordinates come without one (a serialized State): one chain "A", one residue per
// molecule (model/molecules) named HOH for a three-atom water (an atom with two hydrogens), the element symbol in
// upper case for a single atom (an ion: NA, CL), else MOL; elements from masses (element_by_mass, with mass a
// hydrogen gained by repartitioning given back to its heavy atom first); atom names the element and a count within
// the residue (O, H1, H2 for water; C1, C2, H1, ...); bonds from system_bonds; `positions` (one per particle) and
// `box` as given. InputError when the position count differs from the particle count.
Topology topology_from_system(const System& system, const std::vector<Vec3d>& positions, const std::string& source);

}  // namespace mdsim
