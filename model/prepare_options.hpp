// The settings of `mdsim prepare` (prepare/prepare.hpp): from a structure as it comes from the PDB (heavy atoms
// only, PDB or PDBx/mmCIF) to a simulation-ready system, as OpenMM's Modeller does: hydrogens at a pH, a box
// of water, neutralising ions and salt, and a ready config for `mdsim run`. Parsed from the command line
// (app) or a `prepare:` config section (io/prepare_config). Units: nm, ps, K, mol/L (molar), pH.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mdsim {

// The periodic box around the solute (OpenMM 8's Modeller.addSolvent boxShape): a cube, a rhombic
// dodecahedron (xy-square form) or a truncated octahedron, each with the same minimum image distance
// (solute extent + 2 × padding); or an explicit rectangular box.
enum class BoxShape { Cube, Dodecahedron, Octahedron };

struct PrepareOptions {
  // Templates, charges, radii. Until a list is given (forcefield_given), the water file follows water_model:
  // amber14/tip3p.xml, or amber14/tip4pew.xml for tip4pew (prepare_forcefields, prepare/prepare.hpp).
  std::vector<std::string> forcefield{"amber14-all.xml", "amber14/tip3p.xml"};
  bool forcefield_given = false;
  // Heterogens (PDBFixer's removeHeterogens): every residue but standard amino acids, nucleotides and water
  // removed before hydrogens are added, except those whose names keep_heterogens lists (upper case).
  bool remove_heterogens = false;
  std::vector<std::string> keep_heterogens;
  // Hydrogens.
  double ph = 7.0;
  std::map<std::string, std::string> variants;  // "A:45" or "A:45B" (chain:resSeq[iCode]) -> HID, HIE, ASH, CYX, ...
  // Solvent.
  bool solvate = true;
  double padding_nm = 1.0;
  std::optional<std::array<double, 3>> box_nm;  // explicit rectangular box edges; overrides padding
  BoxShape box_shape = BoxShape::Cube;
  std::string water_model = "tip3p";  // tip3p | tip4pew (4-site: each water gets its extra particle M)
  // Ions: neutralise, then salt to ionic_strength (not counting the neutralising ions).
  bool neutralize = true;
  double ionic_strength_molar = 0.15;
  std::string positive_ion = "Na+";  // Na+ | K+
  std::string negative_ion = "Cl-";  // Cl-
  std::uint64_t seed = 1;            // which waters become ions
  // Chain breaks (C to the next N farther than 0.2 nm): an error, or split the chain there (each piece gets
  // its own termini).
  bool split_chain_breaks = false;
  // The `mdsim run` config written next to the structure (--config): its equilibration protocol.
  double restraint_k_kj_per_mol_nm2 = 1000.0;  // heavy atoms of the solute restrained while equilibrating
  double nvt_time_ps = 100.0;
  double npt_time_ps = 100.0;
  double production_time_ps = 1000.0;
  double temperature_k = 300.0;
  double pressure_bar = 1.0;
  double cutoff_nm = 1.0;
};

// The file names `mdsim prepare` reads and writes (relative to the working directory, or to the settings
// file's folder when they come from a `prepare:` section).
struct PrepareFiles {
  std::string input;    // PDB or PDBx/mmCIF (.pdb, .ent, .cif, .mmcif, optionally .gz)
  std::string output;   // the prepared structure; "" = <input stem>_prepared.pdb (or .cif above 99,999 atoms)
  std::string config;   // "" = none; else the `mdsim run` config to write
};

const char* to_string(BoxShape shape);

}  // namespace mdsim
