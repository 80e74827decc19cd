// Missing hydrogens added as OpenMM 7.7's Modeller.addHydrogens adds them: a variant per titratable residue
// chosen by pH (HIS: HID/HIE by hydrogen-bond partners above pH 6.5, HIP otherwise; ASP/GLU/LYS/CYS by the
// maxph of hydrogens.xml; CYX for a cysteine whose SG is bonded to another residue), N- and C-terminal forms
// for the first and last residue of each chain, existing hydrogens kept. Hydrogens are placed by ideal
// geometry from their parent's bonded heavy atoms, then (optionally) minimised with the force field with
// every other atom fixed, as Modeller does. A C-terminal residue without OXT gets one (as PDBFixer adds it).
// Residue names stay as in the input: template matching picks HID/HIE/HIP by the hydrogens present.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "io/hydrogen_definitions.hpp"
#include "model/forcefield_data.hpp"
#include "model/topology.hpp"

namespace mdsim {

struct HydrogenOptions {
  double ph = 7.0;
  std::map<int, std::string> variants;  // residue index -> variant ("HID", "ASH", "CYX", ...); removes hydrogens it lacks
  bool optimize = true;                 // minimise the added hydrogens with the force field
};

// The protonation form chosen for one titratable residue (HIS, ASP, GLU, LYS, CYS) or a chain end.
struct ProtonationChoice {
  int residue = -1;          // index into Topology::residues
  std::string residue_name;  // as in the input ("HIS")
  std::string chain;         // chain id
  int number = 0;            // resSeq
  char icode = ' ';
  std::string variant;       // "HIE", "ASP", "CYX", "N-terminal NH3+", "C-terminal COO-"
  std::string reason;        // "pH 7.0 > 6.5; NE2-H hydrogen-bonds O of ASP 12", "SG bonded to CYS 30", "given"
};

struct HydrogenReport {
  int added = 0;                                     // hydrogens added
  std::map<std::string, int> added_per_residue_name;  // residue name -> hydrogens added
  std::vector<ProtonationChoice> choices;            // titratable residues and chain ends, topology order
  std::vector<std::string> notes;                    // OXT added, hydrogens removed for a given variant, ...
  double max_force_before = 0.0;  // kJ/mol/nm, largest force on an added hydrogen before/after optimising
  double max_force_after = 0.0;
  int iterations = 0;             // minimiser iterations
};

// Add the missing hydrogens. `input` needs positions and its bonds (create_topology_bonds; created here when
// it has none); `forcefield` (templates and parameters; amber14-all.xml + amber14/tip3p.xml for Modeller's
// comparison) is used only to optimise, and then must match every residue. Returns a new topology: atoms of
// each residue in input order with the new hydrogens after their parent (an added OXT last), bonds created
// again, positions for every atom, box kept. The optimisation stops at 10 kJ/mol/nm on every added atom or
// after 100 L-BFGS iterations (Modeller: 50). Throws InputError, located at the residue's line, when a
// peptide residue lacks heavy atoms ("add the missing atoms with PDBFixer or model them"), or a given variant
// is not one the residue can take; InputError from build_system when the force field lacks a template.
Topology add_hydrogens(const Topology& input, const ForceFieldData& forcefield, const StandardResidueData& standard,
                       const HydrogenDefinitions& definitions, const HydrogenOptions& options,
                       HydrogenReport* report = nullptr);

// The bundled data/hydrogens.xml: from <exe dir>/../share/mdsim/data (installed), else the source tree's data/
// (MDSIM_SOURCE_DATA_DIR); InputError naming the folders searched when neither has it.
HydrogenDefinitions load_default_hydrogen_definitions();

}  // namespace mdsim
