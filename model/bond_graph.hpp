// Neighbours in a bond graph, for the exclusion and 1-4 rules the System builders share (model/forcefield's
// template path, io/charmm_psf).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mdsim {

// Atoms 1 to 3 bonds away from atom i (sorted, unique), and those 1 to 2 bonds away (sorted, unique); both may hold
// i itself (through a path that returns to it). bonded_to: per atom, its bonded partners.
inline void neighbours_within_3(const std::vector<std::vector<int>>& bonded_to, int i, std::vector<int>& near,
                                std::vector<int>& within2) {
  near.clear();
  within2.clear();
  for (int j : bonded_to[static_cast<std::size_t>(i)]) {
    near.push_back(j);
    within2.push_back(j);
    for (int k : bonded_to[static_cast<std::size_t>(j)]) {
      near.push_back(k);
      within2.push_back(k);
      for (int l : bonded_to[static_cast<std::size_t>(k)]) near.push_back(l);
    }
  }
  std::sort(near.begin(), near.end());
  near.erase(std::unique(near.begin(), near.end()), near.end());
  std::sort(within2.begin(), within2.end());
  within2.erase(std::unique(within2.begin(), within2.end()), within2.end());
}

}  // namespace mdsim
