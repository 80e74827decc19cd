// io/amber_prmtop's bonded terms, nonbonded exceptions, CMAP and water extra points, in OpenMM 7.7's order and
// conversions (kcal -> kJ by 4.184, Å -> nm by 0.1; AMBER's K of K (x - x0)^2 doubled for OpenMM's k/2).
#include <fmt/format.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "common/errors.hpp"
#include "io/amber_prmtop_internal.hpp"
#include "model/cmap.hpp"
#include "model/particle_pairs.hpp"

namespace mdsim::amber {
namespace {

std::size_t at(long i) { return static_cast<std::size_t>(i); }

// An atom from a bonded list's coordinate-array pointer (3 * index; negative allowed only where `may_be_negative`).
int atom_of(const PrmtopSections& p, const Section& s, std::size_t item, long pointer, long natom,
            bool may_be_negative) {
  // (LONG_MIN has no positive counterpart: it stays negative and is refused)
  const long value = may_be_negative && pointer < 0 && pointer != LONG_MIN ? -pointer : pointer;
  if (value < 0 || value % 3 != 0 || value / 3 >= natom)
    p.fail(s, static_cast<long>(item),
           fmt::format("atom pointer {} is not an atom: expected 3 (index - 1) for an atom index 1 to NATOM = {}{}",
                       pointer, natom, may_be_negative ? "" : " (negative here is not allowed)"));
  return static_cast<int>(value / 3);
}

// A parameter type (1-based) of a bonded entry, checked against the number of types.
std::size_t type_of(const PrmtopSections& p, const Section& s, std::size_t item, long type, long count,
                    const char* count_name) {
  if (type < 1 || type > count)
    p.fail(s, static_cast<long>(item),
           fmt::format("parameter type {} is out of range: expected 1 to {} = {}", type, count_name, count));
  return at(type - 1);
}

void read_bonds(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  const std::vector<double> k = p.reals("BOND_FORCE_CONSTANT", ptr.numbnd, "NUMBND of %FLAG POINTERS");
  const std::vector<double> r0 = p.reals("BOND_EQUIL_VALUE", ptr.numbnd, "NUMBND of %FLAG POINTERS");
  for (const auto& [flag, count, name] : {std::tuple{"BONDS_INC_HYDROGEN", ptr.nbonh, "NBONH"},
                                          std::tuple{"BONDS_WITHOUT_HYDROGEN", ptr.mbona, "MBONA"}}) {
    const std::vector<long> v = p.ints(flag, 3 * count, fmt::format("3 x {} of %FLAG POINTERS", name));
    const Section& s = p.require(flag);
    for (std::size_t e = 0; e < v.size(); e += 3) {
      const int i = atom_of(p, s, e, v[e], ptr.natom, false), j = atom_of(p, s, e + 1, v[e + 1], ptr.natom, false);
      const std::size_t t = type_of(p, s, e + 2, v[e + 2], ptr.numbnd, "NUMBND");
      b.system.bonds.push_back({i, j, r0[t] * 0.1, 2.0 * k[t] * 418.4});
      b.topology.bonds.emplace_back(std::min(i, j), std::max(i, j));
    }
  }
}

void read_angles(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  const std::vector<double> k = p.reals("ANGLE_FORCE_CONSTANT", ptr.numang, "NUMANG of %FLAG POINTERS");
  const std::vector<double> theta0 = p.reals("ANGLE_EQUIL_VALUE", ptr.numang, "NUMANG of %FLAG POINTERS");
  for (const auto& [flag, count, name] : {std::tuple{"ANGLES_INC_HYDROGEN", ptr.ntheth, "NTHETH"},
                                          std::tuple{"ANGLES_WITHOUT_HYDROGEN", ptr.mtheta, "MTHETA"}}) {
    const std::vector<long> v = p.ints(flag, 4 * count, fmt::format("4 x {} of %FLAG POINTERS", name));
    const Section& s = p.require(flag);
    for (std::size_t e = 0; e < v.size(); e += 4) {
      const int i = atom_of(p, s, e, v[e], ptr.natom, false), j = atom_of(p, s, e + 1, v[e + 1], ptr.natom, false),
                l = atom_of(p, s, e + 2, v[e + 2], ptr.natom, false);
      const std::size_t t = type_of(p, s, e + 3, v[e + 3], ptr.numang, "NUMANG");
      b.system.angles.push_back({i, j, l, theta0[t], 2.0 * k[t] * 4.184});
    }
  }
}

// The dihedral lists (with hydrogen, then without), entries of five values, checked.
struct Dihedral {
  int atoms[4];
  bool one_four;  // third and fourth pointers positive (OpenMM's test)
  std::size_t type;
};

std::vector<Dihedral> read_dihedrals(const PrmtopSections& p, const Pointers& ptr) {
  std::vector<Dihedral> list;
  for (const auto& [flag, count, name] : {std::tuple{"DIHEDRALS_INC_HYDROGEN", ptr.nphih, "NPHIH"},
                                          std::tuple{"DIHEDRALS_WITHOUT_HYDROGEN", ptr.mphia, "MPHIA"}}) {
    const std::vector<long> v = p.ints(flag, 5 * count, fmt::format("5 x {} of %FLAG POINTERS", name));
    const Section& s = p.require(flag);
    for (std::size_t e = 0; e < v.size(); e += 5) {
      Dihedral d{};
      for (std::size_t a = 0; a < 4; ++a) d.atoms[a] = atom_of(p, s, e + a, v[e + a], ptr.natom, a >= 2);
      d.one_four = v[e + 2] > 0 && v[e + 3] > 0;
      d.type = type_of(p, s, e + 4, v[e + 4], ptr.nptra, "NPTRA");
      list.push_back(d);
    }
  }
  return list;
}

}  // namespace

void read_bonded_terms(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  read_bonds(p, ptr, b);
  read_angles(p, ptr, b);
  const std::vector<double> k = p.reals("DIHEDRAL_FORCE_CONSTANT", ptr.nptra, "NPTRA of %FLAG POINTERS");
  const std::vector<double> periodicity = p.reals("DIHEDRAL_PERIODICITY", ptr.nptra, "NPTRA of %FLAG POINTERS");
  const std::vector<double> phase = p.reals("DIHEDRAL_PHASE", ptr.nptra, "NPTRA of %FLAG POINTERS");
  for (std::size_t t = 0; t < periodicity.size(); ++t)
    if (!(periodicity[t] >= 0.0 && periodicity[t] <= 1000.0))
      p.fail(p.require("DIHEDRAL_PERIODICITY"), static_cast<long>(t),
             fmt::format("dihedral type {} has periodicity {}: expected a whole number from 0 to 1000", t + 1,
                         periodicity[t]));
  for (const Dihedral& d : read_dihedrals(p, ptr)) {
    const int n = static_cast<int>(0.5 + periodicity[d.type]);
    b.system.torsions.push_back({d.atoms[0], d.atoms[1], d.atoms[2], d.atoms[3], n, phase[d.type], k[d.type] * 4.184});
  }
}

void read_exceptions(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  std::vector<double> scee(at(ptr.nptra), 1.2), scnb(at(ptr.nptra), 2.0);
  if (p.find("SCEE_SCALE_FACTOR") != nullptr) scee = p.reals("SCEE_SCALE_FACTOR", ptr.nptra, "NPTRA");
  if (p.find("SCNB_SCALE_FACTOR") != nullptr) scnb = p.reals("SCNB_SCALE_FACTOR", ptr.nptra, "NPTRA");
  System& sys = b.system;
  std::unordered_map<std::uint64_t, std::size_t> one_four;  // pair -> its exception
  const double sigma_scale = std::pow(2.0, -1.0 / 6.0);
  for (const Dihedral& d : read_dihedrals(p, ptr)) {
    if (!d.one_four) continue;
    const int i = d.atoms[0], l = d.atoms[3];
    const auto [rmin_nm, epsilon] = one_four_lj(b, i, l);
    if (rmin_nm < 0.0) continue;
    if (!(scee[d.type] != 0.0 && scnb[d.type] != 0.0))
      p.fail(p.require(scee[d.type] == 0.0 ? "SCEE_SCALE_FACTOR" : "SCNB_SCALE_FACTOR"), static_cast<long>(d.type),
             fmt::format("dihedral type {} has a 1-4 scale factor of 0: expected a positive divisor (1.2, 2.0)",
                         d.type + 1));
    const NonbondedException e{i, l, sys.charge_e[at(i)] * sys.charge_e[at(l)] / scee[d.type], rmin_nm * sigma_scale,
                               epsilon / scnb[d.type]};
    const auto [it, fresh] = one_four.emplace(pair_key(i, l), sys.exceptions.size());
    if (fresh) {
      sys.exceptions.push_back(e);
      continue;
    }
    const NonbondedException& old = sys.exceptions[it->second];
    if (old.charge_product_e2 != e.charge_product_e2 || old.epsilon_kj_per_mol != e.epsilon_kj_per_mol)
      p.fail(p.require("DIHEDRALS_WITHOUT_HYDROGEN"), -1,
             fmt::format("atoms {} and {} are the 1-4 pair of two dihedrals with different 1-4 scale factors: mark "
                         "all but one with a negative third atom pointer",
                         i + 1, l + 1));
  }
  const std::vector<long> count = p.ints("NUMBER_EXCLUDED_ATOMS", ptr.natom, "NATOM of %FLAG POINTERS");
  const std::vector<long> list = p.ints("EXCLUDED_ATOMS_LIST", ptr.next, "NEXT of %FLAG POINTERS");
  const Section& s = p.require("EXCLUDED_ATOMS_LIST");
  std::size_t k = 0;
  for (std::size_t i = 0; i < count.size(); ++i)
    for (long n = 0; n < count[i]; ++n, ++k) {
      if (k >= list.size())
        p.fail(p.require("NUMBER_EXCLUDED_ATOMS"), static_cast<long>(i),
               fmt::format("the excluded-atom counts add up to more than the {} entries (NEXT) of EXCLUDED_ATOMS_LIST",
                           list.size()));
      if (list[k] <= 0) continue;  // 0: an atom with no exclusions
      if (list[k] > ptr.natom)
        p.fail(s, static_cast<long>(k), fmt::format("atom {} is out of range: expected 1 to NATOM = {}", list[k], ptr.natom));
      const int j = static_cast<int>(list[k] - 1);
      if (one_four.count(pair_key(static_cast<int>(i), j))) continue;
      sys.exceptions.push_back({static_cast<int>(i), j, 0.0, 0.1, 0.0});
    }
}

namespace {

// "CMAP_..." or, in prmtops from chamber/ParmEd, "CHARMM_CMAP_..."; "" when neither is present.
std::string cmap_prefix(const PrmtopSections& p) {
  if (p.find("CMAP_COUNT") != nullptr) return "";
  if (p.find("CHARMM_CMAP_COUNT") != nullptr) return "CHARMM_";
  return "none";
}

}  // namespace

void read_cmap(const PrmtopSections& p, const Pointers& ptr, Build& b) {
  const std::string pre = cmap_prefix(p);
  if (pre == "none") return;
  const std::vector<long> count = p.ints(pre + "CMAP_COUNT", 2, "the number of CMAP terms and of maps");
  for (std::size_t k = 0; k < 2; ++k)
    if (count[k] < 0 || count[k] > 1000000000L)
      p.fail(p.require(pre + "CMAP_COUNT"), static_cast<long>(k),
             fmt::format("{} {} is not a count from 0 to 10^9", k == 0 ? "the number of CMAP terms" : "the number of maps",
                         count[k]));
  const std::vector<long> size = p.ints(pre + "CMAP_RESOLUTION", count[1], "the number of maps, CMAP_COUNT's second");
  for (long m = 0; m < count[1]; ++m) {
    const std::string flag = fmt::format("{}CMAP_PARAMETER_{:02d}", pre, m + 1);
    const long n = size[at(m)];
    if (n <= 0 || n > 100000)
      p.fail(p.require(pre + "CMAP_RESOLUTION"), m,
             fmt::format("map {} has resolution {}: expected 1 to 100000 points per angle", m + 1, n));
    const std::vector<double> grid = p.reals(flag, n * n, fmt::format("{} x {}, the map's resolution squared", n, n));
    b.system.cmap_maps.push_back(cmap_map_from_minus_180(static_cast<int>(n), [&](std::size_t k) { return grid[k]; }, 4.184));
  }
  const std::string flag = pre + "CMAP_INDEX";
  const std::vector<long> v = p.ints(flag, 6 * count[0], "6 x the number of CMAP terms, CMAP_COUNT's first");
  const Section& s = p.require(flag);
  for (std::size_t e = 0; e < v.size(); e += 6) {
    int a[5];
    for (std::size_t k = 0; k < 5; ++k) {
      if (v[e + k] < 1 || v[e + k] > ptr.natom)
        p.fail(s, static_cast<long>(e + k),
               fmt::format("atom {} is out of range: expected 1 to NATOM = {}", v[e + k], ptr.natom));
      a[k] = static_cast<int>(v[e + k] - 1);
    }
    const std::size_t map = type_of(p, s, e + 5, v[e + 5], count[1], "the number of maps");
    b.system.cmap_torsions.push_back({{a[0], a[1], a[2], a[3], a[1], a[2], a[3], a[4]}, static_cast<int>(map)});
  }
}

namespace {

bool water_label(const std::string& name) {
  return name == "WAT" || name == "HOH" || name == "TP4" || name == "TP5" || name == "T4E";
}
bool extra_point_name(const std::string& name) { return name.rfind("EP", 0) == 0 || name.rfind("LP", 0) == 0; }

struct ExtraPointWater {
  std::vector<int> o, h, ep;
  double oh = -1.0, hh = -1.0, oe = -1.0;  // nm, from the bond terms (the last bond of each kind, as OpenMM)
};

void add_water_sites(const PrmtopSections& p, const TopologyResidue& res, const ExtraPointWater& w, System& sys) {
  if (w.o.size() != 1 || w.h.size() != 2 || w.ep.size() > 2 || w.oh <= 0.0 || w.hh <= 0.0 || w.oe < 0.0)
    throw InputError(located(
        p.source(), res.line, 0,
        fmt::format("%FLAG ATOM_NAME: water residue {} {} has extra points but not one O and two H atoms with O-H, "
                    "H-H and O-EP bonds: the extra points' positions cannot be derived (as OpenMM does for "
                    "TIP4P/TIP5P/OPC waters)",
                    res.name, res.number)));
  const double height = std::sqrt(w.oh * w.oh - 0.25 * w.hh * w.hh);
  VirtualSite site;
  site.num_parents = 3;
  site.parents = {w.o[0], w.h[0], w.h[1]};
  if (w.ep.size() == 1) {
    const double weight_h = w.oe / height;
    site.type = VirtualSiteType::ThreeParticleAverage;
    site.particle = w.ep[0];
    site.weights = {1.0 - weight_h, weight_h / 2.0, weight_h / 2.0};
    sys.virtual_sites.push_back(site);
    return;
  }
  const double out_of_plane = 54.735 * M_PI / 180.0;
  const double weight_h = std::cos(out_of_plane) * w.oe / height;
  const double angle_hoh = 2.0 * std::asin(0.5 * w.hh / w.oh);
  const double weight_cross = std::sin(out_of_plane) * w.oe / (w.oh * w.oh * std::sin(angle_hoh));
  site.type = VirtualSiteType::OutOfPlane;
  for (int k = 0; k < 2; ++k) {
    site.particle = w.ep[at(k)];
    site.weights = {weight_h / 2.0, weight_h / 2.0, k == 0 ? weight_cross : -weight_cross};
    sys.virtual_sites.push_back(site);
  }
}

}  // namespace

void read_extra_points(const PrmtopSections& p, Build& b) {
  const Topology& top = b.topology;
  std::map<int, ExtraPointWater> waters;  // residue -> its atoms
  for (int a = 0; a < top.num_atoms(); ++a) {
    const TopologyAtom& atom = top.atoms[at(a)];
    if (water_label(top.residues[at(atom.residue)].name) && extra_point_name(atom.name)) waters[atom.residue];
  }
  if (waters.empty()) return;
  for (auto& [r, w] : waters)
    for (int a : top.residues[at(r)].atoms) {
      const std::string& name = top.atoms[at(a)].name;
      if (name.rfind('O', 0) == 0) w.o.push_back(a);
      if (name.rfind('H', 0) == 0) w.h.push_back(a);
      if (extra_point_name(name)) w.ep.push_back(a);
    }
  for (const HarmonicBondTerm& bond : b.system.bonds) {
    const auto it = waters.find(top.atoms[at(bond.i)].residue);
    if (it == waters.end()) continue;
    const std::string &n1 = top.atoms[at(bond.i)].name, &n2 = top.atoms[at(bond.j)].name;
    const bool h1 = n1.rfind('H', 0) == 0, h2 = n2.rfind('H', 0) == 0;
    const bool o = n1.rfind('O', 0) == 0 || n2.rfind('O', 0) == 0;
    if (h1 || h2) {
      if (h1 && h2) it->second.hh = bond.length_nm;
      if (o) it->second.oh = bond.length_nm;
    } else if (o && (extra_point_name(n1) || extra_point_name(n2))) {
      it->second.oe = bond.length_nm;
    }
  }
  for (const auto& [r, w] : waters) add_water_sites(p, top.residues[at(r)], w, b.system);
}

}  // namespace mdsim::amber
