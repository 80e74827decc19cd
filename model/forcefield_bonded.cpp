// Bonded-term enumeration (OpenMM's data.angles / propers / impropers) and the HarmonicBondForce and
// HarmonicAngleForce generators: definitions looked up by atom type or class, first match wins, results cached per
// type signature; constrained bonds and angles become distance constraints.
#include <algorithm>
#include <cmath>

#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

std::vector<std::array<int, 3>> list_angles(const AtomGraph& graph) {
  std::vector<std::array<int, 3>> angles;
  for (std::size_t j = 0; j < graph.bonded_to.size(); ++j) {
    const auto& nb = graph.bonded_to[j];
    for (std::size_t x = 0; x < nb.size(); ++x)
      for (std::size_t y = x + 1; y < nb.size(); ++y) angles.push_back({nb[x], static_cast<int>(j), nb[y]});
  }
  std::sort(angles.begin(), angles.end());
  return angles;
}

std::vector<std::array<int, 4>> list_propers(const Topology& top, const AtomGraph& graph) {
  std::vector<std::array<int, 4>> propers;
  for (const auto& [b1, b2] : top.bonds) {
    for (int i : graph.bonded_to[static_cast<std::size_t>(b1)]) {
      if (i == b2) continue;
      for (int l : graph.bonded_to[static_cast<std::size_t>(b2)]) {
        if (l == b1 || l == i) continue;
        if (i < l) propers.push_back({i, b1, b2, l});
        else propers.push_back({l, b2, b1, i});
      }
    }
  }
  std::sort(propers.begin(), propers.end());
  propers.erase(std::unique(propers.begin(), propers.end()), propers.end());
  return propers;
}

std::vector<std::array<int, 4>> list_impropers(const AtomGraph& graph) {
  std::vector<std::array<int, 4>> impropers;
  for (std::size_t a = 0; a < graph.bonded_to.size(); ++a) {
    const auto& nb = graph.bonded_to[a];
    const std::size_t m = nb.size();
    if (m < 3) continue;
    for (std::size_t x = 0; x < m; ++x)
      for (std::size_t y = x + 1; y < m; ++y)
        for (std::size_t z = y + 1; z < m; ++z) impropers.push_back({static_cast<int>(a), nb[x], nb[y], nb[z]});
  }
  return impropers;
}

// Index of the first bond definition matching types (t1, t2) in either direction, or -1. `for_type` lists, per
// type, the definitions that could match an atom of that type.
int find_bond_def(const std::vector<std::array<ResolvedSpec, 2>>& defs, const std::vector<std::vector<int>>& for_type,
                  int t1, int t2, const TypeTables& tables) {
  for (int d : for_type[static_cast<std::size_t>(t1)]) {
    const auto& s = defs[static_cast<std::size_t>(d)];
    if ((spec_has(s[0], t1, tables) && spec_has(s[1], t2, tables)) ||
        (spec_has(s[1], t1, tables) && spec_has(s[0], t2, tables)))
      return d;
  }
  return -1;
}

// Index of the first angle definition with centre type t2 and outer types t1, t3 either way round, or -1.
int find_angle_def(const std::vector<std::array<ResolvedSpec, 3>>& defs,
                   const std::vector<std::vector<int>>& for_center, int t1, int t2, int t3, const TypeTables& tables) {
  for (int d : for_center[static_cast<std::size_t>(t2)]) {
    const auto& s = defs[static_cast<std::size_t>(d)];
    if ((spec_has(s[0], t1, tables) && spec_has(s[2], t3, tables)) ||
        (spec_has(s[0], t3, tables) && spec_has(s[2], t1, tables)))
      return d;
  }
  return -1;
}

// The constraint distance of angle a1-a2-a3 from its two bonds' lengths (law of cosines); none when a bond is
// missing.
std::optional<double> angle_constraint_nm(const Topology& top, const std::vector<std::vector<int>>& atom_bonds,
                                          const std::vector<double>& bond_length_nm, int a1, int a2, int a3,
                                          double angle_rad) {
  int bond1 = -1, bond2 = -1;
  for (int b : atom_bonds[static_cast<std::size_t>(a2)]) {
    const auto [x, y] = top.bonds[static_cast<std::size_t>(b)];
    if (x == a1 || y == a1) bond1 = b;
    else if (x == a3 || y == a3) bond2 = b;
  }
  if (bond1 < 0 || bond2 < 0) return std::nullopt;
  const double l1 = bond_length_nm[static_cast<std::size_t>(bond1)];
  const double l2 = bond_length_nm[static_cast<std::size_t>(bond2)];
  return std::sqrt(l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * std::cos(angle_rad));
}

}  // namespace

BondedLists list_bonded_terms(const Topology& top, const AtomGraph& graph) {
  return {list_angles(graph), list_propers(top, graph), list_impropers(graph)};
}

std::vector<double> add_bonds(const GeneratorInput& in, const ConstraintFlags& flags, ConstraintSet& constraints,
                              System& sys) {
  const ForceFieldData& ff = in.forcefield;
  const auto& bonds = in.topology.bonds;
  std::vector<double> bond_length_nm(bonds.size(), 0.0);
  if (!ff.has_harmonic_bond_force) return bond_length_nm;
  std::vector<std::array<ResolvedSpec, 2>> defs(ff.bonds.size());
  std::vector<std::vector<int>> for_type(ff.atom_types.size());
  for (std::size_t d = 0; d < ff.bonds.size(); ++d) {
    for (std::size_t s = 0; s < 2; ++s) defs[d][s] = resolve(ff.bonds[d].atoms[s], ff, in.tables);
    for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
      if (spec_has(defs[d][0], static_cast<int>(t), in.tables) || spec_has(defs[d][1], static_cast<int>(t), in.tables))
        for_type[t].push_back(static_cast<int>(d));
  }
  std::map<std::pair<int, int>, int> cache;
  for (std::size_t b = 0; b < bonds.size(); ++b) {
    const auto [a1, a2] = bonds[b];
    const int t1 = in.type_of(a1), t2 = in.type_of(a2);
    auto cached = cache.find({t1, t2});
    const int found = cached != cache.end() ? cached->second : find_bond_def(defs, for_type, t1, t2, in.tables);
    if (cached == cache.end()) cache.emplace(std::pair{t1, t2}, found);
    if (found < 0) continue;
    const auto& def = ff.bonds[static_cast<std::size_t>(found)];
    bond_length_nm[b] = def.length_nm;
    if (flags.bond[b]) constraints.add(a1, a2, def.length_nm);
    if (def.k_kj_per_mol_nm2 != 0.0 && (!flags.bond[b] || in.options.flexible_constraints))
      sys.bonds.push_back({a1, a2, def.length_nm, def.k_kj_per_mol_nm2});
  }
  return bond_length_nm;
}

void add_angles(const GeneratorInput& in, const std::vector<std::array<int, 3>>& angles, const ConstraintFlags& flags,
                const std::vector<double>& bond_length_nm, ConstraintSet& constraints, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (!ff.has_harmonic_angle_force) return;
  std::vector<std::array<ResolvedSpec, 3>> defs(ff.angles.size());
  std::vector<std::vector<int>> for_center(ff.atom_types.size());
  for (std::size_t d = 0; d < ff.angles.size(); ++d) {
    for (std::size_t s = 0; s < 3; ++s) defs[d][s] = resolve(ff.angles[d].atoms[s], ff, in.tables);
    for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
      if (spec_has(defs[d][1], static_cast<int>(t), in.tables)) for_center[t].push_back(static_cast<int>(d));
  }
  std::vector<std::vector<int>> atom_bonds(static_cast<std::size_t>(in.topology.num_atoms()));
  for (std::size_t b = 0; b < in.topology.bonds.size(); ++b) {
    const auto [a1, a2] = in.topology.bonds[b];
    atom_bonds[static_cast<std::size_t>(a1)].push_back(static_cast<int>(b));
    atom_bonds[static_cast<std::size_t>(a2)].push_back(static_cast<int>(b));
  }
  std::map<std::array<int, 3>, int> cache;
  for (std::size_t i = 0; i < angles.size(); ++i) {
    const auto& [a1, a2, a3] = angles[i];
    const std::array<int, 3> types{in.type_of(a1), in.type_of(a2), in.type_of(a3)};
    auto cached = cache.find(types);
    const int found = cached != cache.end() ? cached->second
                                            : find_angle_def(defs, for_center, types[0], types[1], types[2], in.tables);
    if (cached == cache.end()) cache.emplace(types, found);
    if (found < 0) continue;
    const auto& def = ff.angles[static_cast<std::size_t>(found)];
    if (flags.angle[i]) {
      const auto distance = angle_constraint_nm(in.topology, atom_bonds, bond_length_nm, a1, a2, a3, def.angle_rad);
      if (distance) constraints.add(a1, a3, *distance);
    }
    if (def.k_kj_per_mol_rad2 != 0.0 && (!flags.angle[i] || in.options.flexible_constraints))
      sys.angles.push_back({a1, a2, a3, def.angle_rad, def.k_kj_per_mol_rad2});
  }
}

}  // namespace mdsim::ffgen
