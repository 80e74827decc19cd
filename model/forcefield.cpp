// System building from a Topology and OpenMM ForceField XML data, following OpenMM 7.7's
// app/forcefield.py createSystem (and Topology.createStandardBonds / createDisulfideBonds, PDBFile's CONECT
// handling, NonbondedForce::createExceptionsFromBonds) so that every term, its parameters and its atom order
// equal OpenMM's for the same input.
#include "model/forcefield.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/errors.hpp"
#include "model/elements.hpp"

namespace mdsim {
namespace {

// ---------------------------------------------------------------- elements

// Element mass as OpenMM's app/element.py (io/elements); only used to order improper atoms as OpenMM does.
double element_mass(const std::string& symbol) {
  const Element* e = find_element(symbol);
  return e != nullptr ? e->mass_amu : 0.0;
}

std::string normalise_element(const std::string& symbol) {
  std::string s;
  for (char c : symbol)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(s[i]))
                                    : std::tolower(static_cast<unsigned char>(s[i])));
  return s;
}

// Metals whose CONECT bonds to standard residues OpenMM's PDBFile ignores.
bool is_conect_metal(const std::string& el) {
  static const std::unordered_set<std::string> metals{"Al", "As", "Ba", "Ca", "Cd", "Ce", "Co", "Cs", "Cu",
                                                      "Dy", "Fe", "Gd", "Hg", "Ho", "In", "Ir", "K",  "Li",
                                                      "Mg", "Mn", "Mo", "Na", "Ni", "Pb", "Pd", "Pt", "Rb",
                                                      "Rh", "Sm", "Sr", "Te", "Tl", "V",  "W",  "Yb", "Zn"};
  return metals.count(el) > 0;
}

bool is_pdb_standard_residue(const std::string& name) {
  static const std::unordered_set<std::string> standard{"ALA", "ASN", "CYS", "GLU", "HIS", "LEU", "MET", "PRO",
                                                        "THR", "TYR", "ARG", "ASP", "GLN", "GLY", "ILE", "LYS",
                                                        "PHE", "SER", "TRP", "VAL", "A",   "G",   "C",   "U",
                                                        "I",   "DA",  "DG",  "DC",  "DT",  "DI",  "HOH"};
  return standard.count(name) > 0;
}

// Element multiset as a string key ("C3H7N1O2", symbols sorted); atoms without element are left out (OpenMM's
// _createResidueSignature).
template <class Elements>
std::string signature_of(const Elements& elements) {
  std::map<std::string, int> counts;
  for (const std::string& e : elements)
    if (!e.empty()) ++counts[e];
  std::string s;
  for (const auto& [e, n] : counts) s += e + std::to_string(n);
  return s;
}

// ---------------------------------------------------------------- names (pdbNames.xml)

struct NormalisedNames {
  std::vector<std::string> residue;  // per residue
  std::vector<std::string> atom;     // per atom
};

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

std::pair<int, int> ordered(int a, int b) { return a < b ? std::pair{a, b} : std::pair{b, a}; }

void create_bonds(Topology& top, const StandardResidueData& standard, const NormalisedNames& names) {
  top.bonds.clear();
  std::set<std::pair<int, int>> existing;
  auto add = [&](int a, int b) {
    if (a == b) return;
    top.bonds.emplace_back(a, b);
    existing.insert(ordered(a, b));
  };

  // Standard bonds per chain (Topology.createStandardBonds).
  for (const auto& chain : top.chains) {
    const int n = static_cast<int>(chain.residues.size());
    std::vector<std::unordered_map<std::string, int>> atom_maps(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int a : top.residues[static_cast<std::size_t>(chain.residues[static_cast<std::size_t>(i)])].atoms)
        atom_maps[static_cast<std::size_t>(i)][names.atom[static_cast<std::size_t>(a)]] = a;
    for (int i = 0; i < n; ++i) {
      const int r = chain.residues[static_cast<std::size_t>(i)];
      auto defs = standard.bonds.find(names.residue[static_cast<std::size_t>(r)]);
      if (defs == standard.bonds.end()) continue;
      auto locate = [&](const std::string& spec, int& residue, std::string& atom) {
        if (!spec.empty() && spec[0] == '-' && i > 0) {
          residue = i - 1;
          atom = spec.substr(1);
        } else if (!spec.empty() && spec[0] == '+' && i + 1 < n) {
          residue = i + 1;
          atom = spec.substr(1);
        } else {
          residue = i;
          atom = spec;
        }
      };
      for (const auto& [from, to] : defs->second) {
        int r1 = 0, r2 = 0;
        std::string a1, a2;
        locate(from, r1, a1);
        locate(to, r2, a2);
        const auto& m1 = atom_maps[static_cast<std::size_t>(r1)];
        const auto& m2 = atom_maps[static_cast<std::size_t>(r2)];
        auto i1 = m1.find(a1);
        auto i2 = m2.find(a2);
        if (i1 != m1.end() && i2 != m2.end()) add(i1->second, i2->second);
      }
    }
  }

  // Disulfides (Topology.createDisulfideBonds): CYS without HG, SG-SG closer than 0.3 nm, nearest earlier one.
  std::vector<int> cyx_sg;
  for (std::size_t r = 0; r < top.residues.size(); ++r) {
    if (names.residue[r] != "CYS") continue;
    int sg = -1;
    bool has_hg = false;
    for (int a : top.residues[r].atoms) {
      const std::string& nm = names.atom[static_cast<std::size_t>(a)];
      if (nm == "SG" && sg < 0) sg = a;
      if (nm == "HG") has_hg = true;
    }
    if (sg >= 0 && !has_hg) cyx_sg.push_back(sg);
  }
  std::unordered_set<int> disulfide_bonded;
  for (std::size_t i = 0; i < cyx_sg.size(); ++i) {
    const Vec3d p1 = top.positions_nm[static_cast<std::size_t>(cyx_sg[i])];
    double best = 0.3;
    int partner = -1;
    for (std::size_t j = 0; j < i; ++j) {
      const Vec3d p2 = top.positions_nm[static_cast<std::size_t>(cyx_sg[j])];
      const double dx = p1.x - p2.x, dy = p1.y - p2.y, dz = p1.z - p2.z;
      const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
      if (d < best && !disulfide_bonded.count(cyx_sg[j])) {
        best = d;
        partner = cyx_sg[j];
      }
    }
    if (partner >= 0) {
      add(cyx_sg[i], partner);
      disulfide_bonded.insert(cyx_sg[i]);
      disulfide_bonded.insert(partner);
    }
  }

  // CONECT records (PDBFile): metal rules, then only bonds not already present.
  for (const auto& [i, j] : top.conect) {
    if (i < 0 || j < 0 || i >= top.num_atoms() || j >= top.num_atoms()) continue;
    const std::string ei = normalise_element(top.atoms[static_cast<std::size_t>(i)].element);
    const std::string ej = normalise_element(top.atoms[static_cast<std::size_t>(j)].element);
    bool keep = true;
    if (!ei.empty() && !ej.empty()) {
      const std::string& ri = names.residue[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(i)].residue)];
      const std::string& rj = names.residue[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(j)].residue)];
      if (!is_conect_metal(ei) && !is_conect_metal(ej)) keep = true;
      else if (is_conect_metal(ei) && !is_pdb_standard_residue(rj)) keep = true;
      else if (is_conect_metal(ej) && !is_pdb_standard_residue(ri)) keep = true;
      else keep = false;
    }
    if (keep && !existing.count(ordered(i, j))) add(i, j);
  }
}

// ---------------------------------------------------------------- residue templates

struct PreparedTemplate {
  const FFResidueTemplate* tpl = nullptr;
  std::vector<std::string> element;      // per template atom
  std::vector<std::vector<int>> bonded;  // per template atom, in <Bond> order
  std::vector<int> external;             // external-bond count per template atom
  std::vector<int> type;                 // atom type index per template atom
};

// OpenMM's compiled.matchResidueToTemplate (external bonds counted, no extra particles): same candidate lists,
// search order and depth-first search, so the same residue-to-template atom mapping results.
class GraphMatcher {
 public:
  GraphMatcher(const PreparedTemplate& t, const std::vector<std::vector<int>>& bonded_to,
               const std::vector<int>& external, const std::vector<std::string>& elements)
      : t_(t), bonded_(bonded_to), external_(external), elements_(elements) {}

  // Returns the template atom index for each residue atom, or an empty vector.
  std::vector<int> match() {
    const int n = static_cast<int>(elements_.size());
    if (n != static_cast<int>(t_.element.size())) return {};
    std::map<std::tuple<std::string, int, int>, int> residue_count, template_count;
    for (int i = 0; i < n; ++i)
      ++residue_count[{elements_[static_cast<std::size_t>(i)], static_cast<int>(bonded_[static_cast<std::size_t>(i)].size()),
                       external_[static_cast<std::size_t>(i)]}];
    for (int j = 0; j < n; ++j)
      ++template_count[{t_.element[static_cast<std::size_t>(j)], static_cast<int>(t_.bonded[static_cast<std::size_t>(j)].size()),
                        t_.external[static_cast<std::size_t>(j)]}];
    if (residue_count != template_count) return {};

    std::vector<std::vector<int>> candidates(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      for (int j = 0; j < n; ++j) {
        const auto uj = static_cast<std::size_t>(j);
        if (!t_.element[uj].empty() && t_.element[uj] != elements_[ui]) continue;
        if (t_.bonded[uj].size() != bonded_[ui].size()) continue;
        if (t_.external[uj] != external_[ui]) continue;
        candidates[ui].push_back(j);
      }
    }

    // Search order: fewest candidates first, then atoms bonded to ones already ordered (a heap keyed by
    // (candidate count, index)).
    std::vector<int> order;
    std::vector<char> placed(static_cast<std::size_t>(n), 0), queued(static_cast<std::size_t>(n), 0);
    std::set<std::pair<int, int>> heap;
    while (static_cast<int>(order.size()) < n) {
      int next = -1;
      if (heap.empty()) {
        int fewest = n + 1;
        for (int i = 0; i < n; ++i)
          if (!placed[static_cast<std::size_t>(i)] && static_cast<int>(candidates[static_cast<std::size_t>(i)].size()) < fewest) {
            next = i;
            fewest = static_cast<int>(candidates[static_cast<std::size_t>(i)].size());
          }
      } else {
        next = heap.begin()->second;
        heap.erase(heap.begin());
        queued[static_cast<std::size_t>(next)] = 0;
      }
      order.push_back(next);
      placed[static_cast<std::size_t>(next)] = 1;
      for (int b : bonded_[static_cast<std::size_t>(next)]) {
        const auto ub = static_cast<std::size_t>(b);
        if (!placed[ub] && !queued[ub]) {
          queued[ub] = 1;
          heap.insert({static_cast<int>(candidates[ub].size()), b});
        }
      }
    }
    std::vector<int> inverse(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) inverse[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = i;
    s_bonded_.assign(static_cast<std::size_t>(n), {});
    s_candidates_.assign(static_cast<std::size_t>(n), {});
    s_candidate_set_.assign(static_cast<std::size_t>(n), std::vector<char>(static_cast<std::size_t>(n), 0));
    for (int p = 0; p < n; ++p) {
      const auto src = static_cast<std::size_t>(order[static_cast<std::size_t>(p)]);
      for (int b : bonded_[src]) s_bonded_[static_cast<std::size_t>(p)].push_back(inverse[static_cast<std::size_t>(b)]);
      s_candidates_[static_cast<std::size_t>(p)] = candidates[src];
      for (int c : candidates[src]) s_candidate_set_[static_cast<std::size_t>(p)][static_cast<std::size_t>(c)] = 1;
    }
    matches_.assign(static_cast<std::size_t>(n), -1);
    used_.assign(static_cast<std::size_t>(n), 0);
    if (!search(0)) return {};
    std::vector<int> result(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      result[static_cast<std::size_t>(i)] = matches_[static_cast<std::size_t>(inverse[static_cast<std::size_t>(i)])];
    return result;
  }

 private:
  const PreparedTemplate& t_;
  const std::vector<std::vector<int>>& bonded_;
  const std::vector<int>& external_;
  const std::vector<std::string>& elements_;
  std::vector<std::vector<int>> s_bonded_, s_candidates_;
  std::vector<std::vector<char>> s_candidate_set_;
  std::vector<int> matches_;
  std::vector<char> used_;

  bool template_bonded(int a, int b) const {
    const auto& list = t_.bonded[static_cast<std::size_t>(a)];
    return std::find(list.begin(), list.end(), b) != list.end();
  }

  bool search(int position) {
    const auto up = static_cast<std::size_t>(position);
    if (position == static_cast<int>(matches_.size())) return true;
    const std::vector<int>* options = &s_candidates_[up];
    for (int b : s_bonded_[up])
      if (b < position) {
        options = &t_.bonded[static_cast<std::size_t>(matches_[static_cast<std::size_t>(b)])];
        break;
      }
    for (int i : *options) {
      const auto ui = static_cast<std::size_t>(i);
      if (used_[ui] || !s_candidate_set_[up][ui]) continue;
      bool consistent = true;
      for (int b : s_bonded_[up])
        if (b < position && !template_bonded(i, matches_[static_cast<std::size_t>(b)])) {
          consistent = false;
          break;
        }
      if (!consistent) continue;
      matches_[up] = i;
      used_[ui] = 1;
      if (search(position + 1)) return true;
      used_[ui] = 0;
    }
    return false;
  }
};

// ---------------------------------------------------------------- type-spec matching

struct TypeTables {
  std::vector<int> class_of;                             // type index -> class id
  std::unordered_map<std::string, int> class_id;
};

struct ResolvedSpec {
  FFSpecKind kind = FFSpecKind::Wildcard;
  int id = -1;  // type index or class id
};

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

struct TorsionSpecs {
  std::array<ResolvedSpec, 4> s;
  bool wildcard = false;
};

// ---------------------------------------------------------------- errors

std::string residue_label(const Topology& top, int r) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  std::string chain = res.chain >= 0 && res.chain < static_cast<int>(top.chains.size())
                          ? top.chains[static_cast<std::size_t>(res.chain)].id
                          : std::string();
  std::string number = std::to_string(res.number);
  if (res.insertion_code != ' ' && res.insertion_code != '\0') number += res.insertion_code;
  return fmt::format("residue {} {} (chain '{}')", res.name, number, chain);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

// Index consistency of a Topology (a hand-made one may be broken): a clear error instead of a crash.
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

int residue_line(const Topology& top, int r) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  if (!res.atoms.empty()) return top.atoms[static_cast<std::size_t>(res.atoms.front())].line;
  return res.line;
}

}  // namespace

void create_topology_bonds(Topology& topology, const StandardResidueData& standard) {
  check_topology(topology);
  create_bonds(topology, standard, normalise_names(topology, standard));
}

System build_system(Topology& top, const ForceFieldData& ff, const ForceFieldOptions& options,
                    TemplateAssignment* assignment) {
  const int num_atoms = top.num_atoms();
  const std::string& pdb = top.source;
  check_topology(top);
  const NormalisedNames names = normalise_names(top, ff.standard);
  create_bonds(top, ff.standard, names);

  std::vector<std::string> element(static_cast<std::size_t>(num_atoms));
  for (int a = 0; a < num_atoms; ++a)
    element[static_cast<std::size_t>(a)] = normalise_element(top.atoms[static_cast<std::size_t>(a)].element);

  std::vector<std::vector<int>> bonded_to(static_cast<std::size_t>(num_atoms));
  for (const auto& [a, b] : top.bonds) {
    bonded_to[static_cast<std::size_t>(a)].push_back(b);
    bonded_to[static_cast<std::size_t>(b)].push_back(a);
  }
  for (auto& list : bonded_to) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }

  // ---- type tables
  TypeTables tables;
  tables.class_of.resize(ff.atom_types.size());
  for (std::size_t t = 0; t < ff.atom_types.size(); ++t) {
    auto [it, inserted] = tables.class_id.emplace(ff.atom_types[t].atom_class, static_cast<int>(tables.class_id.size()));
    tables.class_of[t] = it->second;
  }

  // ---- prepare templates
  std::vector<PreparedTemplate> templates(ff.templates.size());
  std::unordered_map<std::string, std::vector<int>> by_signature;
  std::set<std::string> template_elements;
  for (std::size_t k = 0; k < ff.templates.size(); ++k) {
    const auto& t = ff.templates[k];
    auto& p = templates[k];
    p.tpl = &t;
    const std::size_t n = t.atoms.size();
    p.element.resize(n);
    p.type.resize(n);
    p.bonded.assign(n, {});
    p.external.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      p.type[i] = ff.type_index.at(t.atoms[i].type);
      p.element[i] = ff.atom_types[static_cast<std::size_t>(p.type[i])].element;
      template_elements.insert(p.element[i]);
    }
    for (const auto& [a, b] : t.bonds) {
      p.bonded[static_cast<std::size_t>(a)].push_back(b);
      p.bonded[static_cast<std::size_t>(b)].push_back(a);
    }
    for (int e : t.external_bonds) ++p.external[static_cast<std::size_t>(e)];
    by_signature[signature_of(p.element)].push_back(static_cast<int>(k));
  }

  // ---- match residues to templates
  std::vector<int> atom_type(static_cast<std::size_t>(num_atoms), -1);
  std::vector<const std::map<std::string, double>*> atom_params(static_cast<std::size_t>(num_atoms), nullptr);
  std::vector<int> atom_template_index(static_cast<std::size_t>(num_atoms), -1);
  std::vector<int> residue_template(top.residues.size(), -1);

  for (int a = 0; a < num_atoms; ++a) {
    const auto& atom = top.atoms[static_cast<std::size_t>(a)];
    const std::string& el = element[static_cast<std::size_t>(a)];
    if (el.empty())
      throw InputError(located(pdb, atom.line, 0,
                               fmt::format("atom '{}' of {} has no element, and force field templates need one",
                                           atom.name, residue_label(top, atom.residue))));
    if (!template_elements.count(el))
      throw InputError(located(pdb, atom.line, 0,
                               fmt::format("atom '{}' of {} is element {}, which no residue template of the force "
                                           "field ({}) contains",
                                           atom.name, residue_label(top, atom.residue), el, join(ff.files))));
  }

  // Residues in chain order, as OpenMM's _matchAllResiduesToTemplates.
  std::vector<int> residue_order;
  residue_order.reserve(top.residues.size());
  for (const auto& chain : top.chains)
    for (int r : chain.residues) residue_order.push_back(r);
  if (residue_order.size() != top.residues.size()) {
    residue_order.clear();
    for (int r = 0; r < static_cast<int>(top.residues.size()); ++r) residue_order.push_back(r);
  }

  std::vector<int> local(static_cast<std::size_t>(num_atoms), -1);
  for (int r : residue_order) {
    const auto& res = top.residues[static_cast<std::size_t>(r)];
    const std::size_t n = res.atoms.size();
    for (std::size_t i = 0; i < n; ++i) local[static_cast<std::size_t>(res.atoms[i])] = static_cast<int>(i);
    std::vector<std::vector<int>> rb(n);
    std::vector<int> rext(n, 0);
    std::vector<std::string> rel(n);
    for (std::size_t i = 0; i < n; ++i) {
      const int a = res.atoms[i];
      rel[i] = element[static_cast<std::size_t>(a)];
      for (int b : bonded_to[static_cast<std::size_t>(a)]) {
        const bool inside = top.atoms[static_cast<std::size_t>(b)].residue == r;
        if (inside) rb[i].push_back(local[static_cast<std::size_t>(b)]);
        else ++rext[i];
      }
    }
    std::vector<std::pair<int, std::vector<int>>> found;
    auto sig = by_signature.find(signature_of(rel));
    if (sig != by_signature.end()) {
      for (int k : sig->second) {
        GraphMatcher matcher(templates[static_cast<std::size_t>(k)], rb, rext, rel);
        std::vector<int> m = matcher.match();
        if (!m.empty()) found.emplace_back(k, std::move(m));
      }
    }
    if (found.empty()) {
      // Closest template by atom names (ties: a template named like the residue), to say what is missing.
      const std::string& rname = names.residue[static_cast<std::size_t>(r)];
      std::set<std::string> have;
      for (int a : res.atoms) have.insert(names.atom[static_cast<std::size_t>(a)]);
      int best = -1;
      std::tuple<int, int, int> best_score{0, 0, 0};
      std::vector<std::string> best_missing, best_extra;
      for (std::size_t k = 0; k < ff.templates.size(); ++k) {
        const auto& t = ff.templates[k];
        std::set<std::string> tnames;
        std::vector<std::string> missing, extra;
        for (const auto& ta : t.atoms) {
          tnames.insert(ta.name);
          if (!have.count(ta.name)) missing.push_back(ta.name);
        }
        for (int a : res.atoms)
          if (!tnames.count(names.atom[static_cast<std::size_t>(a)])) extra.push_back(top.atoms[static_cast<std::size_t>(a)].name);
        auto alias = ff.standard.residue_aliases.find(t.name);
        const std::string tstd = alias == ff.standard.residue_aliases.end() ? t.name : alias->second;
        int related = 3;
        if (t.name == res.name || t.name == rname) related = 0;
        else if (tstd == rname) related = 1;
        else if (t.name.size() == rname.size() + 1 && t.name.compare(1, std::string::npos, rname) == 0) related = 2;
        const std::tuple<int, int, int> score{static_cast<int>(missing.size() + extra.size()), related,
                                              static_cast<int>(k)};
        if (best < 0 || score < best_score) {
          best = static_cast<int>(k);
          best_score = score;
          best_missing = std::move(missing);
          best_extra = std::move(extra);
        }
      }
      std::string detail;
      if (best < 0) {
        detail = "the force field has no residue templates";
      } else {
        const auto& t = ff.templates[static_cast<std::size_t>(best)];
        if (best_missing.empty() && best_extra.empty()) {
          // Same atom names: the bonds differ, typically at a chain end or a missing link.
          const auto& p = templates[static_cast<std::size_t>(best)];
          std::vector<std::string> t_ext, r_ext;
          for (std::size_t i = 0; i < t.atoms.size(); ++i)
            if (p.external[i] > 0) t_ext.push_back(t.atoms[i].name);
          for (std::size_t i = 0; i < n; ++i)
            if (rext[i] > 0) r_ext.push_back(top.atoms[static_cast<std::size_t>(res.atoms[i])].name);
          detail = fmt::format(
              "its atoms match template {} but its bonds differ (bonds to other residues: template at [{}], residue "
              "at [{}]); a chain end may need its terminal atoms (e.g. OXT, H2/H3) or a cap",
              t.name, join(t_ext), join(r_ext));
        } else {
          detail = fmt::format("closest template {}: missing atoms [{}], extra atoms [{}]", t.name,
                               join(best_missing), join(best_extra));
        }
      }
      if (ff.num_patches > 0) detail += "; note: template patches (<Patches>) are not supported";
      throw InputError(located(pdb, residue_line(top, r), 0,
                               fmt::format("no force field template matches {}: {}", residue_label(top, r), detail)));
    }
    if (found.size() > 1) {
      const auto& [k1, m1] = found.front();
      const auto& t1 = ff.templates[static_cast<std::size_t>(k1)];
      for (std::size_t f = 1; f < found.size(); ++f) {
        const auto& [k2, m2] = found[f];
        const auto& t2 = ff.templates[static_cast<std::size_t>(k2)];
        bool identical = t1.virtual_sites.empty() && t2.virtual_sites.empty();
        for (std::size_t i = 0; i < n && identical; ++i) {
          const auto& a1 = t1.atoms[static_cast<std::size_t>(m1[i])];
          const auto& a2 = t2.atoms[static_cast<std::size_t>(m2[i])];
          identical = a1.type == a2.type && a1.parameters == a2.parameters;
        }
        if (!identical) {
          std::vector<std::string> tnames;
          for (const auto& fm : found) tnames.push_back(ff.templates[static_cast<std::size_t>(fm.first)].name);
          throw InputError(located(pdb, residue_line(top, r), 0,
                                   fmt::format("{} matches several force field templates with different parameters "
                                               "({}); mdsim cannot choose between them",
                                               residue_label(top, r), join(tnames))));
        }
      }
    }
    const int k = found.front().first;
    const auto& match = found.front().second;
    const auto& t = ff.templates[static_cast<std::size_t>(k)];
    if (!t.virtual_sites.empty())
      throw InputError(located(pdb, residue_line(top, r), 0,
                               fmt::format("{} matches template {} ({}:{}), which has virtual sites; virtual sites are "
                                           "not supported",
                                           residue_label(top, r), t.name, t.source.file, t.source.line)));
    residue_template[static_cast<std::size_t>(r)] = k;
    for (std::size_t i = 0; i < n; ++i) {
      const auto a = static_cast<std::size_t>(res.atoms[i]);
      const auto ti = static_cast<std::size_t>(match[i]);
      atom_type[a] = templates[static_cast<std::size_t>(k)].type[ti];
      atom_params[a] = &t.atoms[ti].parameters;
      atom_template_index[a] = match[i];
    }
  }
  if (assignment != nullptr) {
    assignment->residue_template.clear();
    for (int k : residue_template)
      assignment->residue_template.push_back(k >= 0 ? ff.templates[static_cast<std::size_t>(k)].name : std::string());
  }

  // ---- rigid waters
  std::vector<char> rigid(top.residues.size(), 0);
  if (options.rigid_water)
    for (std::size_t r = 0; r < top.residues.size(); ++r)
      if (names.residue[r] == "HOH") rigid[r] = 1;
  auto rigid_atom = [&](int a) {
    return rigid[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(a)].residue)] != 0;
  };

  System sys;
  sys.mass_amu.resize(static_cast<std::size_t>(num_atoms));
  for (int a = 0; a < num_atoms; ++a)
    sys.mass_amu[static_cast<std::size_t>(a)] = ff.atom_types[static_cast<std::size_t>(atom_type[static_cast<std::size_t>(a)])].mass_amu;

  if (options.hydrogen_mass_amu) {
    const double hmass = *options.hydrogen_mass_amu;
    if (!(hmass > 0.0))
      throw InputError(fmt::format("hydrogen mass {} amu must be positive", hmass));
    for (auto [a1, a2] : top.bonds) {
      if (element[static_cast<std::size_t>(a1)] == "H") std::swap(a1, a2);
      if (element[static_cast<std::size_t>(a2)] == "H" && element[static_cast<std::size_t>(a1)] != "H" &&
          !element[static_cast<std::size_t>(a1)].empty() && !rigid_atom(a2)) {
        const double transfer = hmass - sys.mass_amu[static_cast<std::size_t>(a2)];
        sys.mass_amu[static_cast<std::size_t>(a2)] = hmass;
        sys.mass_amu[static_cast<std::size_t>(a1)] -= transfer;
      }
    }
    for (int a = 0; a < num_atoms; ++a)
      if (!(sys.mass_amu[static_cast<std::size_t>(a)] > 0.0)) {
        const auto& atom = top.atoms[static_cast<std::size_t>(a)];
        throw InputError(located(pdb, atom.line, 0,
                                 fmt::format("hydrogen mass {} amu leaves atom '{}' of {} with mass {} amu; use a "
                                             "smaller hydrogen mass",
                                             hmass, atom.name, residue_label(top, atom.residue),
                                             sys.mass_amu[static_cast<std::size_t>(a)])));
      }
  }

  sys.box = top.box;
  sys.nonbonded = options.nonbonded;
  if (!top.box && (options.nonbonded.method == NonbondedMethod::PME ||
                   options.nonbonded.method == NonbondedMethod::CutoffPeriodic))
    throw InputError(located(pdb, 0, 0,
                             "a periodic nonbonded method (PME or CutoffPeriodic) needs a periodic box, but the "
                             "structure has none (no CRYST1 record)"));

  // ---- angles, propers, impropers (OpenMM's unique sorted lists)
  std::vector<std::array<int, 3>> angles;
  for (int j = 0; j < num_atoms; ++j) {
    const auto& nb = bonded_to[static_cast<std::size_t>(j)];
    for (std::size_t x = 0; x < nb.size(); ++x)
      for (std::size_t y = x + 1; y < nb.size(); ++y) angles.push_back({nb[x], j, nb[y]});
  }
  std::sort(angles.begin(), angles.end());

  std::vector<std::array<int, 4>> propers;
  for (const auto& [b1, b2] : top.bonds) {
    for (int i : bonded_to[static_cast<std::size_t>(b1)]) {
      if (i == b2) continue;
      for (int l : bonded_to[static_cast<std::size_t>(b2)]) {
        if (l == b1 || l == i) continue;
        if (i < l) propers.push_back({i, b1, b2, l});
        else propers.push_back({l, b2, b1, i});
      }
    }
  }
  std::sort(propers.begin(), propers.end());
  propers.erase(std::unique(propers.begin(), propers.end()), propers.end());

  std::vector<std::array<int, 4>> impropers;
  for (int a = 0; a < num_atoms; ++a) {
    const auto& nb = bonded_to[static_cast<std::size_t>(a)];
    const std::size_t m = nb.size();
    if (m < 3) continue;
    for (std::size_t x = 0; x < m; ++x)
      for (std::size_t y = x + 1; y < m; ++y)
        for (std::size_t z = y + 1; z < m; ++z) impropers.push_back({a, nb[x], nb[y], nb[z]});
  }

  // ---- constraint flags
  const std::size_t num_bonds = top.bonds.size();
  std::vector<char> bond_constrained(num_bonds, 0);
  std::vector<double> bond_length(num_bonds, 0.0);
  std::vector<std::vector<int>> atom_bonds(static_cast<std::size_t>(num_atoms));
  for (std::size_t b = 0; b < num_bonds; ++b) {
    const auto [a1, a2] = top.bonds[b];
    atom_bonds[static_cast<std::size_t>(a1)].push_back(static_cast<int>(b));
    atom_bonds[static_cast<std::size_t>(a2)].push_back(static_cast<int>(b));
    if (options.constraints == ConstraintMode::AllBonds || options.constraints == ConstraintMode::HAngles)
      bond_constrained[b] = 1;
    else if (options.constraints == ConstraintMode::HBonds)
      bond_constrained[b] = element[static_cast<std::size_t>(a1)] == "H" || element[static_cast<std::size_t>(a2)] == "H";
    if (rigid_atom(a1) && rigid_atom(a2)) bond_constrained[b] = 1;
  }
  std::vector<char> angle_constrained(angles.size(), 0);
  for (std::size_t i = 0; i < angles.size(); ++i) {
    const auto& [a1, a2, a3] = angles[i];
    if (options.constraints == ConstraintMode::HAngles) {
      const int num_h = (element[static_cast<std::size_t>(a1)] == "H") + (element[static_cast<std::size_t>(a3)] == "H");
      angle_constrained[i] = num_h == 2 || (num_h == 1 && element[static_cast<std::size_t>(a2)] == "O");
    }
    if (rigid_atom(a1) && rigid_atom(a2) && rigid_atom(a3)) angle_constrained[i] = 1;
  }

  std::map<std::pair<int, int>, double> constraint_distance;
  auto add_constraint = [&](int a1, int a2, double distance) {
    auto [it, inserted] = constraint_distance.emplace(ordered(a1, a2), distance);
    if (!inserted) {
      if (it->second != distance)
        throw InputError(fmt::format("two constraints between atoms {} and {} with different distances ({} and {} nm)",
                                     a1, a2, it->second, distance));
      return;
    }
    sys.constraints.push_back({a1, a2, distance});
  };
  auto type_of = [&](int a) { return atom_type[static_cast<std::size_t>(a)]; };

  // ---- harmonic bonds
  if (ff.has_harmonic_bond_force) {
    std::vector<std::array<ResolvedSpec, 2>> defs(ff.bonds.size());
    std::vector<std::vector<int>> for_type(ff.atom_types.size());
    for (std::size_t d = 0; d < ff.bonds.size(); ++d) {
      for (int s = 0; s < 2; ++s) defs[d][static_cast<std::size_t>(s)] = resolve(ff.bonds[d].atoms[static_cast<std::size_t>(s)], ff, tables);
      for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
        if (spec_has(defs[d][0], static_cast<int>(t), tables) || spec_has(defs[d][1], static_cast<int>(t), tables))
          for_type[t].push_back(static_cast<int>(d));
    }
    std::map<std::pair<int, int>, int> cache;
    for (std::size_t b = 0; b < num_bonds; ++b) {
      const auto [a1, a2] = top.bonds[b];
      const int t1 = type_of(a1), t2 = type_of(a2);
      int found = -1;
      auto cached = cache.find({t1, t2});
      if (cached != cache.end()) {
        found = cached->second;
      } else {
        for (int d : for_type[static_cast<std::size_t>(t1)]) {
          const auto& s = defs[static_cast<std::size_t>(d)];
          if ((spec_has(s[0], t1, tables) && spec_has(s[1], t2, tables)) ||
              (spec_has(s[1], t1, tables) && spec_has(s[0], t2, tables))) {
            found = d;
            break;
          }
        }
        cache.emplace(std::pair{t1, t2}, found);
      }
      if (found < 0) continue;
      const auto& def = ff.bonds[static_cast<std::size_t>(found)];
      bond_length[b] = def.length_nm;
      if (bond_constrained[b]) add_constraint(a1, a2, def.length_nm);
      if (def.k_kj_per_mol_nm2 != 0.0 && (!bond_constrained[b] || options.flexible_constraints))
        sys.bonds.push_back({a1, a2, def.length_nm, def.k_kj_per_mol_nm2});
    }
  }

  // ---- harmonic angles
  if (ff.has_harmonic_angle_force) {
    std::vector<std::array<ResolvedSpec, 3>> defs(ff.angles.size());
    std::vector<std::vector<int>> for_center(ff.atom_types.size());
    for (std::size_t d = 0; d < ff.angles.size(); ++d) {
      for (int s = 0; s < 3; ++s) defs[d][static_cast<std::size_t>(s)] = resolve(ff.angles[d].atoms[static_cast<std::size_t>(s)], ff, tables);
      for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
        if (spec_has(defs[d][1], static_cast<int>(t), tables)) for_center[t].push_back(static_cast<int>(d));
    }
    std::map<std::array<int, 3>, int> cache;
    for (std::size_t i = 0; i < angles.size(); ++i) {
      const auto& [a1, a2, a3] = angles[i];
      const int t1 = type_of(a1), t2 = type_of(a2), t3 = type_of(a3);
      int found = -1;
      auto cached = cache.find({t1, t2, t3});
      if (cached != cache.end()) {
        found = cached->second;
      } else {
        for (int d : for_center[static_cast<std::size_t>(t2)]) {
          const auto& s = defs[static_cast<std::size_t>(d)];
          if ((spec_has(s[0], t1, tables) && spec_has(s[2], t3, tables)) ||
              (spec_has(s[0], t3, tables) && spec_has(s[2], t1, tables))) {
            found = d;
            break;
          }
        }
        cache.emplace(std::array<int, 3>{t1, t2, t3}, found);
      }
      if (found < 0) continue;
      const auto& def = ff.angles[static_cast<std::size_t>(found)];
      if (angle_constrained[i]) {
        int bond1 = -1, bond2 = -1;
        for (int b : atom_bonds[static_cast<std::size_t>(a2)]) {
          const auto [x, y] = top.bonds[static_cast<std::size_t>(b)];
          if (x == a1 || y == a1) bond1 = b;
          else if (x == a3 || y == a3) bond2 = b;
        }
        if (bond1 >= 0 && bond2 >= 0) {
          const double l1 = bond_length[static_cast<std::size_t>(bond1)];
          const double l2 = bond_length[static_cast<std::size_t>(bond2)];
          add_constraint(a1, a3, std::sqrt(l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * std::cos(def.angle_rad)));
        }
      }
      if (def.k_kj_per_mol_rad2 != 0.0 && (!angle_constrained[i] || options.flexible_constraints))
        sys.angles.push_back({a1, a2, a3, def.angle_rad, def.k_kj_per_mol_rad2});
    }
  }

  // ---- periodic torsions
  if (ff.has_periodic_torsion_force) {
    auto prepare = [&](const std::vector<FFTorsionDef>& in) {
      std::vector<TorsionSpecs> out(in.size());
      for (std::size_t d = 0; d < in.size(); ++d) {
        for (int s = 0; s < 4; ++s) {
          out[d].s[static_cast<std::size_t>(s)] = resolve(in[d].atoms[static_cast<std::size_t>(s)], ff, tables);
          if (out[d].s[static_cast<std::size_t>(s)].kind == FFSpecKind::Wildcard) out[d].wildcard = true;
        }
      }
      return out;
    };
    const std::vector<TorsionSpecs> proper_defs = prepare(ff.propers);
    const std::vector<TorsionSpecs> improper_defs = prepare(ff.impropers);
    auto add_terms = [&](int a1, int a2, int a3, int a4, const FFTorsionDef& def) {
      for (std::size_t n = 0; n < def.phase_rad.size(); ++n)
        if (def.k_kj_per_mol[n] != 0.0)
          sys.torsions.push_back({a1, a2, a3, a4, def.periodicity[n], def.phase_rad[n], def.k_kj_per_mol[n]});
    };

    // Propers: the first matching definition without wildcards wins, else the first one with wildcards.
    std::vector<std::vector<int>> for_type(ff.atom_types.size());
    for (std::size_t d = 0; d < proper_defs.size(); ++d)
      for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
        if (spec_has(proper_defs[d].s[1], static_cast<int>(t), tables) ||
            spec_has(proper_defs[d].s[2], static_cast<int>(t), tables))
          for_type[t].push_back(static_cast<int>(d));
    std::map<std::array<int, 4>, int> proper_cache;
    for (const auto& tor : propers) {
      std::array<int, 4> sig{type_of(tor[0]), type_of(tor[1]), type_of(tor[2]), type_of(tor[3])};
      const std::array<int, 4> rev{sig[3], sig[2], sig[1], sig[0]};
      const std::array<int, 4> key = std::min(sig, rev);
      int found = -1;
      auto cached = proper_cache.find(key);
      if (cached != proper_cache.end()) {
        found = cached->second;
      } else {
        const auto [t1, t2, t3, t4] = sig;
        for (int d : for_type[static_cast<std::size_t>(t2)]) {
          const auto& s = proper_defs[static_cast<std::size_t>(d)].s;
          const bool forward = spec_has(s[0], t1, tables) && spec_has(s[1], t2, tables) &&
                               spec_has(s[2], t3, tables) && spec_has(s[3], t4, tables);
          const bool backward = spec_has(s[0], t4, tables) && spec_has(s[1], t3, tables) &&
                                spec_has(s[2], t2, tables) && spec_has(s[3], t1, tables);
          if (!forward && !backward) continue;
          const bool wildcard = proper_defs[static_cast<std::size_t>(d)].wildcard;
          if (found < 0 || !wildcard) found = d;
          if (!wildcard) break;
        }
        proper_cache.emplace(key, found);
      }
      if (found >= 0) add_terms(tor[0], tor[1], tor[2], tor[3], ff.propers[static_cast<std::size_t>(found)]);
    }

    // Impropers (_matchImproper): the last matching definition without wildcards wins, else the first one with
    // wildcards; the atom order follows the definition's `ordering`. OpenMM caches the chosen positions per
    // type signature; that cache is reproduced because it decides the order for later impropers.
    struct ImproperChoice {
      std::array<int, 4> positions;
      int def;
    };
    std::map<std::array<int, 4>, ImproperChoice> improper_cache;
    static constexpr std::array<std::array<int, 3>, 6> kPermutations{
        {{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}}};
    auto residue_of = [&](int a) { return top.atoms[static_cast<std::size_t>(a)].residue; };
    auto tindex = [&](int a) { return atom_template_index[static_cast<std::size_t>(a)]; };
    for (const auto& tor : impropers) {
      const std::array<int, 4> sig{type_of(tor[0]), type_of(tor[1]), type_of(tor[2]), type_of(tor[3])};
      std::array<int, 4> atoms{};
      int def = -1;
      auto cached = improper_cache.find(sig);
      if (cached != improper_cache.end()) {
        def = cached->second.def;
        if (def >= 0)
          for (int q = 0; q < 4; ++q) atoms[static_cast<std::size_t>(q)] = tor[static_cast<std::size_t>(cached->second.positions[static_cast<std::size_t>(q)])];
      } else {
        for (std::size_t d = 0; d < improper_defs.size(); ++d) {
          const auto& s = improper_defs[d].s;
          const bool wildcard = improper_defs[d].wildcard;
          if (def >= 0 && wildcard) continue;
          if (!spec_has(s[0], sig[0], tables)) continue;
          for (const auto& perm : kPermutations) {
            const int p2 = perm[0], p3 = perm[1], p4 = perm[2];
            const int ty2 = sig[static_cast<std::size_t>(p2)], ty3 = sig[static_cast<std::size_t>(p3)],
                      ty4 = sig[static_cast<std::size_t>(p4)];
            if (!spec_has(s[1], ty2, tables) || !spec_has(s[2], ty3, tables) || !spec_has(s[3], ty4, tables)) continue;
            const ImproperOrdering ordering = ff.impropers[d].ordering;
            int a2 = tor[static_cast<std::size_t>(p2)], a3 = tor[static_cast<std::size_t>(p3)],
                a4 = tor[static_cast<std::size_t>(p4)];
            auto element_rule = [&]() {
              int x1 = a2, x2 = a3;
              const std::string& e1 = element[static_cast<std::size_t>(x1)];
              const std::string& e2 = element[static_cast<std::size_t>(x2)];
              if (e1 == e2 && x1 > x2) std::swap(x1, x2);
              else if (e1 != "C" && (e2 == "C" || element_mass(e1) < element_mass(e2))) std::swap(x1, x2);
              atoms = {x1, x2, tor[0], a4};
            };
            if (ordering == ImproperOrdering::Default) {
              element_rule();
            } else if (ordering == ImproperOrdering::Charmm) {
              if (wildcard) element_rule();
              else atoms = {tor[0], a2, a3, a4};
            } else if (ordering == ImproperOrdering::Amber) {
              auto later = [&](int x, int y) {  // x after y by (residue index, template atom index)
                const int rx = residue_of(x), ry = residue_of(y);
                return rx > ry || (rx == ry && tindex(x) > tindex(y));
              };
              if (!wildcard) {
                int u2 = ty2, u3 = ty3, u4 = ty4;  // types follow their atoms through the swaps
                if (u2 == u4 && later(a2, a4)) { std::swap(a2, a4); std::swap(u2, u4); }
                if (u3 == u4 && later(a3, a4)) { std::swap(a3, a4); std::swap(u3, u4); }
                if (u2 == u3 && later(a2, a3)) std::swap(a2, a3);
              } else {
                auto el = [&](int x) -> const std::string& { return element[static_cast<std::size_t>(x)]; };
                if (el(a2) == el(a4) && later(a2, a4)) std::swap(a2, a4);
                if (el(a3) == el(a4) && later(a3, a4)) std::swap(a3, a4);
                if (later(a2, a3)) std::swap(a2, a3);
              }
              atoms = {a2, a3, tor[0], a4};
            } else {  // Smirnoff
              atoms = {tor[0], a2, a3, a4};
            }
            def = static_cast<int>(d);
            break;
          }
        }
        ImproperChoice choice{{0, 0, 0, 0}, def};
        if (def >= 0)
          for (int q = 0; q < 4; ++q)
            choice.positions[static_cast<std::size_t>(q)] =
                static_cast<int>(std::find(tor.begin(), tor.end(), atoms[static_cast<std::size_t>(q)]) - tor.begin());
        improper_cache.emplace(sig, choice);
      }
      if (def < 0) continue;
      const auto& d = ff.impropers[static_cast<std::size_t>(def)];
      if (d.ordering == ImproperOrdering::Smirnoff) {
        for (std::size_t n = 0; n < d.phase_rad.size(); ++n) {
          if (d.k_kj_per_mol[n] == 0.0) continue;
          const auto [a1, a2, a3, a4] = atoms;
          for (const auto& q : {std::array<int, 4>{a1, a2, a3, a4}, std::array<int, 4>{a1, a3, a4, a2},
                                std::array<int, 4>{a1, a4, a2, a3}})
            sys.torsions.push_back({q[0], q[1], q[2], q[3], d.periodicity[n], d.phase_rad[n], d.k_kj_per_mol[n]});
        }
      } else {
        add_terms(atoms[0], atoms[1], atoms[2], atoms[3], d);
      }
    }
  }

  // ---- nonbonded per-particle parameters
  sys.charge_e.assign(static_cast<std::size_t>(num_atoms), 0.0);
  sys.sigma_nm.assign(static_cast<std::size_t>(num_atoms), 1.0);
  sys.epsilon_kj_per_mol.assign(static_cast<std::size_t>(num_atoms), 0.0);
  if (ff.has_nonbonded_force) {
    std::vector<const std::map<std::string, double>*> type_values(ff.atom_types.size(), nullptr);
    for (const auto& entry : ff.nonbonded_atoms) {
      const ResolvedSpec s = resolve(entry.atom, ff, tables);
      for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
        if (spec_has(s, static_cast<int>(t), tables)) type_values[t] = &entry.values;
    }
    static const char* const kNames[3] = {"charge", "sigma", "epsilon"};
    for (int a = 0; a < num_atoms; ++a) {
      const int t = type_of(a);
      const auto* values = type_values[static_cast<std::size_t>(t)];
      const auto& atom = top.atoms[static_cast<std::size_t>(a)];
      if (values == nullptr)
        throw InputError(located(pdb, atom.line, 0,
                                 fmt::format("atom '{}' of {} has atom type '{}', for which <NonbondedForce> defines "
                                             "no parameters",
                                             atom.name, residue_label(top, atom.residue),
                                             ff.atom_types[static_cast<std::size_t>(t)].name)));
      double v[3] = {0.0, 0.0, 0.0};
      for (int q = 0; q < 3; ++q) {
        auto it = values->find(kNames[q]);
        if (it != values->end()) {
          v[q] = it->second;
          continue;
        }
        const auto* p = atom_params[static_cast<std::size_t>(a)];
        auto jt = p->find(kNames[q]);
        if (jt == p->end())
          throw InputError(located(pdb, atom.line, 0,
                                   fmt::format("atom '{}' of {} has no {} (neither its type '{}' in <NonbondedForce> "
                                               "nor its residue template gives one)",
                                               atom.name, residue_label(top, atom.residue), kNames[q],
                                               ff.atom_types[static_cast<std::size_t>(t)].name)));
        v[q] = jt->second;
      }
      sys.charge_e[static_cast<std::size_t>(a)] = v[0];
      sys.sigma_nm[static_cast<std::size_t>(a)] = v[1];
      sys.epsilon_kj_per_mol[static_cast<std::size_t>(a)] = v[2];
    }

    // Exceptions (NonbondedForce::createExceptionsFromBonds): pairs within 3 bonds; 1-2 and 1-3 excluded,
    // 1-4 scaled with Lorentz-Berthelot combined sigma/epsilon.
    std::vector<std::vector<int>> b12(static_cast<std::size_t>(num_atoms));
    for (const auto& [a, b] : top.bonds) {
      b12[static_cast<std::size_t>(a)].push_back(b);
      b12[static_cast<std::size_t>(b)].push_back(a);
    }
    for (auto& list : b12) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    std::vector<int> near;
    std::vector<int> within2;
    for (int i = 0; i < num_atoms; ++i) {
      near.clear();
      within2.clear();
      for (int j : b12[static_cast<std::size_t>(i)]) {
        near.push_back(j);
        within2.push_back(j);
        for (int k : b12[static_cast<std::size_t>(j)]) {
          near.push_back(k);
          within2.push_back(k);
          for (int l : b12[static_cast<std::size_t>(k)]) near.push_back(l);
        }
      }
      std::sort(near.begin(), near.end());
      near.erase(std::unique(near.begin(), near.end()), near.end());
      std::sort(within2.begin(), within2.end());
      within2.erase(std::unique(within2.begin(), within2.end()), within2.end());
      for (int j : near) {
        if (j >= i) break;
        if (std::binary_search(within2.begin(), within2.end(), j)) {
          sys.exceptions.push_back({j, i, 0.0, 1.0, 0.0});
        } else {
          const auto uj = static_cast<std::size_t>(j), ui = static_cast<std::size_t>(i);
          sys.exceptions.push_back({j, i, ff.coulomb14scale * sys.charge_e[uj] * sys.charge_e[ui],
                                    0.5 * (sys.sigma_nm[uj] + sys.sigma_nm[ui]),
                                    ff.lj14scale * std::sqrt(sys.epsilon_kj_per_mol[uj] * sys.epsilon_kj_per_mol[ui])});
        }
      }
    }
  }

  // ---- SETTLE triples for rigid waters (O with two H, all three distances constrained)
  for (std::size_t r = 0; r < top.residues.size(); ++r) {
    if (!rigid[r]) continue;
    const auto& res = top.residues[r];
    if (res.atoms.size() != 3) continue;
    int o = -1;
    std::vector<int> h;
    for (int a : res.atoms) {
      if (element[static_cast<std::size_t>(a)] == "O") o = a;
      else if (element[static_cast<std::size_t>(a)] == "H") h.push_back(a);
    }
    if (o < 0 || h.size() != 2) continue;
    auto oh1 = constraint_distance.find(ordered(o, h[0]));
    auto oh2 = constraint_distance.find(ordered(o, h[1]));
    auto hh = constraint_distance.find(ordered(h[0], h[1]));
    if (oh1 == constraint_distance.end() || oh2 == constraint_distance.end() || hh == constraint_distance.end())
      continue;
    if (oh1->second != oh2->second) continue;
    sys.rigid_waters.push_back({o, h[0], h[1], oh1->second, hh->second});
  }
  return sys;
}

}  // namespace mdsim
