// Chain breaks in a structure: consecutive residues of one chain whose backbone link (protein C to the next
// N, nucleic O3' to the next P) is longer than 0.2 nm, i.e. residues are missing between them. OpenMM's
// PDBFile bonds such residues regardless; `mdsim prepare` refuses them, or splits the chain there when asked.
#pragma once

#include <string>
#include <vector>

#include "model/topology.hpp"

namespace mdsim {

struct ChainBreak {
  int chain = -1;              // index into Topology::chains
  int before = -1, after = -1; // residue indices: the last before the gap and the first after it
  double distance_nm = 0.0;    // C–N (or O3'–P) distance
};

constexpr double kChainBreakDistanceNm = 0.2;

std::vector<ChainBreak> find_chain_breaks(const Topology& topology);

// "chain A breaks between ALA 45 and GLY 50: C–N 1.83 nm apart": one break, for messages and reports.
std::string describe(const Topology& topology, const ChainBreak& gap);

// A new topology whose chains are split after each break's `before` residue (atoms, residues and their order
// unchanged; the new pieces keep the chain id). Bonds are not carried over: create_topology_bonds again.
Topology split_chains(const Topology& topology, const std::vector<ChainBreak>& breaks);

}  // namespace mdsim
