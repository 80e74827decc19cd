// Topology + force field -> System, as OpenMM's app.ForceField.createSystem does for the AMBER force fields:
// topology bonds (OpenMM's residues.xml standard bonds, disulfides, CONECT; create_topology_bonds, called where
// the topology is read), then build_system: residue templates matched by bonded graph (independent of atom
// names), per-particle parameters, bond/angle/torsion terms by type/class lookup with OpenMM's priority and
// improper-ordering rules, 1-2/1-3 exclusions and scaled 1-4 exceptions, constraints, rigid water and hydrogen
// mass repartitioning. Term order equals OpenMM's. The steps are separate generators
// (model/forcefield_generators.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/forcefield_data.hpp"
#include "model/run_config.hpp"  // ConstraintMode
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim {

struct ForceFieldOptions {
  ConstraintMode constraints = ConstraintMode::None;  // None | HBonds | AllBonds | HAngles (OpenMM's meaning)
  bool rigid_water = true;  // HOH residues fully rigid (O-H and H-H constraints, no water angle term, SETTLE)
  std::optional<double> hydrogen_mass_amu;  // set: hydrogens get this mass, taken from their bonded heavy atom
  bool flexible_constraints = false;  // keep bond/angle terms of constrained DOFs (OpenMM flexibleConstraints)
  NonbondedSettings nonbonded;        // copied into System::nonbonded
};

// What build_system chose for each residue (same order as Topology::residues).
struct TemplateAssignment {
  std::vector<std::string> residue_template;  // name of the matched template per residue
};

// Create Topology::bonds as OpenMM's PDBFile does: standard bonds by residue and atom name from residues.xml
// (names first mapped through pdbNames.xml), peptide C-N and nucleic O3'-P bonds between consecutive residues
// of a chain, CYS SG-SG disulfides closer than 0.3 nm, then CONECT bonds not already present (metal rules as
// OpenMM). Replaces any bonds already there. InputError when the topology's indices are inconsistent.
void create_topology_bonds(Topology& topology, const StandardResidueData& standard);

// Build the System; the topology is not changed. Reads topology.bonds, which create_topology_bonds must have filled
// (without them, residues with bonds match no template). Throws InputError with a one-line message ("pdb:line: ...") when a residue matches no
// template, an atom's element is used by no template, several templates with different parameters match, or a
// periodic nonbonded method is asked for without a box. Templates' <VirtualSite>s become System::virtual_sites
// (mass 0, parents in the same residue) when the topology has their extra particles (element-less atoms).
System build_system(const Topology& topology, const ForceFieldData& forcefield, const ForceFieldOptions& options,
                    TemplateAssignment* assignment = nullptr);

// A residue that matches no template: what build_system would throw for it, to list every such residue at once
// (mdsim prepare) instead of the first.
struct ResidueTemplateProblem {
  int residue = -1;           // index into Topology::residues
  int line = 0;               // where the message is located: the residue's line (an atom's for a wrong element)
  bool unknown_name = false;  // no template has the residue's name or a form of it (a ligand without its XML)
  std::string message;        // build_system's message for it, without "file:line: "
};

// Every residue (chain order) that matches no template of `forcefield`; empty when build_system's template matching
// would succeed. Throws InputError as build_system does for an inconsistent topology or an atom whose element no
// template uses. Reads topology.bonds as build_system does.
std::vector<ResidueTemplateProblem> residues_without_template(const Topology& topology,
                                                              const ForceFieldData& forcefield);

}  // namespace mdsim
