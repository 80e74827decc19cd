// What the topology-file readers share (issue "Every system users bring"): AMBER prmtop (io/amber_prmtop),
// GROMACS top (io/gromacs_top) and CHARMM psf readers each turn a topology file into a System plus a Topology
// (atoms, residues, chains, bonds; no positions), as OpenMM's AmberPrmtopFile / GromacsTopFile / CharmmPsfFile
// createSystem do with the same arguments; the coordinate readers (io/amber_coordinates, io/gro_reader) give
// positions, velocities and box. engine/model_topology_file joins them into a Model.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/run_config.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"
#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

// createSystem's arguments, as the config's `system:` keys give them (docs/config.md).
struct TopologyFileOptions {
  NonbondedSettings nonbonded;                          // method, cutoff, Ewald tolerance, switching, dispersion
  ConstraintMode constraints = ConstraintMode::HBonds;  // OpenMM's meaning
  bool rigid_water = true;
  std::optional<double> hydrogen_mass_amu;
  std::vector<std::string> include_dirs;                       // GROMACS: searched for #include after the top's folder
  std::vector<std::pair<std::string, std::string>> defines;    // GROMACS: -DNAME[=VALUE]
  std::vector<std::string> parameters;                         // CHARMM: parameter/topology/stream files
  std::optional<Boxd> box;  // the box when the coordinates carry none (periodic methods), nm
  // The most atoms a reader may build (the engine gives the coordinates' count): a GROMACS [molecules] total over it
  // is refused at its line before anything is built. Without it, the limit is 2^31 - 1 (particle indices are int).
  std::optional<long> atom_limit;
};

// A position restraint a topology file asks for (GROMACS [position_restraints], function 1, active under the
// define that guards it, usually POSRES): E = 1/2 sum_d k_d (x_d - x0_d)^2 about the atom's starting position
// (the reference positions are the run's coordinates unless the engine is given others).
struct TopologyPositionRestraint {
  int atom = -1;                                // 0-based particle index in the System
  std::array<double, 3> k_kj_per_mol_nm2{};     // force constants along x, y, z
  std::string file;                             // where it was defined
  int line = 0;
  std::string guard;                            // the conditionals it was under ("POSRES"; "" = none)
};

// A topology file's System and Topology. topology.positions_nm is empty; system.box is the file's box if it has one
// (prmtop's IFBOX), else options.box, else unset (the coordinates' box is applied later).
struct TopologyFileModel {
  System system;
  Topology topology;               // source = the topology file; atoms' line = the line that defined them, if any
  std::vector<std::string> notes;  // what the user should know (printed as notices)
  // GROMACS [position_restraints] that were active (for the engine to map onto mdsim's restraints); empty otherwise.
  std::vector<TopologyPositionRestraint> position_restraints;
};

// Positions (and, when the file has them, velocities and box) from a coordinate file.
struct CoordinateFile {
  std::string source;
  std::vector<Vec3d> positions_nm;
  std::vector<Vec3d> velocities_nm_per_ps;  // empty when the file has none
  std::optional<Boxd> box;                  // reduced form (a along x, b in the xy plane), nm
};

}  // namespace mdsim
