// read_charmm_psf: a CHARMM PSF plus parameter files -> System and Topology (io/charmm_psf.hpp).
#include "io/charmm_psf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <utility>

#include "common/errors.hpp"
#include "io/text_input.hpp"
#include "io/charmm_psf_build.hpp"
#include "model/cmap.hpp"
#include "model/elements.hpp"

namespace mdsim::charmm {

std::string atom_text(const PsfFile& psf, int i) {
  const PsfAtom& a = psf.atoms[static_cast<std::size_t>(i)];
  return fmt::format("atom {} ({} of {} {}, segment {})", i + 1, a.name, a.resname, a.resid, a.segment);
}

namespace {

constexpr double kRadPerDeg = std::numbers::pi / 180.0;

std::size_t at(int i) { return static_cast<std::size_t>(i); }

std::string files_text(const CharmmParameters& par) {
  std::string out;
  for (const std::string& f : par.files) out += (out.empty() ? "" : ", ") + f;
  return out.empty() ? "(no files)" : out;
}

template <std::size_t N>
[[noreturn]] void missing(const Build& b, int line, const char* what, const std::array<int, N>& atoms) {
  std::string types, names;
  for (int a : atoms) {
    types += (types.empty() ? "" : " - ") + b.type[at(a)]->name;
    names += (names.empty() ? "" : ", ") + atom_text(b.psf, a);
  }
  throw InputError(located(b.psf.source, line, 0,
                           fmt::format("no {} parameters for types {} ({}) in {}: add the parameter or stream file that "
                                       "defines them to system.parameters",
                                       what, types, names, files_text(b.par))));
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void resolve_types(Build& b) {
  for (const PsfAtom& a : b.psf.atoms) {
    const std::string t = upper(a.type);
    const bool numeric = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    std::string name = t;
    if (numeric) {
      const auto n = b.par.type_by_number.find(t.size() > 9 ? -1 : std::stoi(t));
      name = n == b.par.type_by_number.end() ? "" : n->second;
    }
    const auto it = b.par.types.find(name);
    if (it == b.par.types.end())
      throw InputError(located(b.psf.source, a.line, 0,
                               fmt::format("atom type {} of {} is not defined by a MASS line in {}: add the topology "
                                           "(.rtf), parameter or stream file that defines it to system.parameters",
                                           a.type, atom_text(b.psf, static_cast<int>(b.type.size())), files_text(b.par))));
    if (!it->second.has_lj)
      throw InputError(located(b.psf.source, a.line, 0,
                               fmt::format("atom type {} of {} has no NONBONDED values in {} (its MASS line: {}:{})",
                                           name, atom_text(b.psf, static_cast<int>(b.type.size())), files_text(b.par),
                                           it->second.where.file, it->second.where.line)));
    b.type.push_back(&it->second);
  }
}

bool water_residue(const std::string& name) {  // OpenMM's CharmmPsfFile WATNAMES
  static const std::set<std::string> kNames = {"WAT", "HOH", "TIP3", "TIP4", "TIP5", "SPCE", "SPC", "SWM4", "SWM6"};
  return kNames.count(upper(name)) > 0;
}

bool lone_pair_name(const std::string& name) { return upper(name).rfind("LP", 0) == 0 || upper(name) == "OM"; }

void add_bonds(Build& b) {
  const PsfFile& psf = b.psf;
  for (std::size_t e = 0; e < psf.bonds.atoms.size(); ++e) {
    const auto [i, j] = psf.bonds.atoms[e];
    const PsfAtom &ai = psf.atoms[at(i)], &aj = psf.atoms[at(j)];
    if (lone_pair_name(ai.name) || lone_pair_name(aj.name)) continue;
    if (upper(ai.name)[0] == 'H' && upper(aj.name)[0] == 'H' && water_residue(ai.resname)) continue;
    const auto it = b.par.bonds.find(CharmmParameters::bond_key(b.type[at(i)]->name, b.type[at(j)]->name));
    if (it == b.par.bonds.end()) missing(b, psf.bonds.line[e], "bond", psf.bonds.atoms[e]);
    b.system.bonds.push_back({i, j, it->second.r0_a * kNmPerA, 2.0 * it->second.k_kcal_per_a2 * kKjPerKcal * 100.0});
    b.bonds.emplace_back(i, j);
  }
}

void add_angles(Build& b) {
  const PsfFile& psf = b.psf;
  for (std::size_t e = 0; e < psf.angles.atoms.size(); ++e) {
    const auto [i, j, k] = psf.angles.atoms[e];
    const auto it = b.par.angles.find(
        CharmmParameters::angle_key(b.type[at(i)]->name, b.type[at(j)]->name, b.type[at(k)]->name));
    if (it == b.par.angles.end()) missing(b, psf.angles.line[e], "angle", psf.angles.atoms[e]);
    const CharmmAngleType& t = it->second;
    b.system.angles.push_back({i, j, k, t.theta0_deg * kRadPerDeg, 2.0 * t.k_kcal_per_rad2 * kKjPerKcal});
    if (t.urey_bradley)
      b.system.urey_bradleys.push_back({i, k, t.ub_r0_a * kNmPerA, 2.0 * t.ub_k_kcal_per_a2 * kKjPerKcal * 100.0});
  }
}

std::array<std::string, 4> types_of(const Build& b, const std::array<int, 4>& a) {
  return {b.type[at(a[0])]->name, b.type[at(a[1])]->name, b.type[at(a[2])]->name, b.type[at(a[3])]->name};
}

void add_torsions(Build& b) {
  const PsfFile& psf = b.psf;
  for (std::size_t e = 0; e < psf.dihedrals.atoms.size(); ++e) {
    const std::array<int, 4>& a = psf.dihedrals.atoms[e];
    const std::vector<CharmmDihedralTerm>* terms = b.par.find_dihedral(types_of(b, a));
    if (terms == nullptr) missing(b, psf.dihedrals.line[e], "dihedral", a);
    for (const CharmmDihedralTerm& t : *terms)
      b.system.torsions.push_back({a[0], a[1], a[2], a[3], t.periodicity, t.phase_deg * kRadPerDeg, t.k_kcal * kKjPerKcal});
  }
  for (std::size_t e = 0; e < psf.impropers.atoms.size(); ++e) {
    const std::array<int, 4>& a = psf.impropers.atoms[e];
    const CharmmImproperType* t = b.par.find_improper(types_of(b, a));
    if (t == nullptr) missing(b, psf.impropers.line[e], "improper", a);
    b.system.impropers.push_back({a[0], a[1], a[2], a[3], t->psi0_deg * kRadPerDeg, t->k_kcal_per_rad2 * kKjPerKcal});
  }
}

void add_cmaps(Build& b) {
  const PsfFile& psf = b.psf;
  std::map<const CharmmCmapType*, int> map_index;
  for (std::size_t e = 0; e < psf.cmaps.atoms.size(); ++e) {
    const std::array<int, 8>& a = psf.cmaps.atoms[e];
    const auto first = CharmmParameters::torsion_key(types_of(b, {a[0], a[1], a[2], a[3]}));
    const auto second = CharmmParameters::torsion_key(types_of(b, {a[4], a[5], a[6], a[7]}));
    const auto it = b.par.cmaps.find({first[0], first[1], first[2], first[3], second[0], second[1], second[2], second[3]});
    if (it == b.par.cmaps.end()) missing(b, psf.cmaps.line[e], "CMAP", a);
    const CharmmCmapType& t = it->second;
    auto [m, added] = map_index.emplace(&t, static_cast<int>(b.system.cmap_maps.size()));
    if (added)
      b.system.cmap_maps.push_back(
          cmap_map_from_minus_180(t.size, [&](std::size_t k) { return t.grid_kcal[k]; }, kKjPerKcal));
    b.system.cmap_torsions.push_back({a, m->second});
  }
}

// Chains by segment, residues by (segment, resid, resname), elements from the types, the kept bonds.
void make_topology(Build& b) {
  Topology& top = b.topology;
  top.source = b.psf.source;
  for (std::size_t i = 0; i < b.psf.atoms.size(); ++i) {
    const PsfAtom& a = b.psf.atoms[i];
    const PsfAtom* prev = i > 0 ? &b.psf.atoms[i - 1] : nullptr;
    if (prev == nullptr || prev->segment != a.segment) top.chains.push_back({a.segment, {}});
    if (prev == nullptr || prev->segment != a.segment || prev->resid != a.resid || prev->resname != a.resname) {
      TopologyResidue r;
      r.name = a.resname;
      r.chain = static_cast<int>(top.chains.size()) - 1;
      r.number = std::atoi(a.resid.c_str());
      if (!a.resid.empty() && std::isalpha(static_cast<unsigned char>(a.resid.back()))) r.insertion_code = a.resid.back();
      r.line = a.line;
      top.chains.back().residues.push_back(static_cast<int>(top.residues.size()));
      top.residues.push_back(std::move(r));
    }
    const Element* e = element_by_atomic_number(b.type[i]->atomic_number);
    top.residues.back().atoms.push_back(static_cast<int>(i));
    top.atoms.push_back({a.name, e != nullptr ? e->symbol : "", static_cast<int>(top.residues.size()) - 1,
                         static_cast<int>(i) + 1, a.line});
  }
  for (auto [i, j] : b.bonds) top.bonds.emplace_back(std::min(i, j), std::max(i, j));
}

}  // namespace
}  // namespace mdsim::charmm

namespace mdsim {

TopologyFileModel read_charmm_psf_text(const std::string& text, const std::string& source,
                                       const CharmmParameters& parameters, const TopologyFileOptions& options) {
  using namespace charmm;
  const PsfFile psf = parse_psf(text, source);
  Build b{psf, parameters};
  resolve_types(b);
  for (const PsfAtom& a : psf.atoms) {
    b.system.mass_amu.push_back(a.mass_amu);
    b.system.charge_e.push_back(a.charge_e);
  }
  add_bonds(b);
  add_angles(b);
  add_torsions(b);
  add_cmaps(b);
  add_nonbonded(b);
  make_topology(b);
  b.system.nonbonded = options.nonbonded;
  if (is_periodic(options.nonbonded.method)) b.system.box = options.box;
  TopologyFileModel model;
  model.system = std::move(b.system);
  model.topology = std::move(b.topology);
  model.notes = std::move(b.notes);
  return model;
}

TopologyFileModel read_charmm_psf(const std::string& path, const TopologyFileOptions& options) {
  const CharmmParameters parameters = read_charmm_parameters(options.parameters);
  return read_charmm_psf_text(read_text_file(path, "CHARMM PSF file"), path, parameters, options);
}

}  // namespace mdsim
