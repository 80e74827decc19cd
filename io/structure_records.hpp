// What the PDB and PDBx/mmCIF writers (io/pdb_writer, io/mmcif_writer) decide alike, as OpenMM's PDBFile and
// PDBxFile do: which residues are written as ATOM, the unit cell from the box, and which bonds are listed
// explicitly (CONECT / _struct_conn).
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "physics/pbc.hpp"
#include "model/topology.hpp"

namespace mdsim {

// OpenMM's standard residues without water (amino acids and nucleotides): written as ATOM, others as HETATM.
bool is_polymer_residue(std::string_view name);
// The standard residues, water included: bonds among them are not listed.
bool is_standard_residue(std::string_view name);

// Edge lengths (Å) and angles (degrees) of a box.
struct CellParameters {
  double a_angstrom, b_angstrom, c_angstrom;
  double alpha_deg, beta_deg, gamma_deg;
};
CellParameters cell_parameters(const Boxd& box);

// The bonds OpenMM writes explicitly: topology.bonds (topology.conect when there are none) that involve a
// non-standard residue, and CYS SG-SG disulfides; in the topology's order. std::invalid_argument naming
// `writer` when a bond refers to a missing atom.
std::vector<std::pair<int, int>> listed_bonds(const Topology& topology, const char* writer);

}  // namespace mdsim
