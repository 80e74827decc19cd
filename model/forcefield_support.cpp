// Helpers the force-field generators share (model/forcefield_generators.hpp): element symbols, names as
// OpenMM's pdbNames.xml maps them, topology checks and labels for messages, the bonded graph, and atom
// type / class lookup for definitions.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/errors.hpp"
#include "model/elements.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {

// Element mass as OpenMM's app/element.py (model/elements); only used to order improper atoms as OpenMM does.
double element_mass(const std::string& symbol) {
  const Element* e = find_element(symbol);
  return e != nullptr ? e->mass_amu : 0.0;
}

std::string normalise_element(const std::string& symbol) { return normalise_element_symbol(symbol); }

std::pair<int, int> ordered(int a, int b) { return a < b ? std::pair{a, b} : std::pair{b, a}; }

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& x : words) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::string residue_label(const Topology& top, int r) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  std::string chain = res.chain >= 0 && res.chain < static_cast<int>(top.chains.size())
                          ? top.chains[static_cast<std::size_t>(res.chain)].id
                          : std::string();
  std::string number = std::to_string(res.number);
  if (res.insertion_code != ' ' && res.insertion_code != '\0') number += res.insertion_code;
  return fmt::format("residue {} {} (chain '{}')", res.name, number, chain);
}

int residue_line(const Topology& top, int r) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  if (!res.atoms.empty()) return top.atoms[static_cast<std::size_t>(res.atoms.front())].line;
  return res.line;
}

void check_topology(const Topology& top) {
  const int na = top.num_atoms(), nr = static_cast<int>(top.residues.size()), nc = static_cast<int>(top.chains.size());
  auto bad = [&](const std::string& what) {
    throw InputError(located(top.source, 0, 0, "inconsistent topology: " + what));
  };
  if (top.positions_nm.size() != top.atoms.size())
    bad(fmt::format("{} atoms but {} positions", top.atoms.size(), top.positions_nm.size()));
  std::vector<int> seen(static_cast<std::size_t>(na), 0);
  for (int r = 0; r < nr; ++r) {
    const auto& res = top.residues[static_cast<std::size_t>(r)];
    if (res.chain < 0 || res.chain >= nc) bad(fmt::format("residue {} has chain index {}", r, res.chain));
    for (int a : res.atoms) {
      if (a < 0 || a >= na || top.atoms[static_cast<std::size_t>(a)].residue != r)
        bad(fmt::format("residue {} lists atom {}, which does not belong to it", r, a));
      ++seen[static_cast<std::size_t>(a)];
    }
  }
  for (int a = 0; a < na; ++a)
    if (seen[static_cast<std::size_t>(a)] != 1) bad(fmt::format("atom {} is in {} residue lists", a, seen[static_cast<std::size_t>(a)]));
  for (int c = 0; c < nc; ++c)
    for (int r : top.chains[static_cast<std::size_t>(c)].residues)
      if (r < 0 || r >= nr || top.residues[static_cast<std::size_t>(r)].chain != c)
        bad(fmt::format("chain {} lists residue {}, which does not belong to it", c, r));
  for (const auto& [i, j] : top.conect)
    if (i < 0 || j < 0 || i >= na || j >= na) bad(fmt::format("CONECT pair ({}, {}) out of range", i, j));
}

NormalisedNames normalise_names(const Topology& top, const StandardResidueData& standard) {
  NormalisedNames n;
  n.residue.resize(top.residues.size());
  n.atom.resize(top.atoms.size());
  for (std::size_t r = 0; r < top.residues.size(); ++r) {
    const auto& res = top.residues[r];
    auto alias = standard.residue_aliases.find(res.name);
    n.residue[r] = alias == standard.residue_aliases.end() ? res.name : alias->second;
    auto atoms = standard.atom_aliases.find(n.residue[r]);
    for (int a : res.atoms) {
      const std::string& name = top.atoms[static_cast<std::size_t>(a)].name;
      std::string out = name;
      if (atoms != standard.atom_aliases.end()) {
        auto it = atoms->second.find(name);
        if (it != atoms->second.end()) out = it->second;
      }
      n.atom[static_cast<std::size_t>(a)] = out;
    }
  }
  return n;
}

AtomGraph make_atom_graph(const Topology& top) {
  const auto num_atoms = static_cast<std::size_t>(top.num_atoms());
  AtomGraph g;
  g.element.resize(num_atoms);
  for (std::size_t a = 0; a < num_atoms; ++a) g.element[a] = normalise_element(top.atoms[a].element);
  g.bonded_to.resize(num_atoms);
  for (const auto& [a, b] : top.bonds) {
    g.bonded_to[static_cast<std::size_t>(a)].push_back(b);
    g.bonded_to[static_cast<std::size_t>(b)].push_back(a);
  }
  for (auto& list : g.bonded_to) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return g;
}

TypeTables make_type_tables(const ForceFieldData& ff) {
  TypeTables tables;
  tables.class_of.resize(ff.atom_types.size());
  for (std::size_t t = 0; t < ff.atom_types.size(); ++t) {
    auto [it, inserted] = tables.class_id.emplace(ff.atom_types[t].atom_class, static_cast<int>(tables.class_id.size()));
    tables.class_of[t] = it->second;
  }
  return tables;
}

ResolvedSpec resolve(const FFTypeSpec& s, const ForceFieldData& ff, const TypeTables& tables) {
  ResolvedSpec r;
  r.kind = s.kind;
  if (s.kind == FFSpecKind::Type) {
    auto it = ff.type_index.find(s.name);
    r.id = it == ff.type_index.end() ? -2 : it->second;
  } else if (s.kind == FFSpecKind::Class) {
    auto it = tables.class_id.find(s.name);
    r.id = it == tables.class_id.end() ? -2 : it->second;
  }
  return r;
}

bool spec_has(const ResolvedSpec& s, int type, const TypeTables& tables) {
  switch (s.kind) {
    case FFSpecKind::Wildcard: return true;
    case FFSpecKind::Type: return s.id == type;
    case FFSpecKind::Class: return s.id == tables.class_of[static_cast<std::size_t>(type)];
  }
  return false;
}

}  // namespace mdsim::ffgen
