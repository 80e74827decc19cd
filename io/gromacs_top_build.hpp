// Internal to io/gromacs_top: one molecule type made into System terms (io/gromacs_top_bonded.cpp for the bonded
// terms, constraints and virtual sites; io/gromacs_top.cpp for particles, exclusions, pairs and the whole System).
// Atom indices here are 0-based within the molecule; read_gromacs_top shifts them for each copy.
#pragma once

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/gromacs_top_records.hpp"
#include "io/topology_file.hpp"
#include "model/system.hpp"

namespace mdsim {

// The molecule's atoms as [atoms] gives them, with their types resolved.
struct GmxMoleculeAtoms {
  std::vector<const GmxAtomType*> type;
  std::vector<double> charge_e, mass_amu;
};

// One molecule type's terms (atom indices within the molecule).
struct GmxFragment {
  System system;                                   // bonded terms, constraints, virtual sites, exceptions
  std::vector<std::pair<int, int>> topology_bonds; // [bonds] (every function), as OpenMM's Topology has them
  std::vector<std::pair<int, int>> graph_bonds;    // what exclusions are generated from (bonds, constraints, settles)
  std::vector<TopologyPositionRestraint> restraints;
};

// The 0-based atom index in field `index` of a record of molecule `m` (InputError when out of range).
int gmx_atom(const GmxRecord& r, std::size_t index, int num_atoms, const char* section);

// Adds [bonds], [angles], [dihedrals], [cmap], [constraints], [settles], virtual sites and position restraints of `m`
// to `out`; CMAP grids are shared by every molecule through `cmap_maps`. InputError for a missing parameter (naming the
// types looked for), an unsupported function type or section, an atom index out of range.
void add_gromacs_bonded(const GmxTopology& top, const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms,
                        std::vector<CmapMap>& cmap_maps, GmxFragment& out);

// Parts of add_gromacs_bonded (io/gromacs_top_sites.cpp): [cmap]; [constraints], [settles], virtual sites, position
// restraints, and the refusal of sections mdsim does not support.
void add_gromacs_cmap(const GmxTopology& top, const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms,
                      std::vector<CmapMap>& maps, GmxFragment& out);
void add_gromacs_sites(const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms, const GmxTopology& top,
                       GmxFragment& out);

}  // namespace mdsim
