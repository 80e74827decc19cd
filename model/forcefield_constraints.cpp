// Constraints as OpenMM's createSystem sets them up: the constraint modes and rigid water decide which bonds and
// angles are constrained (the bond and angle generators then add the distances), hydrogen mass repartitioning,
// and the SETTLE triples of rigid waters.
#include <fmt/format.h>

#include "common/errors.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

bool rigid_atom(const Topology& top, const std::vector<char>& rigid_residue, int a) {
  return rigid_residue[static_cast<std::size_t>(top.atoms[static_cast<std::size_t>(a)].residue)] != 0;
}

}  // namespace

void ConstraintSet::add(int a1, int a2, double distance_nm) {
  auto [it, inserted] = distance_nm_.emplace(ordered(a1, a2), distance_nm);
  if (!inserted) {
    if (it->second != distance_nm)
      throw InputError(fmt::format("two constraints between atoms {} and {} with different distances ({} and {} nm)",
                                   a1, a2, it->second, distance_nm));
    return;
  }
  list_.push_back({a1, a2, distance_nm});
}

std::optional<double> ConstraintSet::distance_nm(int a1, int a2) const {
  auto it = distance_nm_.find(ordered(a1, a2));
  if (it == distance_nm_.end()) return std::nullopt;
  return it->second;
}

std::vector<char> rigid_water_residues(const Topology& top, const NormalisedNames& names, bool rigid_water) {
  std::vector<char> rigid(top.residues.size(), 0);
  if (rigid_water)
    for (std::size_t r = 0; r < top.residues.size(); ++r)
      if (names.residue[r] == "HOH") rigid[r] = 1;
  return rigid;
}

ConstraintFlags constraint_flags(const GeneratorInput& in, const std::vector<char>& rigid_residue,
                                 const std::vector<std::array<int, 3>>& angles) {
  const Topology& top = in.topology;
  const ConstraintMode mode = in.options.constraints;
  auto is_h = [&](int a) { return in.graph.element[static_cast<std::size_t>(a)] == "H"; };
  auto rigid = [&](int a) { return rigid_atom(top, rigid_residue, a); };
  ConstraintFlags flags;
  flags.bond.assign(top.bonds.size(), 0);
  for (std::size_t b = 0; b < top.bonds.size(); ++b) {
    const auto [a1, a2] = top.bonds[b];
    if (mode == ConstraintMode::AllBonds || mode == ConstraintMode::HAngles) flags.bond[b] = 1;
    else if (mode == ConstraintMode::HBonds) flags.bond[b] = is_h(a1) || is_h(a2);
    if (rigid(a1) && rigid(a2)) flags.bond[b] = 1;
  }
  flags.angle.assign(angles.size(), 0);
  for (std::size_t i = 0; i < angles.size(); ++i) {
    const auto& [a1, a2, a3] = angles[i];
    if (mode == ConstraintMode::HAngles) {
      const int num_h = is_h(a1) + is_h(a3);
      flags.angle[i] = num_h == 2 || (num_h == 1 && in.graph.element[static_cast<std::size_t>(a2)] == "O");
    }
    if (rigid(a1) && rigid(a2) && rigid(a3)) flags.angle[i] = 1;
  }
  return flags;
}

void repartition_hydrogen_masses(const GeneratorInput& in, const std::vector<char>& rigid_residue,
                                 double hydrogen_mass_amu, System& sys) {
  const Topology& top = in.topology;
  const auto& element = in.graph.element;
  const double hmass = hydrogen_mass_amu;
  if (!(hmass > 0.0)) throw InputError(fmt::format("hydrogen mass {} amu must be positive", hmass));
  for (auto [a1, a2] : top.bonds) {
    if (element[static_cast<std::size_t>(a1)] == "H") std::swap(a1, a2);
    if (element[static_cast<std::size_t>(a2)] == "H" && element[static_cast<std::size_t>(a1)] != "H" &&
        !element[static_cast<std::size_t>(a1)].empty() && !rigid_atom(top, rigid_residue, a2)) {
      const double transfer = hmass - sys.mass_amu[static_cast<std::size_t>(a2)];
      sys.mass_amu[static_cast<std::size_t>(a2)] = hmass;
      sys.mass_amu[static_cast<std::size_t>(a1)] -= transfer;
    }
  }
  for (int a = 0; a < top.num_atoms(); ++a)
    if (!(sys.mass_amu[static_cast<std::size_t>(a)] > 0.0) && in.match.atom_site[static_cast<std::size_t>(a)] == nullptr) {
      const auto& atom = top.atoms[static_cast<std::size_t>(a)];
      throw InputError(located(top.source, atom.line, 0,
                               fmt::format("hydrogen mass {} amu leaves atom '{}' of {} with mass {} amu; use a "
                                           "smaller hydrogen mass",
                                           hmass, atom.name, residue_label(top, atom.residue),
                                           sys.mass_amu[static_cast<std::size_t>(a)])));
    }
}

void add_rigid_waters(const GeneratorInput& in, const std::vector<char>& rigid_residue,
                      const ConstraintSet& constraints, System& sys) {
  const Topology& top = in.topology;
  for (std::size_t r = 0; r < top.residues.size(); ++r) {
    if (!rigid_residue[r]) continue;
    const auto& res = top.residues[r];
    int o = -1, real = 0;
    std::vector<int> h;
    for (int a : res.atoms) {
      if (in.match.atom_site[static_cast<std::size_t>(a)] != nullptr) continue;  // a 4-site water's M is placed
      ++real;
      if (in.graph.element[static_cast<std::size_t>(a)] == "O") o = a;
      else if (in.graph.element[static_cast<std::size_t>(a)] == "H") h.push_back(a);
    }
    if (real != 3 || o < 0 || h.size() != 2) continue;
    const auto oh1 = constraints.distance_nm(o, h[0]);
    const auto oh2 = constraints.distance_nm(o, h[1]);
    const auto hh = constraints.distance_nm(h[0], h[1]);
    if (!oh1 || !oh2 || !hh) continue;
    if (*oh1 != *oh2) continue;
    sys.rigid_waters.push_back({o, h[0], h[1], *oh1, *hh});
  }
}

}  // namespace mdsim::ffgen
