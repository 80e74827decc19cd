// `mdsim prepare`: a structure as it comes from the Protein Data Bank (PDB or PDBx/mmCIF, heavy atoms only)
// made ready to simulate, as OpenMM's Modeller (or PDBFixer) would: chains checked for gaps, hydrogens at a
// pH (prepare/hydrogens), a box of water and ions (prepare/solvent), the whole checked against the force
// field, then written (PDB, or PDBx/mmCIF above 99,999 atoms) with an `mdsim run` config holding an
// equilibration protocol (prepare/protocol). Units: nm, ps, K, bar, mol/L, e.
#pragma once

#include <string>
#include <vector>

#include "model/prepare_options.hpp"
#include "model/topology.hpp"
#include "prepare/heterogens.hpp"
#include "prepare/hydrogens.hpp"
#include "prepare/solvent.hpp"

namespace mdsim {

struct PrepareReport {
  std::string input;                 // the structure read
  std::vector<std::string> notes;    // what the reader and the steps want the user to know
  int input_atoms = 0, input_residues = 0, input_chains = 0;
  int chains_split = 0;              // chain breaks split (chain_breaks: split)
  bool heterogens_removed = false;   // remove_heterogens asked for
  HeterogenReport heterogens;
  int input_waters = 0;              // water molecules the input held (kept; solvent adds more around them)
  int input_waters_given_sites = 0;  // of those, the ones that got their extra particles (4-site water models)
  HydrogenReport hydrogens;
  int solute_charge_e = 0;           // net charge of the protonated solute (rounded)
  bool solvated = false;
  SolventReport solvent;
  IonReport ions;
  int final_charge_e = 0;
  int atoms = 0;                     // atoms written
};

struct PreparedSystem {
  Topology topology;                 // bonds filled, positions_nm, box (when solvated or from the input)
  PrepareReport report;
};

// The force-field files prepare loads and writes into the run config: options.forcefield, with the default's
// amber14/tip3p.xml replaced by amber14/<water_model>.xml unless a list was given (forcefield_given). InputError
// when a given list names the amber14 water file of the other bundled model (amber14/tip3p.xml with tip4pew).
std::vector<std::string> prepare_forcefields(const PrepareOptions& options);

// Runs every step. InputError (located in the input file, or naming the option) for what the user must fix:
// a folder or an unreadable or unknown input, overlapping atoms, a chain break (unless split), residues without a
// template or with missing heavy atoms (every such residue in one message), a lone amino acid, a variant for a
// residue that does not exist or cannot take it (CYX without a disulfide partner), a keep list without
// remove_heterogens or naming no heterogen of the input, a box too small for the cutoff, a salt concentration
// that cannot be reached.
PreparedSystem prepare_system(const PrepareFiles& files, const PrepareOptions& options);

// What the files need, checked before any work: the input is not a folder; each output is a .pdb/.cif (structure)
// file in an existing folder, neither an input (the structure, the settings file `settings_file`, "" for none) nor
// the other output (io/output_paths). InputError naming the option otherwise. write_prepared checks the same again.
void check_prepare_files(const PrepareFiles& files, const std::string& settings_file);

// The output file name: files.output, or <input stem>_prepared.pdb (.cif above 99,999 atoms).
std::string prepared_structure_path(const PrepareFiles& files, int atoms);

// Writes the prepared structure (PDB or PDBx/mmCIF by the name's extension) and, when files.config is set,
// the `mdsim run` config; both whole or not at all (each through a partial file). Returns the paths written.
std::vector<std::string> write_prepared(const PreparedSystem& prepared, const PrepareFiles& files,
                                        const PrepareOptions& options, const std::string& settings_file = "");

// The summary `mdsim prepare` prints: what was read, added and chosen.
std::string prepare_summary(const PreparedSystem& prepared);

}  // namespace mdsim
