// createSystem's constraint, rigid-water and hydrogen-mass options applied to a System built from a topology file
// (AMBER prmtop, GROMACS top, CHARMM psf), as OpenMM's AmberPrmtopFile / GromacsTopFile / CharmmPsfFile do: the
// readers first build the fully flexible System (every bond and angle term, no constraints), then this.
#pragma once

#include <optional>

#include "model/run_config.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim {

struct CreationOptions {
  ConstraintMode constraints = ConstraintMode::None;  // None | HBonds | AllBonds | HAngles (OpenMM's meaning)
  bool rigid_water = true;                  // waters rigid (SETTLE), whatever `constraints` says
  std::optional<double> hydrogen_mass_amu;  // set: hydrogens get this mass, taken from their bonded heavy atom
  bool flexible_constraints = false;        // keep the bond/angle terms of constrained degrees of freedom
};

// Adds the constraints (bond lengths from the bond terms' r0; H-X-H angle constraints from the law of cosines),
// removes the bond/angle terms they make rigid (unless flexible_constraints), marks the rigid waters (SETTLE) and
// repartitions hydrogen masses. Hydrogens are known by topology's elements; waters by find_rigid_waters' rule.
void apply_creation_options(System& system, const Topology& topology, const CreationOptions& options);

}  // namespace mdsim
