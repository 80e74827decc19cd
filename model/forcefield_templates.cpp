// Residue -> template matching as OpenMM 7.7's ForceField._matchAllResiduesToTemplates with
// compiled.matchResidueToTemplate: candidates by element signature, then a graph match on elements, bond counts
// and external-bond counts, independent of atom names. A residue that matches nothing gets a one-line error that
// says how to fix it: the closest template by atom names among those of its own name (its variants and terminal
// forms), then what is wrong (hydrogens missing: `mdsim prepare`; an element; bonds; atoms), or, for a name no
// template has, that its force field XML is needed.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "common/errors.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

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

// A template's graph in the form the matcher reads.
struct PreparedTemplate {
  const FFResidueTemplate* tpl = nullptr;
  std::vector<std::string> element;      // per template atom
  std::vector<std::vector<int>> bonded;  // per template atom, in <Bond> order
  std::vector<int> external;             // external-bond count per template atom
  std::vector<int> type;                 // atom type index per template atom
};

struct PreparedTemplates {
  std::vector<PreparedTemplate> templates;                         // as ForceFieldData::templates
  std::unordered_map<std::string, std::vector<int>> by_signature;  // element signature -> template indices
  std::set<std::string> elements;                                  // every element some template uses
};

// A residue's graph: its atoms' elements and names, bonds inside it (residue-local indices) and bonds leaving it.
struct ResidueGraph {
  std::vector<std::string> element;
  std::vector<std::string> name;  // after pdbNames.xml (names decide only between extra particles)
  std::vector<std::vector<int>> bonded;
  std::vector<int> external;
};

// OpenMM's compiled.matchResidueToTemplate (external bonds counted, extra particles matched): same candidate lists,
// search order and depth-first search, so the same residue-to-template atom mapping results.
class GraphMatcher {
 public:
  GraphMatcher(const PreparedTemplate& t, const ResidueGraph& residue)
      : t_(t), bonded_(residue.bonded), external_(residue.external), elements_(residue.element), names_(residue.name) {}

  // Returns the template atom index for each residue atom, or an empty vector.
  std::vector<int> match() {
    const int n = static_cast<int>(elements_.size());
    if (n != static_cast<int>(t_.element.size()) || !same_atom_kinds()) return {};
    const std::vector<std::vector<int>> candidates = find_candidates();
    const std::vector<int> order = search_order(candidates);
    std::vector<int> inverse(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) inverse[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = i;
    prepare_search(order, inverse, candidates);
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
  const std::vector<std::string>& names_;
  // The residue's atoms in search order: bonded atoms and candidate template atoms per position.
  std::vector<std::vector<int>> s_bonded_, s_candidates_;
  std::vector<std::vector<char>> s_candidate_set_;
  std::vector<int> matches_;
  std::vector<char> used_;

  // Same multiset of (element, bond count, external bond count) in residue and template.
  bool same_atom_kinds() const {
    const auto n = elements_.size();
    std::map<std::tuple<std::string, int, int>, int> residue_count, template_count;
    for (std::size_t i = 0; i < n; ++i)
      ++residue_count[{elements_[i], static_cast<int>(bonded_[i].size()), external_[i]}];
    for (std::size_t j = 0; j < n; ++j)
      ++template_count[{t_.element[j], static_cast<int>(t_.bonded[j].size()), t_.external[j]}];
    return residue_count == template_count;
  }

  // An extra particle (no element) of the residue whose name an extra particle of the template has: it may only
  // be that one (OpenMM's exactNameMatch).
  bool exact_name_match(std::size_t i) const {
    if (!elements_[i].empty()) return false;
    for (std::size_t j = 0; j < t_.element.size(); ++j)
      if (t_.element[j].empty() && t_.tpl->atoms[j].name == names_[i]) return true;
    return false;
  }

  // Per residue atom: the template atoms it could be.
  std::vector<std::vector<int>> find_candidates() const {
    const auto n = elements_.size();
    std::vector<std::vector<int>> candidates(n);
    for (std::size_t i = 0; i < n; ++i) {
      const bool by_name = exact_name_match(i);
      for (std::size_t j = 0; j < n; ++j) {
        if (!t_.element[j].empty() && t_.element[j] != elements_[i]) continue;
        if (by_name && t_.tpl->atoms[j].name != names_[i]) continue;
        if (t_.bonded[j].size() != bonded_[i].size()) continue;
        if (t_.external[j] != external_[i]) continue;
        candidates[i].push_back(static_cast<int>(j));
      }
    }
    return candidates;
  }

  // Search order: fewest candidates first, then atoms bonded to ones already ordered (a heap keyed by
  // (candidate count, index)).
  std::vector<int> search_order(const std::vector<std::vector<int>>& candidates) const {
    const int n = static_cast<int>(elements_.size());
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
    return order;
  }

  void prepare_search(const std::vector<int>& order, const std::vector<int>& inverse,
                      const std::vector<std::vector<int>>& candidates) {
    const auto n = order.size();
    s_bonded_.assign(n, {});
    s_candidates_.assign(n, {});
    s_candidate_set_.assign(n, std::vector<char>(n, 0));
    for (std::size_t p = 0; p < n; ++p) {
      const auto src = static_cast<std::size_t>(order[p]);
      for (int b : bonded_[src]) s_bonded_[p].push_back(inverse[static_cast<std::size_t>(b)]);
      s_candidates_[p] = candidates[src];
      for (int c : candidates[src]) s_candidate_set_[p][static_cast<std::size_t>(c)] = 1;
    }
    matches_.assign(n, -1);
    used_.assign(n, 0);
  }

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

PreparedTemplates prepare_templates(const ForceFieldData& ff, const std::vector<FFResidueTemplate>& templates) {
  PreparedTemplates out;
  out.templates.resize(templates.size());
  for (std::size_t k = 0; k < templates.size(); ++k) {
    const auto& t = templates[k];
    auto& p = out.templates[k];
    p.tpl = &t;
    const std::size_t n = t.atoms.size();
    p.element.resize(n);
    p.type.resize(n);
    p.bonded.assign(n, {});
    p.external.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      p.type[i] = ff.type_index.at(t.atoms[i].type);
      p.element[i] = ff.atom_types[static_cast<std::size_t>(p.type[i])].element;
      out.elements.insert(p.element[i]);
    }
    for (const auto& [a, b] : t.bonds) {
      p.bonded[static_cast<std::size_t>(a)].push_back(b);
      p.bonded[static_cast<std::size_t>(b)].push_back(a);
    }
    for (int e : t.external_bonds) ++p.external[static_cast<std::size_t>(e)];
    out.by_signature[signature_of(p.element)].push_back(static_cast<int>(k));
  }
  return out;
}

// Every atom needs an element that some template uses; an atom without one (an extra particle, e.g. a water's
// M site) needs a template with an element-less atom.
void check_elements(const Topology& top, const ForceFieldData& ff, const AtomGraph& graph,
                    const std::set<std::string>& template_elements) {
  for (int a = 0; a < top.num_atoms(); ++a) {
    const auto& atom = top.atoms[static_cast<std::size_t>(a)];
    const std::string& el = graph.element[static_cast<std::size_t>(a)];
    if (el.empty() && !template_elements.count(el))
      throw InputError(located(top.source, atom.line, 0,
                               fmt::format("atom '{}' of {} has no element (an extra particle), and no residue "
                                           "template of the force field ({}) has extra particles; give its element "
                                           "(columns 77-78 of a PDB file) or load a force field with that site (e.g. "
                                           "amber14/tip4pew.xml for a water's M site)",
                                           atom.name, residue_label(top, atom.residue), join(ff.files))));
    if (!template_elements.count(el))
      throw InputError(located(top.source, atom.line, 0,
                               fmt::format("atom '{}' of {} is element {}, which no residue template of the force "
                                           "field ({}) contains",
                                           atom.name, residue_label(top, atom.residue), el, join(ff.files))));
  }
}

// Residues in chain order, as OpenMM's _matchAllResiduesToTemplates (file order if the chains miss some).
std::vector<int> residue_order(const Topology& top) {
  std::vector<int> order;
  order.reserve(top.residues.size());
  for (const auto& chain : top.chains)
    for (int r : chain.residues) order.push_back(r);
  if (order.size() != top.residues.size()) {
    order.clear();
    for (int r = 0; r < static_cast<int>(top.residues.size()); ++r) order.push_back(r);
  }
  return order;
}

// `local` maps atom -> index within its residue; set here for residue r's atoms.
ResidueGraph residue_graph(const Topology& top, const NormalisedNames& names, const AtomGraph& graph, int r,
                           std::vector<int>& local) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  const std::size_t n = res.atoms.size();
  for (std::size_t i = 0; i < n; ++i) local[static_cast<std::size_t>(res.atoms[i])] = static_cast<int>(i);
  ResidueGraph g;
  g.bonded.resize(n);
  g.external.assign(n, 0);
  g.element.resize(n);
  g.name.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int a = res.atoms[i];
    g.element[i] = graph.element[static_cast<std::size_t>(a)];
    g.name[i] = names.atom[static_cast<std::size_t>(a)];
    for (int b : graph.bonded_to[static_cast<std::size_t>(a)]) {
      const bool inside = top.atoms[static_cast<std::size_t>(b)].residue == r;
      if (inside) g.bonded[i].push_back(local[static_cast<std::size_t>(b)]);
      else ++g.external[i];
    }
  }
  return g;
}

// Every template that matches, in template order, with its atom mapping.
std::vector<std::pair<int, std::vector<int>>> matching_templates(const PreparedTemplates& prepared,
                                                                 const ResidueGraph& residue) {
  std::vector<std::pair<int, std::vector<int>>> found;
  auto sig = prepared.by_signature.find(signature_of(residue.element));
  if (sig == prepared.by_signature.end()) return found;
  for (int k : sig->second) {
    GraphMatcher matcher(prepared.templates[static_cast<std::size_t>(k)], residue);
    std::vector<int> m = matcher.match();
    if (!m.empty()) found.emplace_back(k, std::move(m));
  }
  return found;
}

// The templates a residue named `name` is meant to match: its standard name (pdbNames.xml aliases: HID -> HIS),
// the protonation variants the force fields name for it (HIS -> HID/HIE/HIP, CYS -> CYX, ASP -> ASH, GLU -> GLH,
// LYS -> LYN), and the N- and C-terminal forms of each (NALA, CALA). Ranked: 0 the residue's own name, 1 its standard
// name, 2 a variant, 3 a terminal form.
std::map<std::string, int> related_names(const std::string& name, const std::string& normalised) {
  static const std::map<std::string, std::vector<std::string>> kVariants = {
      {"HIS", {"HID", "HIE", "HIP"}}, {"CYS", {"CYX"}}, {"ASP", {"ASH"}}, {"GLU", {"GLH"}}, {"LYS", {"LYN"}}};
  std::string base = normalised;
  for (const auto& [standard, variants] : kVariants)
    if (std::find(variants.begin(), variants.end(), normalised) != variants.end()) base = standard;
  std::map<std::string, int> rank;
  const auto add = [&rank](const std::string& n, int r) {
    auto [it, fresh] = rank.emplace(n, r);
    if (!fresh) it->second = std::min(it->second, r);
  };
  add(name, 0);
  add(normalised, 0);
  add(base, 1);
  if (auto v = kVariants.find(base); v != kVariants.end())
    for (const std::string& variant : v->second) add(variant, 2);
  const std::map<std::string, int> stems = rank;
  for (const auto& [stem, r] : stems) {
    add("N" + stem, 3);
    add("C" + stem, 3);
  }
  return rank;
}

// A template compared with residue r by atom names (pdbNames.xml-normalised).
struct ClosestTemplate {
  int index = -1;
  std::vector<std::string> missing, extra;  // template atoms the residue lacks; residue atoms the template lacks
  std::vector<std::string> missing_hydrogens;
  int missing_heavy = 0;
};

ClosestTemplate compare_names(const Topology& top, const NormalisedNames& names, const PreparedTemplates& prepared,
                              int r, int k) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  const auto& t = *prepared.templates[static_cast<std::size_t>(k)].tpl;
  std::set<std::string> have, tnames;
  for (int a : res.atoms) have.insert(names.atom[static_cast<std::size_t>(a)]);
  ClosestTemplate c;
  c.index = k;
  for (std::size_t i = 0; i < t.atoms.size(); ++i) {
    tnames.insert(t.atoms[i].name);
    if (have.count(t.atoms[i].name)) continue;
    c.missing.push_back(t.atoms[i].name);
    if (prepared.templates[static_cast<std::size_t>(k)].element[i] == "H") c.missing_hydrogens.push_back(t.atoms[i].name);
    else ++c.missing_heavy;
  }
  for (int a : res.atoms)
    if (!tnames.count(names.atom[static_cast<std::size_t>(a)])) c.extra.push_back(top.atoms[static_cast<std::size_t>(a)].name);
  return c;
}

// The closest of `candidates` (template index -> rank): fewest heavy atoms missing plus atoms extra, then fewest
// hydrogens missing, then rank, then template order.
ClosestTemplate closest_template(const Topology& top, const NormalisedNames& names, const PreparedTemplates& prepared,
                                 int r, const std::vector<std::pair<int, int>>& candidates) {
  ClosestTemplate best;
  std::tuple<std::size_t, std::size_t, int, int> best_score{};
  for (const auto& [k, rank] : candidates) {
    ClosestTemplate c = compare_names(top, names, prepared, r, k);
    const std::tuple<std::size_t, std::size_t, int, int> score{static_cast<std::size_t>(c.missing_heavy) + c.extra.size(),
                                                              c.missing_hydrogens.size(), rank, k};
    if (best.index < 0 || score < best_score) {
      best = std::move(c);
      best_score = score;
    }
  }
  return best;
}

// "H, HA, HB2, ..." (the first three).
std::string first_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += ", ...";
  return out;
}

// A residue with the closest template's atom names that still does not match it: an element differs (the message
// is then located at the atom's line, set in `problem`) or the bonds do.
std::string same_names_problem(const Topology& top, const NormalisedNames& names, const PreparedTemplates& prepared,
                               const AtomGraph& graph, int r, const ResidueGraph& residue, int k,
                               ResidueTemplateProblem& problem) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  const auto& p = prepared.templates[static_cast<std::size_t>(k)];
  const auto& t = *p.tpl;
  for (std::size_t i = 0; i < res.atoms.size(); ++i) {
    const int a = res.atoms[i];
    const std::string& name = names.atom[static_cast<std::size_t>(a)];
    const std::string& element = graph.element[static_cast<std::size_t>(a)];
    for (std::size_t j = 0; j < t.atoms.size(); ++j)
      if (t.atoms[j].name == name && !p.element[j].empty() && p.element[j] != element) {
        problem.line = top.atoms[static_cast<std::size_t>(a)].line;
        return fmt::format("no force field template matches {}: atom '{}' is element {} in the file but {} in "
                           "template {}; fix its element (columns 77-78 of a PDB file, type_symbol of an mmCIF)",
                           residue_label(top, r), top.atoms[static_cast<std::size_t>(a)].name, element,
                           p.element[j], t.name);
      }
  }
  std::vector<std::string> t_ext, r_ext;
  for (std::size_t i = 0; i < t.atoms.size(); ++i)
    if (p.external[i] > 0) t_ext.push_back(t.atoms[i].name);
  for (std::size_t i = 0; i < res.atoms.size(); ++i)
    if (residue.external[i] > 0) r_ext.push_back(top.atoms[static_cast<std::size_t>(res.atoms[i])].name);
  return fmt::format("no force field template matches {}: its atoms match template {} but its bonds differ (bonds to "
                     "other residues: template at [{}], residue at [{}]); a chain end may need its terminal atoms "
                     "(e.g. OXT, H2/H3) or a cap",
                     residue_label(top, r), t.name, join(t_ext), join(r_ext));
}

// Why residue r matches no template, and the fix: the message match_templates throws for it (located at the
// residue's line, or at an atom's for a wrong element).
ResidueTemplateProblem no_template(const Topology& top, const ForceFieldData& ff, const NormalisedNames& names,
                                   const PreparedTemplates& prepared, const AtomGraph& graph, int r,
                                   const ResidueGraph& residue) {
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  const std::string note = has_multi_residue_patches(ff)
                               ? "; note: multi-residue patches (<Patch residues=\"2\">, e.g. DISU) apply only to "
                                 "residues bonded to each other (a disulfide needs its SG-SG bond: CONECT or SSBOND "
                                 "records, or SG atoms within bonding distance)"
                               : "";
  ResidueTemplateProblem problem;
  problem.residue = r;
  problem.line = residue_line(top, r);
  const auto found = [&](const std::string& message) {
    problem.message = message + note;
    return problem;
  };
  if (ff.templates.empty()) {
    problem.unknown_name = true;
    return found(fmt::format("no force field template matches {}: the force field has no residue templates",
                             residue_label(top, r)));
  }
  // Templates of the residue's own name and its variants first; only a name no template has looks at them all.
  const std::map<std::string, int> related = related_names(res.name, names.residue[static_cast<std::size_t>(r)]);
  std::vector<std::pair<int, int>> candidates;
  for (std::size_t k = 0; k < ff.templates.size(); ++k)
    if (auto it = related.find(ff.templates[k].name); it != related.end())
      candidates.emplace_back(static_cast<int>(k), it->second);
  if (candidates.empty()) {
    std::vector<std::pair<int, int>> all;
    for (std::size_t k = 0; k < ff.templates.size(); ++k) all.emplace_back(static_cast<int>(k), 0);
    const ClosestTemplate any = closest_template(top, names, prepared, r, all);
    const std::string hint =
        any.missing.empty() && any.extra.empty()
            ? fmt::format("; its atoms are those of template {}: a misspelt residue name?",
                          ff.templates[static_cast<std::size_t>(any.index)].name)
            : std::string();
    problem.unknown_name = true;
    return found(fmt::format("no template for {}: supply its force field XML (system.forcefield; for mdsim prepare, "
                             "--forcefield){}",
                             residue_label(top, r), hint));
  }
  const ClosestTemplate best = closest_template(top, names, prepared, r, candidates);
  const auto& t = ff.templates[static_cast<std::size_t>(best.index)];
  if (best.extra.empty() && best.missing_heavy == 0 && !best.missing_hydrogens.empty()) {
    const std::size_t n = best.missing_hydrogens.size();
    return found(fmt::format("{} lacks {} hydrogen{} ({}) of template {}: run `mdsim prepare` to add them",
                             residue_label(top, r), n, n == 1 ? "" : "s", first_names(best.missing_hydrogens), t.name));
  }
  if (best.missing.empty() && best.extra.empty())
    return found(same_names_problem(top, names, prepared, graph, r, residue, best.index, problem));
  return found(fmt::format(
      "no force field template matches {}: closest template {}: missing atoms [{}], extra atoms [{}]{}",
      residue_label(top, r), t.name, join(best.missing), join(best.extra),
      best.missing_heavy > 0 ? "; missing heavy atoms must be rebuilt (e.g. with PDBFixer) before "
                               "`mdsim prepare` adds hydrogens"
      : best.extra.empty()   ? ""
                             : "; rename or remove the extra atoms"));
}

[[noreturn]] void throw_no_template(const Topology& top, const ForceFieldData& ff, const NormalisedNames& names,
                                    const PreparedTemplates& prepared, const AtomGraph& graph, int r,
                                    const ResidueGraph& residue) {
  const ResidueTemplateProblem problem = no_template(top, ff, names, prepared, graph, r, residue);
  throw InputError(located(top.source, problem.line, 0, problem.message));
}

// OpenMM's _VirtualSiteData equality, list against list (template atom indices, not names).
bool same_virtual_sites(const std::vector<FFVirtualSite>& a, const std::vector<FFVirtualSite>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const FFVirtualSite& x = a[i];
    const FFVirtualSite& y = b[i];
    if (x.type != y.type || x.site != y.site || x.parents != y.parents || x.exclude_with != y.exclude_with ||
        x.weights != y.weights || x.origin_weights != y.origin_weights || x.x_weights != y.x_weights ||
        x.y_weights != y.y_weights || x.local_position_nm != y.local_position_nm)
      return false;
  }
  return true;
}

// Several matches are fine only when they give every atom the same type, parameters and virtual sites (OpenMM
// picks the first).
void check_same_parameters(const Topology& top, const PreparedTemplates& prepared, int r,
                           const std::vector<std::pair<int, std::vector<int>>>& found) {
  const auto& [k1, m1] = found.front();
  const auto& t1 = *prepared.templates[static_cast<std::size_t>(k1)].tpl;
  for (std::size_t f = 1; f < found.size(); ++f) {
    const auto& [k2, m2] = found[f];
    const auto& t2 = *prepared.templates[static_cast<std::size_t>(k2)].tpl;
    bool identical = same_virtual_sites(t1.virtual_sites, t2.virtual_sites);
    for (std::size_t i = 0; i < m1.size() && identical; ++i) {
      const auto& a1 = t1.atoms[static_cast<std::size_t>(m1[i])];
      const auto& a2 = t2.atoms[static_cast<std::size_t>(m2[i])];
      identical = a1.type == a2.type && a1.parameters == a2.parameters;
    }
    if (!identical) {
      std::vector<std::string> tnames;
      for (const auto& fm : found) tnames.push_back(prepared.templates[static_cast<std::size_t>(fm.first)].tpl->name);
      throw InputError(located(top.source, residue_line(top, r), 0,
                               fmt::format("{} matches several force field templates with different parameters "
                                           "({}); mdsim cannot choose between them",
                                           residue_label(top, r), join(tnames))));
    }
  }
}

// Records template k of `prepared` with atom mapping `match` for residue r; `offset` is added to k in
// residue_template (ForceFieldData::templates.size() for the patched templates).
void assign_template(const Topology& top, const PreparedTemplates& prepared, int r, int k, int offset,
                     const std::vector<int>& match, TemplateMatch& out) {
  const auto& t = *prepared.templates[static_cast<std::size_t>(k)].tpl;
  out.residue_template[static_cast<std::size_t>(r)] = offset + k;
  const auto& res = top.residues[static_cast<std::size_t>(r)];
  for (std::size_t i = 0; i < res.atoms.size(); ++i) {
    const auto a = static_cast<std::size_t>(res.atoms[i]);
    const auto ti = static_cast<std::size_t>(match[i]);
    out.atom_type[a] = prepared.templates[static_cast<std::size_t>(k)].type[ti];
    out.atom_parameters[a] = &t.atoms[ti].parameters;
    out.atom_template_index[a] = match[i];
    for (const FFVirtualSite& v : t.virtual_sites)
      if (v.site == match[i]) out.atom_site[a] = &v;
  }
}


// ---- multi-residue patches (OpenMM's _applyPatchesToMatchResidues, clusters of two residues) ----

// A two-residue patch matched to a bonded pair of residues: the patched templates and each residue's atom mapping.
struct ClusterMatch {
  std::array<int, 2> residues{};                // in the patch's residue order
  std::vector<FFResidueTemplate> templates;     // the patch applied to the chosen templates, one per residue
  std::array<std::vector<int>, 2> matches;      // residue-local atom -> template atom
};

// The templates residue k of patch p can start from: every template that allows it and that template's
// single-residue-patched variants, as OpenMM lists them.
std::vector<std::vector<FFResidueTemplate>> patch_candidates(const ForceFieldData& ff, const FFPatch& p) {
  std::vector<std::vector<FFResidueTemplate>> out(static_cast<std::size_t>(p.num_residues));
  for (const FFResidueTemplate& t : ff.templates) {
    const auto it = ff.template_patches.find(t.name);
    if (it == ff.template_patches.end()) continue;
    for (const auto& [name, k] : it->second) {
      if (name != p.name || k < 0 || k >= p.num_residues) continue;
      std::vector<FFResidueTemplate>& list = out[static_cast<std::size_t>(k)];
      list.push_back(t);
      for (FFResidueTemplate& v : patched_variants(ff, t)) list.push_back(std::move(v));
    }
  }
  return out;
}

// Residue r's mapping onto template k of `prepared` (empty when it does not match).
std::vector<int> match_one(const Topology& top, const NormalisedNames& names, const AtomGraph& graph,
                           const PreparedTemplates& prepared, int k, int r, std::vector<int>& local) {
  for (auto& [found, match] : matching_templates(prepared, residue_graph(top, names, graph, r, local)))
    if (found == k) return std::move(match);
  return {};
}

// Whether the patch's bonds between its residues are bonds of the topology under these mappings.
bool inter_residue_bonds_present(const Topology& top, const AtomGraph& graph, const FFPatch& p,
                                 const std::vector<FFResidueTemplate>& templates, const std::array<int, 2>& residues,
                                 const std::array<std::vector<int>, 2>& matches) {
  const auto atom_of = [&](const FFPatchAtomRef& ref) {
    const auto k = static_cast<std::size_t>(ref.residue);
    const FFResidueTemplate& t = templates[k];
    for (std::size_t i = 0; i < matches[k].size(); ++i)
      if (t.atoms[static_cast<std::size_t>(matches[k][i])].name == ref.name)
        return top.residues[static_cast<std::size_t>(residues[k])].atoms[i];
    return -1;
  };
  for (const auto& [a, b] : p.added_bonds) {
    if (a.residue == b.residue) continue;
    const int i = atom_of(a), j = atom_of(b);
    const auto& partners = graph.bonded_to[static_cast<std::size_t>(std::max(i, 0))];
    if (i < 0 || j < 0 || !std::binary_search(partners.begin(), partners.end(), j)) return false;
  }
  return true;
}

// The pair (r1, r2), in either order, against the patched templates `templates` (prepared as `prepared`).
std::optional<ClusterMatch> match_cluster(const Topology& top, const NormalisedNames& names, const AtomGraph& graph,
                                          const FFPatch& p, const std::vector<FFResidueTemplate>& templates,
                                          const PreparedTemplates& prepared, std::pair<int, int> pair,
                                          std::vector<int>& local) {
  for (const std::array<int, 2> order : {std::array<int, 2>{pair.first, pair.second}, {pair.second, pair.first}}) {
    ClusterMatch m;
    m.residues = order;
    m.matches[0] = match_one(top, names, graph, prepared, 0, order[0], local);
    if (m.matches[0].empty()) continue;
    m.matches[1] = match_one(top, names, graph, prepared, 1, order[1], local);
    if (m.matches[1].empty() || !inter_residue_bonds_present(top, graph, p, templates, order, m.matches)) continue;
    m.templates = templates;
    return m;
  }
  return std::nullopt;
}

// Pairs of the given residues joined by a bond of the topology.
std::set<std::pair<int, int>> bonded_pairs(const Topology& top, const AtomGraph& graph, const std::vector<int>& residues) {
  const std::set<int> in(residues.begin(), residues.end());
  std::set<std::pair<int, int>> out;
  for (int r : residues)
    for (int a : top.residues[static_cast<std::size_t>(r)].atoms)
      for (int b : graph.bonded_to[static_cast<std::size_t>(a)]) {
        const int s = top.atoms[static_cast<std::size_t>(b)].residue;
        if (s != r && in.count(s)) out.emplace(std::min(r, s), std::max(r, s));
      }
  return out;
}

// The residues left after the single-residue patches, matched in bonded pairs to the two-residue patches (every
// combination of candidate templates, as OpenMM; a residue takes part in one multi-residue patch at most).
std::vector<ClusterMatch> multi_residue_matches(const Topology& top, const ForceFieldData& ff,
                                                const NormalisedNames& names, const AtomGraph& graph,
                                                const std::vector<int>& residues, std::vector<int>& local) {
  std::vector<ClusterMatch> out;
  std::set<std::pair<int, int>> clusters = bonded_pairs(top, graph, residues);
  for (const FFPatch& p : ff.patches) {
    if (p.num_residues != 2 || p.has_virtual_sites || clusters.empty()) continue;
    const std::vector<std::vector<FFResidueTemplate>> candidates = patch_candidates(ff, p);
    for (const FFResidueTemplate& t1 : candidates[0])
      for (const FFResidueTemplate& t2 : candidates[1]) {
        std::optional<FFResidueTemplate> a = apply_patch(p, 0, t1), b = apply_patch(p, 1, t2);
        if (!a || !b || clusters.empty()) continue;
        const std::vector<FFResidueTemplate> templates{std::move(*a), std::move(*b)};
        const PreparedTemplates prepared = prepare_templates(ff, templates);
        for (auto it = clusters.begin(); it != clusters.end();) {
          std::optional<ClusterMatch> m = match_cluster(top, names, graph, p, templates, prepared, *it, local);
          if (!m) {
            ++it;
            continue;
          }
          const std::array<int, 2> done = m->residues;
          out.push_back(std::move(*m));
          for (it = clusters.begin(); it != clusters.end();)  // a residue takes part in one patch
            it = (it->first == done[0] || it->first == done[1] || it->second == done[0] || it->second == done[1])
                     ? clusters.erase(it)
                     : std::next(it);
          it = clusters.begin();  // the rest, against the same templates
        }
      }
  }
  return out;
}

// OpenMM's _applyPatchesToMatchResidues: the residues no template matched, against every single-residue patched
// template, then in bonded pairs against the two-residue patches; InputError for the first still unmatched.
void match_patched(const Topology& top, const ForceFieldData& ff, const NormalisedNames& names, const AtomGraph& graph,
                   const PreparedTemplates& prepared, const std::vector<int>& unmatched, std::vector<int>& local,
                   TemplateMatch& out) {
  auto all = std::make_shared<std::vector<FFResidueTemplate>>(single_residue_patched_templates(ff));
  std::vector<std::tuple<int, int, std::vector<int>>> assigned;  // residue, index into *all, mapping
  std::vector<int> left;
  {
    const PreparedTemplates patched = prepare_templates(ff, *all);
    for (int r : unmatched) {
      const auto found = matching_templates(patched, residue_graph(top, names, graph, r, local));
      if (found.empty()) {
        left.push_back(r);
        continue;
      }
      if (found.size() > 1) check_same_parameters(top, patched, r, found);
      assigned.emplace_back(r, found.front().first, found.front().second);
    }
  }
  for (ClusterMatch& c : multi_residue_matches(top, ff, names, graph, left, local))
    for (std::size_t k = 0; k < 2; ++k) {
      assigned.emplace_back(c.residues[k], static_cast<int>(all->size()), std::move(c.matches[k]));
      all->push_back(std::move(c.templates[k]));
      left.erase(std::find(left.begin(), left.end(), c.residues[k]));
    }
  if (!left.empty()) {
    const int r = *std::min_element(left.begin(), left.end(), [&](int a, int b) {
      return std::find(unmatched.begin(), unmatched.end(), a) < std::find(unmatched.begin(), unmatched.end(), b);
    });
    throw_no_template(top, ff, names, prepared, graph, r, residue_graph(top, names, graph, r, local));
  }
  const PreparedTemplates final_templates = prepare_templates(ff, *all);
  for (const auto& [r, k, match] : assigned)
    assign_template(top, final_templates, r, k, static_cast<int>(ff.templates.size()), match, out);
  out.patched_templates = std::move(all);
}

}  // namespace

TemplateMatch match_templates(const Topology& top, const ForceFieldData& ff, const NormalisedNames& names,
                              const AtomGraph& graph) {
  const auto num_atoms = static_cast<std::size_t>(top.num_atoms());
  const PreparedTemplates prepared = prepare_templates(ff, ff.templates);
  check_elements(top, ff, graph, prepared.elements);
  TemplateMatch out;
  out.atom_type.assign(num_atoms, -1);
  out.atom_parameters.assign(num_atoms, nullptr);
  out.atom_template_index.assign(num_atoms, -1);
  out.atom_site.assign(num_atoms, nullptr);
  out.residue_template.assign(top.residues.size(), -1);
  std::vector<int> local(num_atoms, -1);
  std::vector<int> unmatched;
  for (int r : residue_order(top)) {
    const ResidueGraph residue = residue_graph(top, names, graph, r, local);
    const auto found = matching_templates(prepared, residue);
    if (found.empty()) {
      unmatched.push_back(r);
      continue;
    }
    if (found.size() > 1) check_same_parameters(top, prepared, r, found);
    assign_template(top, prepared, r, found.front().first, 0, found.front().second, out);
  }
  if (unmatched.empty()) return out;
  match_patched(top, ff, names, graph, prepared, unmatched, local, out);
  return out;
}

std::vector<ResidueTemplateProblem> template_problems(const Topology& top, const ForceFieldData& ff,
                                                     const NormalisedNames& names, const AtomGraph& graph) {
  const PreparedTemplates prepared = prepare_templates(ff, ff.templates);
  check_elements(top, ff, graph, prepared.elements);
  std::vector<ResidueTemplateProblem> problems;
  std::vector<int> local(static_cast<std::size_t>(top.num_atoms()), -1);
  std::optional<std::vector<FFResidueTemplate>> patched_list;
  std::optional<PreparedTemplates> patched;
  std::vector<int> left;  // matched by no template, patched or not
  for (int r : residue_order(top)) {
    const ResidueGraph residue = residue_graph(top, names, graph, r, local);
    if (!matching_templates(prepared, residue).empty()) continue;
    if (!patched) {
      patched_list = single_residue_patched_templates(ff);
      patched = prepare_templates(ff, *patched_list);
    }
    if (matching_templates(*patched, residue).empty()) left.push_back(r);
  }
  for (const ClusterMatch& c : multi_residue_matches(top, ff, names, graph, left, local))
    for (int r : c.residues) left.erase(std::find(left.begin(), left.end(), r));
  for (int r : left) problems.push_back(no_template(top, ff, names, prepared, graph, r, residue_graph(top, names, graph, r, local)));
  return problems;
}

TemplateAssignment template_assignment(const ForceFieldData& ff, const TemplateMatch& match) {
  TemplateAssignment assignment;
  const auto base = static_cast<int>(ff.templates.size());
  for (int k : match.residue_template)
    assignment.residue_template.push_back(k < 0       ? std::string()
                                          : k < base ? ff.templates[static_cast<std::size_t>(k)].name
                                                     : (*match.patched_templates)[static_cast<std::size_t>(k - base)].name);
  return assignment;
}

}  // namespace mdsim::ffgen

namespace mdsim {

std::vector<ResidueTemplateProblem> residues_without_template(const Topology& topology,
                                                              const ForceFieldData& forcefield) {
  ffgen::check_topology(topology);
  const ffgen::NormalisedNames names = ffgen::normalise_names(topology, forcefield.standard);
  const ffgen::AtomGraph graph = ffgen::make_atom_graph(topology);
  return ffgen::template_problems(topology, forcefield, names, graph);
}

}  // namespace mdsim
