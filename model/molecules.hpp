// Molecules of a System: atoms joined by any bonded term, constraint or rigid water (so a rigid water, whose
// bonds are constraints, is one molecule). The barostat moves them rigidly; the frame imager keeps them whole.
#pragma once

#include <vector>

#include "model/system.hpp"

namespace mdsim {

// Each molecule's atoms in increasing index order; molecules ordered by their first atom.
std::vector<std::vector<int>> find_molecules(const System& system);

// The same molecules as spanning trees of those links: `order` lists each molecule's atoms from its first
// atom outward (breadth first), and `parent[a]` is the atom `a` was reached from (-1 for a molecule's first
// atom), so walking `order` places every atom after its parent.
struct MoleculeTrees {
  std::vector<std::vector<int>> order;
  std::vector<int> parent;
};
MoleculeTrees molecule_trees(const System& system);

}  // namespace mdsim
