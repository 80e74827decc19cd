// Structure reader for PDB and PDBx/mmCIF (and their .gz) through gemmi, for structures as they come
// from the Protein Data Bank (`mdsim prepare`) and mmCIF inputs of `mdsim run`:
//  - .pdb / .ent: gemmi's PDB reader; a new chain at a chain ID change or after TER (as OpenMM's
//    PDBFile), names trimmed, elements from columns 77-78 (else gemmi's guess from the name), CONECT
//    records between kept atoms, CRYST1.
//  - .cif / .mmcif: the first data block's _atom_site loop read as OpenMM 7.7's PDBxFile does: atom
//    name auth_atom_id (else label_atom_id), residue name auth_comp_id (else label_comp_id), residue
//    number auth_seq_id (else label_seq_id) with pdbx_PDB_ins_code, chain auth_asym_id (label_asym_id
//    when that has more distinct values), a new chain where either changes; element type_symbol;
//    _cell; bonds of _struct_conn (covale, disulf, modres) as CONECT pairs.
//  - Both: the first model only (a note says so when there are more); alternate locations resolved
//    per residue, as a whole: the label with the highest mean occupancy wins, ties the first; residues
//    of one number with different names (microheterogeneity) keep only the one holding that label (notes
//    count what was dropped); the box reduced exactly as read_pdb's CRYST1 path (reduced_box_from_cell).
// Bad input is an InputError "path[:line]: what, and the fix": a file gemmi cannot parse (its message,
// at its line), an mmCIF without _atom_site coordinates, an unknown element, no atoms, an unreadable .gz.
#pragma once

#include <string>
#include <vector>

#include "model/topology.hpp"

namespace mdsim {

struct StructureFile {
  Topology topology;               // bonds empty: create_topology_bonds (model/forcefield.hpp) fills them
  std::vector<std::string> notes;  // what the user should know: "model 1 of 5 used", "altloc B dropped for 12 atoms"
};

// Reads a PDB or PDBx/mmCIF file, chosen by extension (.pdb, .ent, .cif, .mmcif, each optionally .gz;
// another name by its content).
StructureFile read_structure(const std::string& path);

// The same from a file's (uncompressed) text; `source` names it in messages and picks the format as above.
StructureFile read_structure_text(const std::string& text, const std::string& source);

// True for names read_structure reads as PDBx/mmCIF (.cif, .mmcif, .cif.gz, .mmcif.gz; any case).
bool is_mmcif_path(const std::string& path);
// A name the structure reader's formats go by: .pdb, .ent, .cif, .mmcif or .pdbx, each also .gz (any case).
bool is_structure_path(const std::string& path);

// The structure of a run (`system.structure`): read_pdb (OpenMM's PDBFile semantics) for a plain
// .pdb/.ent or any other name, read_structure for mmCIF and gzip-compressed files (its notes, if any, are
// appended to `notes`).
Topology read_run_structure(const std::string& path, std::vector<std::string>* notes = nullptr);

}  // namespace mdsim
