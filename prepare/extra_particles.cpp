// Extra particles of water, as OpenMM's Modeller.addExtraParticles; see extra_particles.hpp.
#include "prepare/extra_particles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "prepare/heterogens.hpp"

namespace mdsim {

namespace {

std::string template_element(const ForceFieldData& ff, const FFTemplateAtom& atom) {
  const auto it = ff.type_index.find(atom.type);
  return it == ff.type_index.end() ? std::string("?") : ff.atom_types[static_cast<std::size_t>(it->second)].element;
}

// The template atoms of one element ("" = extra particles), template order.
std::vector<int> template_atoms_of(const ForceFieldData& ff, const FFResidueTemplate& t, const std::string& element) {
  std::vector<int> out;
  for (std::size_t i = 0; i < t.atoms.size(); ++i)
    if (template_element(ff, t.atoms[i]) == element) out.push_back(static_cast<int>(i));
  return out;
}

bool is_water_with_sites(const ForceFieldData& ff, const FFResidueTemplate& t) {
  const std::size_t o = template_atoms_of(ff, t, "O").size(), h = template_atoms_of(ff, t, "H").size();
  const std::size_t sites = template_atoms_of(ff, t, "").size();
  return o == 1 && h == 2 && sites > 0 && o + h + sites == t.atoms.size();
}

const FFVirtualSite* site_of(const FFResidueTemplate& t, int atom) {
  for (const FFVirtualSite& s : t.virtual_sites)
    if (s.site == atom) return &s;
  return nullptr;
}

// Modeller's position of a virtual site from its parents' positions (its order of operations).
Vec3d site_position(const FFVirtualSite& s, const std::vector<std::optional<Vec3d>>& at, const std::string& where) {
  std::vector<Vec3d> p;
  for (int parent : s.parents) {
    if (!at[static_cast<std::size_t>(parent)])
      throw InputError(where + ": a virtual site of the water template depends on another extra particle; prepare "
                              "places only sites built from the water's O and H atoms");
    p.push_back(*at[static_cast<std::size_t>(parent)]);
  }
  switch (s.type) {
    case FFVirtualSiteType::Average2: return p[0] * s.weights[0] + p[1] * s.weights[1];
    case FFVirtualSiteType::Average3: return p[0] * s.weights[0] + p[1] * s.weights[1] + p[2] * s.weights[2];
    case FFVirtualSiteType::OutOfPlane: {
      const Vec3d v1 = p[1] - p[0], v2 = p[2] - p[0];
      return p[0] + v1 * s.weights[0] + v2 * s.weights[1] + cross(v1, v2) * s.weights[2];
    }
    case FFVirtualSiteType::LocalCoords: {
      Vec3d origin(0, 0, 0), xdir(0, 0, 0), ydir(0, 0, 0);
      for (std::size_t k = 0; k < p.size(); ++k) {
        origin += p[k] * s.origin_weights[k];
        xdir += p[k] * s.x_weights[k];
        ydir += p[k] * s.y_weights[k];
      }
      Vec3d zdir = cross(xdir, ydir);
      xdir = xdir / norm(xdir);
      zdir = zdir / norm(zdir);
      ydir = cross(zdir, xdir);
      return origin + xdir * s.local_position_nm[0] + ydir * s.local_position_nm[1] + zdir * s.local_position_nm[2];
    }
  }
  return p[0];
}

// One water's new extra particles: template atom index and position.
struct NewSites {
  std::vector<int> atoms;  // template atom indices
  std::vector<Vec3d> positions;
  std::vector<int> template_to_residue;  // template atom -> topology atom (-1 for the new sites)
};

// The extra particles a water residue needs (none when it has them or is not 1 O + 2 H).
std::optional<NewSites> sites_for(const Topology& top, const TopologyResidue& residue, const ForceFieldData& ff,
                                  const FFResidueTemplate& t) {
  std::vector<int> oxygens, hydrogens, extra;
  for (int a : residue.atoms) {
    const std::string& e = top.atoms[static_cast<std::size_t>(a)].element;
    (e == "O" ? oxygens : e == "H" ? hydrogens : e.empty() ? extra : oxygens).push_back(a);
  }
  const std::vector<int> t_sites = template_atoms_of(ff, t, "");
  if (oxygens.size() != 1 || hydrogens.size() != 2) return std::nullopt;  // not a whole water: the build says why
  if (extra.size() == t_sites.size()) return std::nullopt;
  const std::string where = located(top.source, residue.line, 0, fmt::format("water {} {}", residue.name, residue.number));
  if (!extra.empty())
    throw InputError(fmt::format("{}: has {} extra particle(s) but the force field's water ({}) has {}; give all of "
                                 "them or none (prepare adds them)",
                                 where, extra.size(), t.name, t_sites.size()));
  NewSites n;
  n.template_to_residue.assign(t.atoms.size(), -1);
  n.template_to_residue[static_cast<std::size_t>(template_atoms_of(ff, t, "O")[0])] = oxygens[0];
  // Hydrogens by name where the names agree (H1, H2), else in order.
  std::vector<int> t_h = template_atoms_of(ff, t, "H");
  if (top.atoms[static_cast<std::size_t>(hydrogens[0])].name == t.atoms[static_cast<std::size_t>(t_h[1])].name ||
      top.atoms[static_cast<std::size_t>(hydrogens[1])].name == t.atoms[static_cast<std::size_t>(t_h[0])].name)
    std::swap(t_h[0], t_h[1]);
  for (std::size_t k = 0; k < 2; ++k) n.template_to_residue[static_cast<std::size_t>(t_h[k])] = hydrogens[k];
  std::vector<std::optional<Vec3d>> at(t.atoms.size());
  for (std::size_t i = 0; i < t.atoms.size(); ++i)
    if (n.template_to_residue[i] >= 0) at[i] = top.positions_nm[static_cast<std::size_t>(n.template_to_residue[i])];
  for (int s : t_sites) {
    n.atoms.push_back(s);
    n.positions.push_back(site_position(*site_of(t, s), at, where));
  }
  return n;
}

}  // namespace

const FFResidueTemplate* water_site_template(const ForceFieldData& ff) {
  const FFResidueTemplate* found = nullptr;
  for (const FFResidueTemplate& t : ff.templates) {
    if (!is_water_with_sites(ff, t)) continue;
    for (int s : template_atoms_of(ff, t, ""))
      if (site_of(t, s) == nullptr)
        throw InputError(located(t.source.file, t.source.line, 0,
                                 fmt::format("water template {}: extra particle {} is not a <VirtualSite>; mdsim "
                                             "prepare places only virtual sites (use a water model whose extra "
                                             "particles are virtual sites, e.g. amber14/tip4pew.xml)",
                                             t.name, t.atoms[static_cast<std::size_t>(s)].name)));
    if (found == nullptr || (found->name != "HOH" && t.name == "HOH")) found = &t;
  }
  return found;
}

int add_water_extra_particles(Topology& top, const ForceFieldData& ff) {
  const FFResidueTemplate* t = water_site_template(ff);
  if (t == nullptr) return 0;
  // Per residue: its new sites, inserted after its last atom.
  std::vector<std::optional<NewSites>> added(top.residues.size());
  std::vector<int> insert_after(top.atoms.size(), -1);  // atom -> residue whose sites follow it
  int waters = 0;
  for (std::size_t r = 0; r < top.residues.size(); ++r) {
    const TopologyResidue& residue = top.residues[r];
    if (residue.atoms.empty() || !is_water(residue.name, ff.standard)) continue;
    added[r] = sites_for(top, residue, ff, *t);
    if (!added[r]) continue;
    ++waters;
    insert_after[static_cast<std::size_t>(*std::max_element(residue.atoms.begin(), residue.atoms.end()))] =
        static_cast<int>(r);
  }
  if (waters == 0) return 0;

  Topology out;
  out.source = top.source, out.chains = top.chains, out.residues = top.residues, out.box = top.box;
  for (TopologyResidue& residue : out.residues) residue.atoms.clear();
  std::vector<int> new_index(top.atoms.size(), -1);
  const auto append = [&](TopologyAtom atom, const Vec3d& position) {
    out.residues[static_cast<std::size_t>(atom.residue)].atoms.push_back(out.num_atoms());
    out.atoms.push_back(std::move(atom));
    out.positions_nm.push_back(position);
  };
  for (std::size_t a = 0; a < top.atoms.size(); ++a) {
    new_index[a] = out.num_atoms();
    append(top.atoms[a], top.positions_nm[a]);
    const int r = insert_after[a];
    if (r < 0) continue;
    NewSites& n = *added[static_cast<std::size_t>(r)];
    for (std::size_t k = 0; k < n.atoms.size(); ++k) {
      TopologyAtom site;
      site.name = t->atoms[static_cast<std::size_t>(n.atoms[k])].name;
      site.residue = r;
      site.serial = top.atoms[a].serial;
      site.line = top.residues[static_cast<std::size_t>(r)].line;
      n.template_to_residue[static_cast<std::size_t>(n.atoms[k])] = out.num_atoms();  // now an out index
      append(std::move(site), n.positions[k]);
    }
  }
  for (const auto* pairs_in : {&top.bonds, &top.conect}) {
    auto& pairs_out = pairs_in == &top.bonds ? out.bonds : out.conect;
    for (const auto& [i, j] : *pairs_in)
      pairs_out.emplace_back(new_index[static_cast<std::size_t>(i)], new_index[static_cast<std::size_t>(j)]);
  }
  // The template's bonds that involve a new site (Modeller adds them too); the other atoms are still old indices.
  for (std::size_t r = 0; r < added.size(); ++r) {
    if (!added[r]) continue;
    const NewSites& n = *added[r];
    const auto out_index = [&](int template_atom) {
      const bool is_new = std::find(n.atoms.begin(), n.atoms.end(), template_atom) != n.atoms.end();
      const int i = n.template_to_residue[static_cast<std::size_t>(template_atom)];
      return is_new ? i : new_index[static_cast<std::size_t>(i)];
    };
    for (const auto& [i, j] : t->bonds) {
      const bool involves = std::find(n.atoms.begin(), n.atoms.end(), i) != n.atoms.end() ||
                            std::find(n.atoms.begin(), n.atoms.end(), j) != n.atoms.end();
      if (involves) out.bonds.emplace_back(std::min(out_index(i), out_index(j)), std::max(out_index(i), out_index(j)));
    }
  }
  top = std::move(out);
  return waters;
}

}  // namespace mdsim
