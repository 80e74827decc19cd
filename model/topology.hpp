// Topology: what a structure file says (chains, residues, atoms, elements, bonds, box).
// Filled by io/pdb_reader (bonds by create_topology_bonds, model/forcefield); consumed by model/forcefield
// (template matching) and the writers.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

struct TopologyAtom {
  std::string name;     // PDB atom name, trimmed ("CA", "HH31")
  std::string element;  // element symbol, capitalised ("C", "Cl", "Na"); "" if unknown
  int residue = -1;     // index into Topology::residues
  int serial = 0;       // serial number as read (after hybrid-36 decoding / wrap handling)
  int line = 0;         // 1-based line of the source file
};

struct TopologyResidue {
  std::string name;           // "ALA", "HOH", ...
  int chain = -1;             // index into Topology::chains
  int number = 0;             // resSeq as read (decoded)
  char insertion_code = ' ';  // iCode column
  std::vector<int> atoms;     // indices into Topology::atoms, file order
  int line = 0;               // 1-based line of its first atom
};

struct TopologyChain {
  std::string id;             // chain identifier column ("A"; may be " ")
  std::vector<int> residues;  // indices into Topology::residues
};

struct Topology {
  std::string source;  // file path, for error messages
  std::vector<TopologyChain> chains;
  std::vector<TopologyResidue> residues;
  std::vector<TopologyAtom> atoms;
  std::vector<Vec3d> positions_nm;             // one per atom
  std::vector<std::pair<int, int>> conect;     // atom index pairs from CONECT records (i < j, unique)
  std::vector<std::pair<int, int>> bonds;      // filled by create_topology_bonds (residues.xml, disulfides, CONECT)
  std::optional<Boxd> box;                     // from CRYST1, reduced form, nm

  int num_atoms() const { return static_cast<int>(atoms.size()); }
};

// Residue names that mean water (PDB, AMBER, CHARMM, GROMACS and OpenMM spellings).
inline bool is_water_residue_name(std::string_view name) {
  static constexpr std::array<std::string_view, 16> kNames = {"HOH", "WAT",  "SOL",  "H2O",  "HHO", "OHH", "OH2", "TIP",
                                                              "TIP2", "TIP3", "TIP4", "TIP5", "T3P", "T4P", "T5P", "SPC"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

}  // namespace mdsim
