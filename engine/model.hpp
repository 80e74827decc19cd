// From a RunConfig to what a platform simulates: read the structure, load the force fields, build
// the System (OpenMM's createSystem semantics), validate the settings against the structure (box
// present for periodic methods, cutoff within half the box), and tile it when `replicate` asks.
#pragma once

#include <string>
#include <vector>

#include "model/run_config.hpp"
#include "model/system.hpp"
#include "model/topology.hpp"

namespace mdsim {

struct Model {
  Topology topology;                 // bonds filled; replicated when asked
  System system;
  std::vector<Vec3d> positions_nm;   // initial coordinates (the structure file's)
  std::vector<std::string> forcefield_files;  // every XML file read, in order
};

// Throws InputError ("file:line:column: ...") for problems the user must fix.
Model build_model(const RunConfig& config);

// Tiles a periodic model nx × ny × nz times along its box vectors (copies of every particle, term,
// exception, constraint and residue; the box grows accordingly).
Model replicate_model(const Model& model, const std::array<int, 3>& counts);

// InputError, at the first atom's line, when two atoms are closer than kOverlapDistanceNm (model/overlaps.hpp),
// naming both atoms and the fix.
void check_overlaps(const Topology& topology);

// Number of water molecules (residues named HOH, WAT, TIP3, SOL).
int count_waters(const Topology& topology);

}  // namespace mdsim
