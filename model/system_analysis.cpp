#include "model/system_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "common/errors.hpp"
#include "model/elements.hpp"
#include "model/molecules.hpp"
#include "model/particle_pairs.hpp"

namespace mdsim {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// Bond terms and constraints as links with their lengths (a constraint's distance wins over a bond's length).
struct LinkGraph {
  std::vector<std::vector<int>> neighbours;
  std::unordered_map<std::uint64_t, double> length_nm;

  explicit LinkGraph(const System& system) : neighbours(at(system.num_particles())) {
    const int n = system.num_particles();
    auto link = [&](int a, int b, double length) {
      if (a < 0 || b < 0 || a >= n || b >= n || a == b) return;
      const auto [it, fresh] = length_nm.emplace(pair_key(a, b), length);
      if (!fresh) {
        it->second = length;
        return;
      }
      neighbours[at(a)].push_back(b);
      neighbours[at(b)].push_back(a);
    };
    for (const HarmonicBondTerm& b : system.bonds) link(b.i, b.j, b.length_nm);
    for (const DistanceConstraint& c : system.constraints) link(c.i, c.j, c.distance_nm);
  }

  // Whether the link i-k closes a triangle i-j-k of links as its longest side.
  bool closes_angle(int i, int k) const {
    const double ik = length_nm.at(pair_key(i, k));
    for (int j : neighbours[at(i)]) {
      if (j == k) continue;
      const auto jk = length_nm.find(pair_key(j, k));
      if (jk == length_nm.end()) continue;
      if (ik > length_nm.at(pair_key(i, j)) && ik > jk->second) return true;
    }
    return false;
  }
};

// Per atom: the number of chemical bonds (system_bonds) and whether it is a hydrogen by mass and valence.
struct Valence {
  std::vector<int> degree;
  std::vector<char> hydrogen;
};

Valence valence(const System& system, const std::vector<std::pair<int, int>>& bonds) {
  Valence v;
  v.degree.assign(at(system.num_particles()), 0);
  for (const auto& [i, j] : bonds) ++v.degree[at(i)], ++v.degree[at(j)];
  v.hydrogen.assign(v.degree.size(), 0);
  for (std::size_t a = 0; a < v.degree.size(); ++a)
    v.hydrogen[a] = v.degree[a] <= 1 && system.mass_amu[a] > 0.0 && system.mass_amu[a] <= kMaxHydrogenMassAmu;
  return v;
}

// The centre of a three-atom molecule that is a water by valence (one atom bonded to two hydrogens), or -1.
int water_centre(const std::vector<int>& molecule, const Valence& v, const std::vector<std::pair<int, int>>& bonds) {
  if (molecule.size() != 3) return -1;
  for (int c : molecule) {
    if (v.hydrogen[at(c)] || v.degree[at(c)] != 2) continue;
    int hydrogens = 0;
    for (const auto& [i, j] : bonds)
      if (i == c || j == c) hydrogens += v.hydrogen[at(i == c ? j : i)];
    if (hydrogens == 2) return c;
  }
  return -1;
}

// The molecule's atoms that are not virtual sites (a TIP4P water's site joins its molecule; the water is its three atoms).
std::vector<int> real_atoms(const std::vector<int>& molecule, const std::vector<char>& is_site) {
  std::vector<int> atoms;
  for (int a : molecule)
    if (!is_site[at(a)]) atoms.push_back(a);
  return atoms;
}

std::vector<char> site_flags(const System& system) {
  std::vector<char> is_site(at(system.num_particles()), 0);
  for (const VirtualSite& s : system.virtual_sites)
    if (s.particle >= 0 && s.particle < system.num_particles()) is_site[at(s.particle)] = 1;
  return is_site;
}

}  // namespace

std::vector<RigidWater> find_rigid_waters(const System& system) {
  std::unordered_map<std::uint64_t, double> constrained;
  for (const DistanceConstraint& c : system.constraints) constrained[pair_key(c.i, c.j)] = c.distance_nm;
  auto length = [&](int a, int b) {
    const auto it = constrained.find(pair_key(a, b));
    return it == constrained.end() ? -1.0 : it->second;
  };
  std::vector<RigidWater> waters;
  const std::vector<char> is_site = site_flags(system);
  for (const std::vector<int>& molecule : find_molecules(system)) {
    const std::vector<int> m = real_atoms(molecule, is_site);
    if (m.size() != 3) continue;
    const double d01 = length(m[0], m[1]), d02 = length(m[0], m[2]), d12 = length(m[1], m[2]);
    if (d01 < 0.0 || d02 < 0.0 || d12 < 0.0) continue;
    // The oxygen: the one atom whose two constraints have equal lengths (an equilateral triangle has none).
    const int equal = (d01 == d02) + (d01 == d12) + (d02 == d12);
    if (equal != 1) continue;
    if (d01 == d02)
      waters.push_back({m[0], m[1], m[2], d01, d12});
    else if (d01 == d12)
      waters.push_back({m[1], m[0], m[2], d01, d02});
    else
      waters.push_back({m[2], m[0], m[1], d02, d01});
  }
  return waters;
}

std::vector<std::pair<int, int>> system_bonds(const System& system) {
  const LinkGraph graph(system);
  std::vector<std::pair<int, int>> bonds;
  for (const HarmonicBondTerm& b : system.bonds) bonds.emplace_back(std::min(b.i, b.j), std::max(b.i, b.j));
  for (const DistanceConstraint& c : system.constraints)
    if (!graph.closes_angle(c.i, c.j)) bonds.emplace_back(std::min(c.i, c.j), std::max(c.i, c.j));
  std::sort(bonds.begin(), bonds.end());
  bonds.erase(std::unique(bonds.begin(), bonds.end()), bonds.end());
  return bonds;
}

ConstraintSummary summarize_constraints(const System& system) {
  ConstraintSummary s;
  s.rigid_waters = static_cast<int>(system.rigid_waters.size());
  const std::vector<std::pair<int, int>> bonds = system_bonds(system);
  const Valence v = valence(system, bonds);
  const LinkGraph graph(system);
  std::unordered_map<std::uint64_t, char> in_rigid_water, constrained;
  for (const RigidWater& w : system.rigid_waters)
    for (const auto& [a, b] : {std::pair{w.oxygen, w.hydrogen1}, {w.oxygen, w.hydrogen2}, {w.hydrogen1, w.hydrogen2}})
      in_rigid_water[pair_key(a, b)] = 1;
  for (const DistanceConstraint& c : system.constraints) {
    constrained[pair_key(c.i, c.j)] = 1;
    if (in_rigid_water.count(pair_key(c.i, c.j))) continue;
    ++s.constraints;
    if (graph.closes_angle(c.i, c.j)) {
      if (!s.angle_constraints) s.example = {c.i, c.j};
      s.angle_constraints = true;
    } else if (!v.hydrogen[at(c.i)] && !v.hydrogen[at(c.j)]) {
      if (!s.heavy_bond_constraints && !s.angle_constraints) s.example = {c.i, c.j};
      s.heavy_bond_constraints = true;
    } else if (s.example.first < 0) {
      s.example = {c.i, c.j};
    }
  }
  for (const HarmonicBondTerm& b : system.bonds) {
    if (constrained.count(pair_key(b.i, b.j))) continue;
    s.unconstrained_bonds = true;
    if (v.hydrogen[at(b.i)] || v.hydrogen[at(b.j)]) s.unconstrained_h_bonds = true;
  }
  std::vector<char> rigid(at(system.num_particles()), 0);
  for (const RigidWater& w : system.rigid_waters) rigid[at(w.oxygen)] = 1;
  const std::vector<char> is_site = site_flags(system);
  for (const std::vector<int>& m : find_molecules(system)) {
    const int centre = water_centre(real_atoms(m, is_site), v, bonds);
    if (centre >= 0 && !rigid[at(centre)]) ++s.flexible_waters;
  }
  return s;
}

bool constraints_agree(const ConstraintSummary& s, ConstraintMode mode) {
  switch (mode) {
    case ConstraintMode::None:
      return s.constraints == 0;
    case ConstraintMode::HBonds:
      return !s.heavy_bond_constraints && !s.angle_constraints && !s.unconstrained_h_bonds;
    case ConstraintMode::AllBonds:
      return !s.angle_constraints && !s.unconstrained_bonds;
    case ConstraintMode::HAngles:
      return !s.unconstrained_bonds;
  }
  return false;
}

bool rigid_water_agrees(const ConstraintSummary& s, bool rigid_water) {
  return rigid_water ? s.flexible_waters == 0 : s.rigid_waters == 0;
}

ConstraintMode system_constraint_mode(const ConstraintSummary& s) {
  for (const ConstraintMode m :
       {ConstraintMode::None, ConstraintMode::HBonds, ConstraintMode::AllBonds, ConstraintMode::HAngles})
    if (constraints_agree(s, m)) return m;
  if (s.angle_constraints) return ConstraintMode::HAngles;
  return s.heavy_bond_constraints ? ConstraintMode::AllBonds : ConstraintMode::HBonds;
}

namespace {

// Element symbols per particle: a hydrogen by mass and valence, else the element nearest its mass with the mass
// its hydrogens gained by repartitioning given back (a CH3 carbon at 5.9 amu with three 3.02-amu hydrogens: 12.0).
std::vector<std::string> elements_of(const System& system, const std::vector<std::pair<int, int>>& bonds,
                                     const Valence& v) {
  const double hydrogen_mass = element_by_mass(1.0)->mass_amu;
  std::vector<double> mass = system.mass_amu;
  for (const auto& [i, j] : bonds) {
    if (v.hydrogen[at(i)] == v.hydrogen[at(j)]) continue;
    const int h = v.hydrogen[at(i)] ? i : j, heavy = h == i ? j : i;
    mass[at(heavy)] += system.mass_amu[at(h)] - hydrogen_mass;
  }
  std::vector<std::string> symbols(mass.size());
  for (std::size_t a = 0; a < mass.size(); ++a) {
    const Element* e = v.hydrogen[a] ? element_by_mass(1.0) : element_by_mass(mass[a]);
    symbols[a] = e != nullptr ? e->symbol : "";
  }
  return symbols;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Topology topology_from_system(const System& system, const std::vector<Vec3d>& positions, const std::string& source) {
  if (static_cast<int>(positions.size()) != system.num_particles())
    throw InputError(
        located(source, 0, 0,
                fmt::format("{} positions for a System of {} particles", positions.size(), system.num_particles())));
  Topology top;
  top.source = source;
  top.bonds = system_bonds(system);
  top.positions_nm = positions;
  top.box = system.box;
  const Valence v = valence(system, top.bonds);
  const std::vector<std::string> element = elements_of(system, top.bonds, v);
  top.chains.push_back({"A", {}});
  top.atoms.resize(positions.size());
  const std::vector<char> is_site = site_flags(system);
  for (const std::vector<int>& m : find_molecules(system)) {
    const int r = static_cast<int>(top.residues.size());
    TopologyResidue& res = top.residues.emplace_back();
    res.name = water_centre(real_atoms(m, is_site), v, top.bonds) >= 0 ? "HOH"
               : m.size() == 1                                         ? upper(element[at(m[0])])
                                                                       : "MOL";
    if (res.name.empty()) res.name = "UNK";
    res.chain = 0;
    res.number = r + 1;
    res.atoms = m;
    top.chains[0].residues.push_back(r);
    std::map<std::string, int> count;
    for (int a : m) {
      TopologyAtom& atom = top.atoms[at(a)];
      atom.element = element[at(a)];
      if (is_site[at(a)]) atom.element.clear();  // an extra point (massless site) has no element
      const int k = ++count[atom.element];
      const bool numbered = !(res.name == "HOH" && atom.element == "O") && m.size() > 1;
      const std::string stem = is_site[at(a)] ? "EP" : atom.element.empty() ? std::string("X") : upper(atom.element);
      atom.name = stem + (numbered ? std::to_string(k) : "");
      atom.residue = r;
      atom.serial = a + 1;
    }
  }
  return top;
}

}  // namespace mdsim
