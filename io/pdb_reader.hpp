// PDB reader: builds a Topology (chains, residues, atoms with elements, positions in nm, CONECT
// pairs, periodic box) from a PDB file, following OpenMM 7.7's PDBFile/PdbStructure semantics:
//  - ATOM and HETATM records of the first model only (MODEL/ENDMDL); reading stops at END.
//  - A new chain when the chain identifier changes or after a TER record (even with the same ID).
//  - A new residue when resSeq, the insertion code or (without an alternate location) the residue
//    name changes. In an unnumbered residue (blank or unreadable resSeq) an atom name repeated with
//    the same alternate location starts the next residue, as in OpenMM; in a numbered residue it is
//    an error naming both lines (OpenMM silently drops such atoms).
//  - Alternate locations: the first location of each atom name is kept (as OpenMM does); atoms of
//    a point-mutation alternate whose residue name differs from the residue's are dropped.
//  - Elements from columns 77-78; when blank or unknown, inferred from the atom name like OpenMM
//    (leading digits stripped; CL, NA, MG, BE, LI, K, ZN prefixes; CA alone in its residue is
//    calcium; otherwise the first letter). "EP" marks an extra particle (element left "").
//  - Serial numbers and resSeq beyond 99,999 / 9,999 in any of the common encodings: decimal
//    that wraps (99999 -> 0 or 1), hybrid-36 ("A0000"), or VMD's hexadecimal. Wrapped serials
//    are unwrapped into TopologyAtom::serial; CONECT serials are mapped to atoms by file order.
//  - CRYST1 gives the box exactly as OpenMM's computePeriodicBoxVectors (Å -> nm by * 0.1,
//    degrees -> radians, near-zero components zeroed, then reduced); positions are Å * 0.1.
// Atom and residue names are kept as written (OpenMM's pdbNames.xml renaming is not applied).
#pragma once

#include <optional>
#include <string>

#include "model/topology.hpp"

namespace mdsim {

// Reads `path`. Throws InputError with a one-line message "path:line[:column]: ..." on bad input
// (unreadable file, malformed record, unknown element, invalid unit cell, no atoms).
Topology read_pdb(const std::string& path);

// The same from the file's text; `source` names it in messages and in Topology::source.
Topology read_pdb_text(std::string text, const std::string& source);

// A unit cell (a, b, c in Å; alpha, beta, gamma in degrees) as the reduced periodic box in nm, exactly as
// OpenMM's computePeriodicBoxVectors and reducePeriodicBoxVectors (the CRYST1 path above; io/structure_reader
// uses it for mmCIF's _cell). An invalid cell returns nullopt with `problem` ("cell lengths must be positive",
// ...) and `field` the index of the value at fault (0-5), or -1 when the cell as a whole is.
std::optional<Boxd> reduced_box_from_cell(const double cell[6], std::string& problem, int& field);
extern const char* const kCellInvalidAngles;  // `problem` when the angles cannot close a cell

}  // namespace mdsim
