// PDBx/mmCIF writer, for structures beyond what the PDB format holds (more than 99,999 atoms or 9,999
// residues in a chain). Writes what OpenMM 7.7's PDBxFile.writeFile writes: _cell and _symmetry (P 1) when
// there is a box; _struct_conn for bonds that involve a non-standard residue and for CYS SG-SG disulfides;
// the _atom_site loop with label_ and auth_ identifiers (auth_ = the topology's chain IDs, residue numbers and
// insertion codes; label_seq_id = auth_seq_id so that OpenMM's PDBxFile finds the _struct_conn partners;
// label_asym_id unique per chain: the chain ID at its first use, else a fresh A, B, ... Z, AA, ...; a blank
// chain ID is written as its label). Chains that share an ID therefore read back under their labels.
// Read back by io/structure_reader, OpenMM's PDBxFile and gemmi.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"
#include "model/topology.hpp"

namespace mdsim {

// positions_nm: one per topology atom. Bonds from topology.bonds (else topology.conect). Written through a
// partial file and renamed (io/atomic_file); RuntimeError on a non-finite position or a failed write.
void write_mmcif(const std::string& path, const Topology& topology, const std::vector<Vec3d>& positions_nm,
                 const std::optional<Boxd>& box);

}  // namespace mdsim
