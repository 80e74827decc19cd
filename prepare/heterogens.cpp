#include "prepare/heterogens.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace mdsim {

namespace {

// pdbNames.xml's standard name of a residue name ("HIE" -> "HIS", "WAT" -> "HOH").
std::string standard_name(const std::string& name, const StandardResidueData& standard) {
  const auto it = standard.residue_aliases.find(name);
  return it == standard.residue_aliases.end() ? name : it->second;
}

// "NAG 4, SO4 2".
std::string counts(const std::map<std::string, int>& by_name) {
  std::string out;
  for (const auto& [name, n] : by_name) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, n);
  return out;
}

// Every name of `keep` must name a heterogen of the structure (as read, or its standard name).
void check_keep_names(const Topology& top, const StandardResidueData& standard, const std::vector<std::string>& keep) {
  std::set<std::string> names;
  std::map<std::string, int> heterogens;
  for (const TopologyResidue& res : top.residues) {
    if (is_standard_residue(res.name, standard) || is_water(res.name, standard)) continue;
    names.insert(res.name);
    names.insert(standard_name(res.name, standard));
    ++heterogens[res.name];
  }
  for (const std::string& name : keep) {
    if (names.count(name)) continue;
    const bool standard_or_water = is_standard_residue(name, standard) || is_water(name, standard);
    throw InputError(fmt::format(
        "--keep-heterogens {}: {} {}; --remove-heterogens keeps standard residues and water anyway, and the keep list "
        "names heterogens to keep besides them (residue names as in the file)",
        name, top.source,
        standard_or_water ? fmt::format("{} is a standard residue or water, not a heterogen", name)
        : heterogens.empty()
            ? fmt::format("has no heterogen named {} (it has no heterogens at all)", name)
            : fmt::format("has no heterogen named {} (its heterogens: {})", name, counts(heterogens))));
  }
}

}  // namespace

bool is_standard_residue(const std::string& name, const StandardResidueData& standard) {
  // PDBFixer's proteinResidues, dnaResidues, rnaResidues, N and UNK; and the amino acids' protonation forms.
  static const std::set<std::string> kStandard = {
      "ALA", "ASN", "CYS", "GLU", "HIS", "LEU", "MET", "PRO", "THR", "TYR", "ARG", "ASP", "GLN", "GLY",
      "ILE", "LYS", "PHE", "SER", "TRP", "VAL", "A",   "G",   "C",   "U",   "I",   "DA",  "DG",  "DC",
      "DT",  "DI",  "N",   "UNK", "HID", "HIE", "HIP", "HIN", "ASH", "GLH", "LYN", "CYX", "CYM"};
  return kStandard.count(name) != 0 || kStandard.count(standard_name(name, standard)) != 0;
}

bool is_water(const std::string& name, const StandardResidueData& standard) {
  return is_water_residue_name(name) || standard_name(name, standard) == "HOH";
}

Topology remove_heterogens(const Topology& top, const StandardResidueData& standard,
                           const std::vector<std::string>& keep, HeterogenReport* report) {
  check_keep_names(top, standard, keep);
  HeterogenReport rep;
  Topology out;
  out.source = top.source;
  out.box = top.box;
  std::vector<int> mapped(top.atoms.size(), -1);
  for (const TopologyChain& chain : top.chains) {
    TopologyChain kept_chain{chain.id, {}};
    for (const int r : chain.residues) {
      TopologyResidue res = top.residues[static_cast<std::size_t>(r)];
      const bool by_name = std::find(keep.begin(), keep.end(), res.name) != keep.end() ||
                           std::find(keep.begin(), keep.end(), standard_name(res.name, standard)) != keep.end();
      if (is_water(res.name, standard)) {
        ++rep.waters_kept;
      } else if (by_name && !is_standard_residue(res.name, standard)) {
        ++rep.kept[res.name];
      } else if (!is_standard_residue(res.name, standard)) {
        ++rep.removed[res.name];
        rep.removed_atoms += static_cast<int>(res.atoms.size());
        rep.removed_residues.push_back({chain.id, res.name, res.number, res.insertion_code});
        continue;
      }
      res.chain = static_cast<int>(out.chains.size());
      const int index = static_cast<int>(out.residues.size());
      for (int& a : res.atoms) {
        TopologyAtom atom = top.atoms[static_cast<std::size_t>(a)];
        atom.residue = index;
        mapped[static_cast<std::size_t>(a)] = out.num_atoms();
        out.atoms.push_back(atom);
        out.positions_nm.push_back(top.positions_nm[static_cast<std::size_t>(a)]);
        a = out.num_atoms() - 1;
      }
      out.residues.push_back(std::move(res));
      kept_chain.residues.push_back(index);
    }
    if (!kept_chain.residues.empty()) out.chains.push_back(std::move(kept_chain));
  }
  for (const auto& [a, b] : top.conect) {
    const int x = mapped[static_cast<std::size_t>(a)], y = mapped[static_cast<std::size_t>(b)];
    if (x >= 0 && y >= 0) out.conect.emplace_back(x, y);
  }
  if (report) *report = std::move(rep);
  return out;
}

}  // namespace mdsim
