// Residue template patches (<Patch>, OpenMM 7.7's _PatchData.createPatchedTemplates and
// _generatePatchedSingleResidueTemplates): every combination of a template's single-residue patches, applied in the
// order the template names them, skipping a patch that touches an atom an earlier one did or that does not apply; and
// one residue's part of a multi-residue patch (e.g. CHARMM's DISU), which model/forcefield_templates matches against
// bonded clusters of residues.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "common/errors.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

int atom_index(const FFResidueTemplate& t, const std::string& name) {
  for (std::size_t i = 0; i < t.atoms.size(); ++i)
    if (t.atoms[i].name == name) return static_cast<int>(i);
  return -1;
}

bool removes(const std::vector<FFPatchAtomRef>& refs, int k, const std::string& name) {
  return std::any_of(refs.begin(), refs.end(), [&](const FFPatchAtomRef& r) { return r.residue == k && r.name == name; });
}

// The template's atoms after the patch's removals, additions and changes; old index -> new index in `index_map`
// (-1: removed). None where OpenMM's createPatchedTemplates raises (an added name exists, a changed one does not).
std::optional<FFResidueTemplate> patched_atoms(const FFPatch& patch, int k, const FFResidueTemplate& t,
                                               std::vector<int>& index_map) {
  FFResidueTemplate out;
  out.name = t.name + "-" + patch.name;
  out.source = t.source;
  index_map.assign(t.atoms.size(), -1);
  for (std::size_t i = 0; i < t.atoms.size(); ++i) {
    if (removes(patch.removed, k, t.atoms[i].name)) continue;
    index_map[i] = static_cast<int>(out.atoms.size());
    out.atoms.push_back(t.atoms[i]);
  }
  for (const FFPatchAtom& a : patch.added) {
    if (a.residue != k) continue;
    if (atom_index(out, a.atom.name) >= 0) return std::nullopt;
    out.atoms.push_back(a.atom);
  }
  for (const FFPatchAtom& a : patch.changed) {
    if (a.residue != k) continue;
    const int i = atom_index(out, a.atom.name);
    if (i < 0) return std::nullopt;
    out.atoms[static_cast<std::size_t>(i)] = a.atom;
  }
  return out;
}

}  // namespace

// createPatchedTemplates for residue k of a patch (0 for a single-residue patch); none where OpenMM's raises.
std::optional<FFResidueTemplate> apply_patch(const FFPatch& patch, int k, const FFResidueTemplate& t) {
  std::vector<int> index_map;
  std::optional<FFResidueTemplate> out = patched_atoms(patch, k, t, index_map);
  if (!out) return out;
  for (const FFVirtualSite& v : t.virtual_sites) {
    bool kept = index_map[static_cast<std::size_t>(v.site)] >= 0;
    for (int p : v.parents) kept = kept && index_map[static_cast<std::size_t>(p)] >= 0;
    if (!kept) continue;
    FFVirtualSite site = v;
    site.site = index_map[static_cast<std::size_t>(v.site)];
    for (int& p : site.parents) p = index_map[static_cast<std::size_t>(p)];
    if (site.exclude_with >= 0) site.exclude_with = index_map[static_cast<std::size_t>(site.exclude_with)];
    if (site.exclude_with < 0) return std::nullopt;
    out->virtual_sites.push_back(std::move(site));
  }
  const auto removed_bond = [&](const std::string& a, const std::string& b) {
    for (const auto& [r1, r2] : patch.removed_bonds)
      if (r1.residue == k && r2.residue == k && ((r1.name == a && r2.name == b) || (r1.name == b && r2.name == a)))
        return true;
    return false;
  };
  for (const auto& [a, b] : t.bonds) {
    const int na = index_map[static_cast<std::size_t>(a)], nb = index_map[static_cast<std::size_t>(b)];
    if (na >= 0 && nb >= 0 && !removed_bond(t.atoms[static_cast<std::size_t>(a)].name,
                                            t.atoms[static_cast<std::size_t>(b)].name))
      out->bonds.emplace_back(na, nb);
  }
  for (int e : t.external_bonds) {
    if (removes(patch.removed_external_bonds, k, t.atoms[static_cast<std::size_t>(e)].name)) continue;
    if (index_map[static_cast<std::size_t>(e)] < 0) return std::nullopt;  // OpenMM: KeyError on a removed atom
    out->external_bonds.push_back(index_map[static_cast<std::size_t>(e)]);
  }
  for (const auto& [r1, r2] : patch.added_bonds) {
    const int a = atom_index(*out, r1.name), b = atom_index(*out, r2.name);
    if ((r1.residue == k && a < 0) || (r2.residue == k && b < 0)) return std::nullopt;
    if (r1.residue == k && r2.residue == k) out->bonds.emplace_back(a, b);
    else if (r1.residue == k) out->external_bonds.push_back(a);
    else if (r2.residue == k) out->external_bonds.push_back(b);
  }
  for (const FFPatchAtomRef& r : patch.added_external_bonds) {  // every residue's, as OpenMM 7.7 adds them
    const int a = atom_index(*out, r.name);
    if (a < 0) return std::nullopt;
    out->external_bonds.push_back(a);
  }
  return out;
}

namespace {

bool touches(const std::set<std::string>& altered, const FFPatch& patch) {
  return std::any_of(patch.all_atom_names.begin(), patch.all_atom_names.end(),
                     [&](const std::string& n) { return altered.count(n) > 0; });
}

// _generatePatchedSingleResidueTemplates: patch `index` applied or not, then the later ones, recursively.
void generate(const FFResidueTemplate& t, const std::vector<const FFPatch*>& patches, std::size_t index,
              std::vector<FFResidueTemplate>& out, const std::set<std::string>& altered) {
  std::optional<FFResidueTemplate> patched;
  if (!touches(altered, *patches[index])) {
    patched = apply_patch(*patches[index], 0, t);
    if (patched) out.push_back(*patched);
  }
  if (index + 1 >= patches.size()) return;
  generate(t, patches, index + 1, out, altered);
  if (patched) {
    std::set<std::string> more = altered;
    more.insert(patches[index]->all_atom_names.begin(), patches[index]->all_atom_names.end());
    generate(*patched, patches, index + 1, out, more);
  }
}

const FFPatch& find_patch(const ForceFieldData& ff, const std::string& name, const FFResidueTemplate& t) {
  for (const FFPatch& p : ff.patches)
    if (p.name == name) return p;
  throw InputError(located(t.source.file, t.source.line, 0,
                           fmt::format("residue template '{}' allows patch '{}', which no <Patch> defines", t.name,
                                       name)));
}

}  // namespace

std::vector<FFResidueTemplate> patched_variants(const ForceFieldData& ff, const FFResidueTemplate& t) {
  std::vector<FFResidueTemplate> out;
  auto it = ff.template_patches.find(t.name);
  if (it == ff.template_patches.end()) return out;
  std::vector<const FFPatch*> patches;
  for (const auto& [name, residue] : it->second) {
    const FFPatch& p = find_patch(ff, name, t);
    if (p.num_residues != 1) continue;
    if (p.has_virtual_sites)
      throw InputError(located(p.source.file, p.source.line, 0,
                               fmt::format("patch '{}' has <VirtualSite>s, which mdsim's patching does not support",
                                           p.name)));
    patches.push_back(&p);
  }
  if (!patches.empty()) generate(t, patches, 0, out, {});
  return out;
}

std::vector<FFResidueTemplate> single_residue_patched_templates(const ForceFieldData& ff) {
  std::vector<FFResidueTemplate> out;
  for (const FFResidueTemplate& t : ff.templates) {
    std::vector<FFResidueTemplate> variants = patched_variants(ff, t);
    out.insert(out.end(), std::make_move_iterator(variants.begin()), std::make_move_iterator(variants.end()));
  }
  return out;
}

bool has_multi_residue_patches(const ForceFieldData& ff) {
  return std::any_of(ff.patches.begin(), ff.patches.end(), [](const FFPatch& p) { return p.num_residues > 1; });
}

}  // namespace mdsim::ffgen
