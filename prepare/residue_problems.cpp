#include "prepare/residue_problems.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim {

namespace {

// An amino acid: residues.xml links its N to the previous residue's C.
bool is_amino_acid(const StandardResidueData& standard, const std::string& name) {
  const auto it = standard.bonds.find(name);
  if (it == standard.bonds.end()) return false;
  for (const auto& [from, to] : it->second)
    if ((from == "-C" && to == "N") || (from == "N" && to == "-C")) return true;
  return false;
}

// 1 when the atom named `name` of residue r is bonded to an atom of another residue, 0 when not, -1 when the
// residue has no such atom.
int bonded_outside(const Topology& top, const ffgen::NormalisedNames& names, const ffgen::AtomGraph& graph, int r,
                   const char* name) {
  for (int a : top.residues[static_cast<std::size_t>(r)].atoms) {
    if (names.atom[static_cast<std::size_t>(a)] != name) continue;
    for (int b : graph.bonded_to[static_cast<std::size_t>(a)])
      if (top.atoms[static_cast<std::size_t>(b)].residue != r) return 1;
    return 0;
  }
  return -1;
}

// An amino acid whose N and C are bonded to no other residue: N- and C-terminal at once. (amber14 has templates for
// a lone nucleotide, AN, DAN, ..., but none for a lone amino acid.)
bool is_lone_amino_acid(const Topology& top, const StandardResidueData& standard, const ffgen::NormalisedNames& names,
                        const ffgen::AtomGraph& graph, int r) {
  return is_amino_acid(standard, names.residue[static_cast<std::size_t>(r)]) &&
         bonded_outside(top, names, graph, r, "N") == 0 && bonded_outside(top, names, graph, r, "C") == 0;
}

std::string lone_message(const Topology& top, int r) {
  return fmt::format("{} is a lone amino acid: bonded to no other residue, it is both N- and C-terminal at once, and "
                     "the force field has no template for such a residue; remove it, or cap it (ACE and NME) or join "
                     "it to the chain it belongs to",
                     ffgen::residue_label(top, r));
}

// build_system's message cut before its fix ("; rename or remove ..."), for a list.
std::string first_clause(const std::string& message) { return message.substr(0, message.find("; ")); }

}  // namespace

std::string residue_with_line(const Topology& top, int r) {
  const TopologyResidue& res = top.residues[static_cast<std::size_t>(r)];
  const bool has_chain = res.chain >= 0 && res.chain < static_cast<int>(top.chains.size());
  const std::string chain = has_chain ? top.chains[static_cast<std::size_t>(res.chain)].id : "";
  std::string number = std::to_string(res.number);
  if (res.insertion_code != ' ' && res.insertion_code != '\0') number += res.insertion_code;
  return fmt::format("{} {} (chain '{}', line {})", res.name, number, chain, ffgen::residue_line(top, r));
}

std::string listed(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kListedProblems; ++i) out += (i ? separator : "") + items[i];
  if (items.size() > kListedProblems) out += fmt::format("{}and {} more", separator, items.size() - kListedProblems);
  return out;
}

void check_residue_templates(const Topology& top, const ForceFieldData& ff) {
  const std::vector<ResidueTemplateProblem> problems = residues_without_template(top, ff);
  if (problems.empty()) return;
  const ffgen::NormalisedNames names = ffgen::normalise_names(top, ff.standard);
  const ffgen::AtomGraph graph = ffgen::make_atom_graph(top);
  const ResidueTemplateProblem& first = problems.front();
  if (problems.size() == 1)
    throw InputError(located(top.source, first.line, 0,
                             is_lone_amino_acid(top, ff.standard, names, graph, first.residue)
                                 ? lone_message(top, first.residue)
                                 : first.message));
  std::vector<std::string> unknown, lone, other;
  for (const ResidueTemplateProblem& p : problems) {
    if (p.unknown_name) unknown.push_back(residue_with_line(top, p.residue));
    else if (is_lone_amino_acid(top, ff.standard, names, graph, p.residue))
      lone.push_back(residue_with_line(top, p.residue));
    else other.push_back(fmt::format("line {}: {}", p.line, first_clause(p.message)));
  }
  std::vector<std::string> kinds;
  if (!unknown.empty()) {
    const bool one = unknown.size() == 1;
    kinds.push_back(fmt::format("{}: no template has {}; supply {} force field XML (--forcefield, prepare.forcefield) "
                                "or remove {} (--remove-heterogens)",
                                listed(unknown), one ? "its name" : "their names", one ? "its" : "their",
                                one ? "it" : "them"));
  }
  if (!lone.empty())
    kinds.push_back(fmt::format("{}: bonded to no other residue, so N- and C-terminal at once, a form no template has; "
                                "remove, cap (ACE, NME) or join each to its chain",
                                listed(lone)));
  if (!other.empty()) kinds.push_back(listed(other, "; "));
  std::string text;
  for (const std::string& k : kinds) text += (text.empty() ? "" : ". ") + k;
  throw InputError(located(top.source, first.line, 0,
                           fmt::format("{} residues match no force field template: {}", problems.size(), text)));
}

System build_system_listing_residues(const Topology& top, const ForceFieldData& ff, const ForceFieldOptions& options) {
  try {
    return build_system(top, ff, options);
  } catch (const InputError&) {
    check_residue_templates(top, ff);
    throw;
  }
}

}  // namespace mdsim
