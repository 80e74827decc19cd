// Heterogens removed as PDBFixer's removeHeterogens removes them (`--remove-heterogens`): every residue that is not
// a standard amino acid or nucleotide goes (ligands, ions, caps, modified residues, crystallisation additives),
// water stays (PDBFixer's keepWater=True), and residues whose names the keep list gives stay too. Names are
// compared after pdbNames.xml's aliases (HIE is HIS, WAT is HOH, DA5 is DA), as PDBFixer reads them; the
// protonation forms ASH, GLH, LYN, CYM and HIN also count as amino acids (PDBFixer would remove them).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/forcefield_data.hpp"
#include "model/topology.hpp"

namespace mdsim {

struct RemovedResidue {
  std::string chain, name;  // chain id and residue name as read
  int number = 0;
  char icode = ' ';
};

struct HeterogenReport {
  std::map<std::string, int> removed;  // residue name as read -> residues removed
  std::vector<RemovedResidue> removed_residues;  // each, in file order
  int removed_atoms = 0;
  std::map<std::string, int> kept;     // heterogens kept by the keep list: name -> residues
  int waters_kept = 0;
};

// Whether a residue named `name` (as read) is a standard amino acid or nucleotide (PDBFixer's list, N and UNK
// included), or water (model/topology's water names, or pdbNames.xml's aliases of HOH).
bool is_standard_residue(const std::string& name, const StandardResidueData& standard);
bool is_water(const std::string& name, const StandardResidueData& standard);

// The topology without its heterogens: residues, atoms, CONECT pairs and positions of what stays, in order; empty
// chains dropped; box kept; bonds cleared (create_topology_bonds again). `keep` lists residue names (upper case)
// to keep; each must name a heterogen of the structure, else InputError naming --keep-heterogens and
// --remove-heterogens with the heterogens the structure has.
Topology remove_heterogens(const Topology& topology, const StandardResidueData& standard,
                           const std::vector<std::string>& keep, HeterogenReport* report = nullptr);

}  // namespace mdsim
