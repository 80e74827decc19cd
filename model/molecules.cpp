#include "model/molecules.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace mdsim {

namespace {

// Every link that joins two atoms into one molecule, as an adjacency list (CSR).
struct Links {
  std::vector<int> start;  // atom a's neighbours: next[start[a] .. start[a + 1])
  std::vector<int> next;
};

Links links_of(const System& system) {
  const int n = system.num_particles();
  std::vector<std::pair<int, int>> pairs;
  auto join = [&](int a, int b) {
    if (a >= 0 && a < n && b >= 0 && b < n && a != b) pairs.emplace_back(a, b), pairs.emplace_back(b, a);
  };
  system.for_each_bonded([&](const auto& terms) {  // each term's atoms are a chain
    for (const auto& term : terms) {
      const auto atoms = term.atoms();
      for (std::size_t a = 1; a < atoms.size(); ++a) join(atoms[a - 1], atoms[a]);
    }
  });
  for (const auto& c : system.constraints) join(c.i, c.j);
  for (const auto& s : system.virtual_sites)  // a site (bonded to nothing) belongs to its parents' molecule
    for (int k = 0; k < s.num_parents; ++k) join(s.particle, s.parents[static_cast<std::size_t>(k)]);
  for (const auto& w : system.rigid_waters) {
    join(w.oxygen, w.hydrogen1);
    join(w.oxygen, w.hydrogen2);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  Links links;
  links.start.assign(static_cast<std::size_t>(n) + 1, 0);
  for (const auto& [a, b] : pairs) ++links.start[static_cast<std::size_t>(a) + 1];
  for (std::size_t a = 0; a < static_cast<std::size_t>(n); ++a) links.start[a + 1] += links.start[a];
  links.next.reserve(pairs.size());
  for (const auto& [a, b] : pairs) links.next.push_back(b);  // sorted by a: lands in CSR order
  return links;
}

}  // namespace

MoleculeTrees molecule_trees(const System& system) {
  const int n = system.num_particles();
  const Links links = links_of(system);
  MoleculeTrees trees;
  trees.parent.assign(static_cast<std::size_t>(n), -1);
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (int first = 0; first < n; ++first) {
    if (seen[static_cast<std::size_t>(first)]) continue;
    std::vector<int>& order = trees.order.emplace_back();
    order.push_back(first);
    seen[static_cast<std::size_t>(first)] = 1;
    for (std::size_t k = 0; k < order.size(); ++k) {  // breadth first: order grows while it is walked
      const int a = order[k];
      for (int e = links.start[static_cast<std::size_t>(a)]; e < links.start[static_cast<std::size_t>(a) + 1]; ++e) {
        const int b = links.next[static_cast<std::size_t>(e)];
        if (seen[static_cast<std::size_t>(b)]) continue;
        seen[static_cast<std::size_t>(b)] = 1;
        trees.parent[static_cast<std::size_t>(b)] = a;
        order.push_back(b);
      }
    }
  }
  return trees;
}

std::vector<std::vector<int>> find_molecules(const System& system) {
  std::vector<std::vector<int>> molecules = molecule_trees(system).order;
  for (std::vector<int>& m : molecules) std::sort(m.begin(), m.end());
  return molecules;
}

}  // namespace mdsim
