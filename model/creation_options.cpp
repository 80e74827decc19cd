// createSystem's constraint options on a topology file's flexible System, with the rules OpenMM 7.7's
// AmberPrmtopFile (app/internal/amber_file_parser.readAmberSystem) and GromacsTopFile share:
//  - a bond term is constrained under AllBonds and HAngles, under HBonds when an atom is a hydrogen, and when both
//    atoms belong to a rigid water; its term is removed unless flexible_constraints;
//  - an angle term is constrained (the i-k distance from the two constrained bond lengths by the law of cosines)
//    under HAngles for H-X-H and H-O-X, and inside a rigid water; its term is removed unless flexible_constraints;
//  - hydrogen masses are set along the topology's bonds, the difference taken from the heavy atom, except in rigid
//    waters.
// A water is a residue whose massive atoms are one oxygen and two hydrogens by element (TIP4P/TIP5P extra points,
// massless virtual sites, may be present); a term with a virtual site is never constrained.
#include "model/creation_options.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "model/particle_pairs.hpp"

namespace mdsim {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// Per atom facts the rules need.
struct Atoms {
  std::vector<char> hydrogen, oxygen, site, rigid;  // rigid: in a water made rigid by rigid_water
  std::vector<std::array<int, 3>> water;            // per rigid water: O, H, H
};

Atoms classify(const System& system, const Topology& top, bool rigid_water) {
  const std::size_t n = at(system.num_particles());
  Atoms a;
  a.hydrogen.assign(n, 0), a.oxygen.assign(n, 0), a.site.assign(n, 0), a.rigid.assign(n, 0);
  for (const VirtualSite& v : system.virtual_sites) a.site[at(v.particle)] = 1;
  for (std::size_t i = 0; i < n; ++i) {
    a.hydrogen[i] = top.atoms[i].element == "H" && !a.site[i];
    a.oxygen[i] = top.atoms[i].element == "O" && !a.site[i];
  }
  if (!rigid_water) return a;
  for (const TopologyResidue& res : top.residues) {
    std::vector<int> o, h;
    bool other = false;
    for (int i : res.atoms) {
      if (a.site[at(i)] || system.mass_amu[at(i)] == 0.0) continue;
      if (a.oxygen[at(i)]) o.push_back(i);
      else if (a.hydrogen[at(i)]) h.push_back(i);
      else other = true;
    }
    if (other || o.size() != 1 || h.size() != 2) continue;
    for (int i : res.atoms) a.rigid[at(i)] = 1;
    a.water.push_back({o[0], h[0], h[1]});
  }
  return a;
}

// The System's constraints by pair (existing ones first), adding without duplicates.
class Constraints {
 public:
  explicit Constraints(std::vector<DistanceConstraint>& list) : list_(list) {
    for (const DistanceConstraint& c : list_) distance_[pair_key(c.i, c.j)] = c.distance_nm;
  }
  void add(int i, int j, double distance_nm) {
    const auto [it, fresh] = distance_.emplace(pair_key(i, j), distance_nm);
    if (fresh) list_.push_back({i, j, distance_nm});
  }
  double distance(int i, int j) const {
    const auto it = distance_.find(pair_key(i, j));
    return it == distance_.end() ? -1.0 : it->second;
  }

 private:
  std::vector<DistanceConstraint>& list_;
  std::unordered_map<std::uint64_t, double> distance_;
};

void constrain_bonds(System& system, const Atoms& a, const CreationOptions& o, Constraints& constraints) {
  std::vector<HarmonicBondTerm> kept;
  for (const HarmonicBondTerm& b : system.bonds) {
    bool constrained = false;
    if (!a.site[at(b.i)] && !a.site[at(b.j)]) {
      constrained = o.constraints == ConstraintMode::AllBonds || o.constraints == ConstraintMode::HAngles ||
                    (o.constraints == ConstraintMode::HBonds && (a.hydrogen[at(b.i)] || a.hydrogen[at(b.j)])) ||
                    (a.rigid[at(b.i)] && a.rigid[at(b.j)]);
    }
    if (constrained) constraints.add(b.i, b.j, b.length_nm);
    if (!constrained || o.flexible_constraints) kept.push_back(b);
  }
  system.bonds = std::move(kept);
}

void constrain_angles(System& system, const Atoms& a, const CreationOptions& o, Constraints& constraints) {
  std::vector<HarmonicAngleTerm> kept;
  for (const HarmonicAngleTerm& t : system.angles) {
    bool constrained = false;
    if (!a.site[at(t.i)] && !a.site[at(t.j)] && !a.site[at(t.k)]) {
      const int hydrogens = a.hydrogen[at(t.i)] + a.hydrogen[at(t.k)];
      constrained = (o.constraints == ConstraintMode::HAngles && (hydrogens == 2 || (hydrogens == 1 && a.oxygen[at(t.j)]))) ||
                    (a.rigid[at(t.i)] && a.rigid[at(t.j)] && a.rigid[at(t.k)]);
    }
    if (constrained) {
      const double l1 = constraints.distance(t.i, t.j), l2 = constraints.distance(t.j, t.k);
      if (l1 < 0.0 || l2 < 0.0) {
        constrained = false;  // its bonds are flexible: the angle stays a term rather than vanish
      } else {
        constraints.add(t.i, t.k, std::sqrt(l1 * l1 + l2 * l2 - 2.0 * l1 * l2 * std::cos(t.angle_rad)));
      }
    }
    if (!constrained || o.flexible_constraints) kept.push_back(t);
  }
  system.angles = std::move(kept);
}

void repartition_hydrogen_mass(System& system, const Topology& top, const std::vector<std::pair<int, int>>& bonds,
                               const Atoms& a, double hydrogen_mass_amu) {
  if (!(hydrogen_mass_amu > 0.0))
    throw InputError(fmt::format("hydrogen mass {} amu must be positive", quoted_number(hydrogen_mass_amu)));
  for (auto [heavy, h] : bonds) {
    if (a.hydrogen[at(heavy)]) std::swap(heavy, h);
    if (a.rigid[at(h)] || !a.hydrogen[at(h)] || a.hydrogen[at(heavy)] || top.atoms[at(heavy)].element.empty()) continue;
    system.mass_amu[at(heavy)] -= hydrogen_mass_amu - system.mass_amu[at(h)];
    system.mass_amu[at(h)] = hydrogen_mass_amu;
  }
  for (int i = 0; i < system.num_particles(); ++i) {
    if (a.site[at(i)] || system.mass_amu[at(i)] > 0.0) continue;
    const TopologyAtom& atom = top.atoms[at(i)];
    throw InputError(located(top.source, atom.line, 0,
                             fmt::format("hydrogen mass {} amu leaves atom {} '{}' of residue {} {} with mass {} amu; "
                                         "use a smaller hydrogen mass",
                                         quoted_number(hydrogen_mass_amu), i + 1, atom.name,
                                         top.residues[at(atom.residue)].name, top.residues[at(atom.residue)].number,
                                         quoted_number(system.mass_amu[at(i)]))));
  }
}

}  // namespace

void apply_creation_options(System& system, const Topology& topology, const CreationOptions& options) {
  if (topology.num_atoms() != system.num_particles())
    throw InputError(located(topology.source, 0, 0,
                             fmt::format("the topology has {} atoms, the System {} particles", topology.num_atoms(),
                                         system.num_particles())));
  std::vector<std::pair<int, int>> bonds = topology.bonds;
  if (bonds.empty())
    for (const HarmonicBondTerm& b : system.bonds) bonds.emplace_back(b.i, b.j);
  const Atoms atoms = classify(system, topology, options.rigid_water);
  Constraints constraints(system.constraints);
  constrain_bonds(system, atoms, options, constraints);
  constrain_angles(system, atoms, options, constraints);
  for (const auto& [o, h1, h2] : atoms.water) {
    const double oh1 = constraints.distance(o, h1), oh2 = constraints.distance(o, h2), hh = constraints.distance(h1, h2);
    if (oh1 > 0.0 && hh > 0.0 && oh1 == oh2) system.rigid_waters.push_back({o, h1, h2, oh1, hh});
  }
  if (options.hydrogen_mass_amu) repartition_hydrogen_mass(system, topology, bonds, atoms, *options.hydrogen_mass_amu);
}

}  // namespace mdsim
