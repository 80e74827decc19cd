// Atom selections for output files (config key output.trajectory.atoms), evaluated over a Topology.
//
// Grammar (keywords case-insensitive, blanks free):
//   selection := or_expr
//   or_expr   := and_expr { "or" and_expr }
//   and_expr  := unary { "and" unary }
//   unary     := "not" unary | "(" or_expr ")" | primary
//   primary   := "all" | "none" | "protein" | "backbone" | "water" | "heavy" | "hydrogen" | index_list
//   index_list:= item { "," item },  item := N | N "-" M   (0-based atom indices, ranges inclusive)
// so "all", "protein", "water", "not water", "heavy", "0-21,30", "protein and heavy" all work.
//
//  - "protein": residue name in the standard amino acids, their protonation/disulfide variants as
//    AMBER and CHARMM name them (HID HIE HIP HSD HSE HSP CYX CYM ASH GLH LYN), a few common
//    non-standard ones (MSE SEC PYL HYP ORN) and the caps ACE NME NMA NHE NH2; also the 4-letter
//    N/C-terminal forms of the 20 standard names ("NALA", "CALA"). This is MDTraj's `is_protein`
//    for these names, extended to the variants above that MDTraj 1.9.7 does not list (HID, HIE,
//    CYX, ASH, NMA ...); MDTraj's catalogue of ~800 modified PDB residues is not copied.
//  - "backbone": the atoms named N, CA, C and O of "protein" residues (MDTraj's "backbone").
//  - "water": residue name HOH WAT SOL H2O HHO OHH OH2 TIP TIP2 TIP3 TIP4 TIP5 T3P T4P T5P SPC
//    (MDTraj's list plus the TIPnP/SPC spellings).
//  - "heavy": atoms with an element other than hydrogen/deuterium (extra particles without an
//    element are not heavy); "hydrogen": element H or D.
// The result is sorted ascending without duplicates (topology order, as trajectory readers need).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/topology.hpp"

namespace mdsim {

// Evaluates `selection` over `topology`. Throws InputError with a one-line message starting with
// `where` (e.g. "run.yaml:31:12: output.trajectory.atoms") on a syntax error, an index outside
// 0..N-1 (naming the index and N), a reversed range, or a selection that matches no atom.
std::vector<int> select_atoms(const Topology& topology, std::string_view selection,
                              const std::string& where = "atom selection");

// True for the residue names that "protein" selects (see above); "water" selects model/topology's
// is_water_residue_name.
bool is_protein_residue_name(std::string_view residue_name);

// The part of `topology` made of the given atoms (sorted, unique, in range): chains and residues
// that keep at least one atom, positions, bonds and CONECT pairs between kept atoms, renumbered
// to the new atom indices; the box is kept. Used to write the topology of a selection (trajectory
// /topology JSON, a PDB of the selected atoms).
Topology subset_topology(const Topology& topology, const std::vector<int>& atom_indices);

}  // namespace mdsim
