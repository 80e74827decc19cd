// From a RunConfig to what a platform simulates: read the structure, load the force fields, build
// the System (OpenMM's createSystem semantics), validate the settings against the structure (box
// present for periodic methods, cutoff within half the box), and tile it when `replicate` asks; or read a
// topology file (a serialized OpenMM System, an AMBER prmtop, a GROMACS top) with its coordinates
// (system.topology, system.coordinates).
#pragma once

#include <string>
#include <vector>

#include "io/topology_file.hpp"
#include "model/run_config.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim {

struct Model {
  Topology topology;                 // bonds filled; replicated when asked
  System system;
  std::vector<Vec3d> positions_nm;   // initial coordinates (the structure file's)
  std::vector<std::string> forcefield_files;  // every XML file read, in order
  // The coordinate file's velocities (a .gro, AMBER restart or serialized State that has them; nm/ps), for
  // run.initial_velocities: from_coordinates; empty when it has none.
  std::vector<Vec3d> velocities_nm_per_ps;
  // A topology's own position restraints (GROMACS [position_restraints] under their define), about
  // positions_nm: in force for the whole run (engine/simulation: RunSetup::topology_restraints).
  std::vector<TopologyPositionRestraint> position_restraints;
};

// Throws InputError ("file:line:column: ...") for problems the user must fix. A config with system.topology
// takes build_system_xml_model's path (.xml) or build_topology_file_model's (.prmtop, .top), any other the
// templates' (structure + force fields).
Model build_model(const RunConfig& config);

// A serialized OpenMM System (system.topology) with its coordinates (system.coordinates: a PDB or PDBx/mmCIF file,
// whose topology names the atoms, or a serialized State, with a minimal topology from the System and a notice):
// the System as io/system_xml reads it (pme_grid the config's), the coordinates' box for a periodic System when a
// State gives one (else the System's default box), the structure's bonds the System's (model/system_analysis).
// InputError for an atom count that differs from the particle count (naming both files and counts), overlapping
// atoms, a cutoff longer than half the box. Not replicated (build_model does that).
Model build_system_xml_model(const RunConfig& config);

// An AMBER prmtop or GROMACS top (system.topology) with its coordinates (system.coordinates: AMBER inpcrd/rst7,
// GROMACS .gro, or PDB / PDBx/mmCIF), as OpenMM's AmberPrmtopFile / GromacsTopFile createSystem with the config's
// keys as its arguments (nonbonded_method, cutoff, ewald_tolerance, switch_distance, dispersion_correction,
// constraints, rigid_water, hydrogen_mass; include_dirs and defines for GROMACS). The box: the coordinates', else
// the prmtop's, else system.box.
Model build_topology_file_model(const RunConfig& config);

// Whether every component of the two boxes' vectors agrees within tolerance_nm (0: the same box, bit for bit).
bool same_box(const Boxd& a, const Boxd& b, double tolerance_nm);

// A coordinate file, its format chosen by name: PDB / PDBx/mmCIF (any name is_structure_path takes; its atoms into
// *structure when given), a serialized State (.xml, .xml.gz), GROMACS .gro, CHARMM .crd/.cor, else AMBER inpcrd/rst7.
// The count is the caller's to check.
CoordinateFile read_coordinate_file(const std::string& path, Topology* structure = nullptr);

// "notice: FILE: NOTE" on stderr, one line per note.
void print_notices(const std::string& file, const std::vector<std::string>& notes);

// Tiles a periodic model nx × ny × nz times along its box vectors (copies of every particle, term,
// exception, constraint, virtual site, residue, velocity and position restraint; CMAP maps and the LJ type table
// shared, each copy's particles keeping their LJ types; the box grows accordingly).
Model replicate_model(const Model& model, const std::array<int, 3>& counts);

// InputError, at the first atom's line, when two atoms are closer than kOverlapDistanceNm (model/overlaps.hpp),
// naming both atoms and the fix.
void check_overlaps(const Topology& topology);

// Number of water molecules (residues named HOH, WAT, TIP3, SOL).
int count_waters(const Topology& topology);

}  // namespace mdsim
