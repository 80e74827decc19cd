// PDB writer in OpenMM 7.7's PDBFile.writeFile layout, readable by our reader, OpenMM and MDTraj:
// REMARK, CRYST1 (if a box), ATOM/HETATM records (HETATM for residues other than the standard
// amino acids and nucleotides, water included) with a TER after each chain, CONECT records, END.
//  - Coordinates in Å with 3 decimals (8 columns; larger values lose decimals like OpenMM's
//    _format_83; beyond that, or NaN/inf, a RuntimeError).
//  - Huge files wrap like OpenMM: serials modulo 100,000 and resSeq modulo 10,000 (our reader
//    unwraps them and maps CONECT serials by file order).
//  - Chain IDs, residue numbers and insertion codes of the topology are kept where they fit
//    (one-character IDs; resSeq -999..9999), else generated (A, B, ... / wrapped numbers).
//  - CONECT for topology.bonds (topology.conect when bonds is empty) that involve a residue other
//    than the standard ones (water counts as standard) plus CYS SG-SG disulfides, as OpenMM does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"
#include "model/topology.hpp"

namespace mdsim {

// Writes CRYST1 (if box), MODEL-less ATOM/HETATM records with TER between chains, CONECT for
// topology.bonds involving HETATM residues other than water (as OpenMM does), END.
// positions_nm has one entry per topology atom (indexed like topology.atoms).
void write_pdb(const std::string& path, const Topology& topology, const std::vector<Vec3d>& positions_nm,
               const std::optional<Boxd>& box);

}  // namespace mdsim
