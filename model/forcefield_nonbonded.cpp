// Per-particle parameters (masses from atom types; charge, sigma, epsilon as OpenMM's NonbondedGenerator assigns
// them) and the nonbonded exceptions of NonbondedForce::createExceptionsFromBonds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/errors.hpp"
#include "model/bond_graph.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

// Per atom type: the values of the last <NonbondedForce> <Atom> entry naming it (by type or class), or null.
std::vector<const std::map<std::string, double>*> nonbonded_values_by_type(const GeneratorInput& in) {
  const ForceFieldData& ff = in.forcefield;
  std::vector<const std::map<std::string, double>*> type_values(ff.atom_types.size(), nullptr);
  for (const auto& entry : ff.nonbonded_atoms) {
    const ResolvedSpec s = resolve(entry.atom, ff, in.tables);
    for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
      if (spec_has(s, static_cast<int>(t), in.tables)) type_values[t] = &entry.values;
  }
  return type_values;
}

// Atom a's charge, sigma and epsilon: from its type's <NonbondedForce> entry, else from its template atom.
std::array<double, 3> atom_nonbonded_values(const GeneratorInput& in, int a,
                                            const std::vector<const std::map<std::string, double>*>& type_values) {
  static const char* const kNames[3] = {"charge", "sigma", "epsilon"};
  const Topology& top = in.topology;
  const ForceFieldData& ff = in.forcefield;
  const int t = in.type_of(a);
  const auto* values = type_values[static_cast<std::size_t>(t)];
  const auto& atom = top.atoms[static_cast<std::size_t>(a)];
  if (values == nullptr)
    throw InputError(located(top.source, atom.line, 0,
                             fmt::format("atom '{}' of {} has atom type '{}', for which <NonbondedForce> defines "
                                         "no parameters",
                                         atom.name, residue_label(top, atom.residue),
                                         ff.atom_types[static_cast<std::size_t>(t)].name)));
  std::array<double, 3> v{0.0, 0.0, 0.0};
  for (std::size_t q = 0; q < 3; ++q) {
    auto it = values->find(kNames[q]);
    if (it != values->end()) {
      v[q] = it->second;
      continue;
    }
    const auto* p = in.match.atom_parameters[static_cast<std::size_t>(a)];
    auto jt = p->find(kNames[q]);
    if (jt == p->end())
      throw InputError(located(top.source, atom.line, 0,
                               fmt::format("atom '{}' of {} has no {} (neither its type '{}' in <NonbondedForce> "
                                           "nor its residue template gives one)",
                                           atom.name, residue_label(top, atom.residue), kNames[q],
                                           ff.atom_types[static_cast<std::size_t>(t)].name)));
    v[q] = jt->second;
  }
  return v;
}

// The bonds exclusions are found from (OpenMM's _findBondsForExclusions): the topology's, each copied onto the
// virtual sites that share an end's exclusions (repeated for the copies), then each site bonded to the atom it
// shares exclusions with. Per atom, its partners (sorted, unique).
std::vector<std::vector<int>> exclusion_bonds(const GeneratorInput& in) {
  const std::vector<std::vector<int>> children = sites_excluded_with(in);
  std::vector<std::vector<int>> bonded = in.graph.bonded_to;
  std::set<std::pair<int, int>> seen;
  std::vector<std::pair<int, int>> work;
  const auto add = [&](int a, int b) {
    if (a == b || !seen.insert(ordered(a, b)).second) return;
    work.emplace_back(a, b);
    bonded[static_cast<std::size_t>(a)].push_back(b);
    bonded[static_cast<std::size_t>(b)].push_back(a);
  };
  for (const auto& [a, b] : in.topology.bonds) seen.insert(ordered(a, b));
  work.assign(in.topology.bonds.begin(), in.topology.bonds.end());
  for (std::size_t n = 0; n < work.size(); ++n) {
    const auto [a1, a2] = work[n];
    for (int c1 : children[static_cast<std::size_t>(a1)]) {
      add(c1, a2);
      for (int c2 : children[static_cast<std::size_t>(a2)]) add(c1, c2);
    }
    for (int c2 : children[static_cast<std::size_t>(a2)]) add(a1, c2);
  }
  for (std::size_t a = 0; a < children.size(); ++a)
    for (int c : children[a]) add(c, static_cast<int>(a));
  for (auto& list : bonded) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return bonded;
}

}  // namespace

void assign_masses(const GeneratorInput& in, System& sys) {
  const int num_atoms = in.topology.num_atoms();
  sys.mass_amu.resize(static_cast<std::size_t>(num_atoms));
  for (int a = 0; a < num_atoms; ++a)
    sys.mass_amu[static_cast<std::size_t>(a)] = in.forcefield.atom_types[static_cast<std::size_t>(in.type_of(a))].mass_amu;
}

void assign_nonbonded_parameters(const GeneratorInput& in, System& sys) {
  const auto num_atoms = static_cast<std::size_t>(in.topology.num_atoms());
  sys.charge_e.assign(num_atoms, 0.0);
  sys.sigma_nm.assign(num_atoms, 1.0);
  sys.epsilon_kj_per_mol.assign(num_atoms, 0.0);
  if (!in.forcefield.has_nonbonded_force) return;
  const auto type_values = nonbonded_values_by_type(in);
  for (int a = 0; a < in.topology.num_atoms(); ++a) {
    const std::array<double, 3> v = atom_nonbonded_values(in, a, type_values);
    sys.charge_e[static_cast<std::size_t>(a)] = v[0];
    sys.sigma_nm[static_cast<std::size_t>(a)] = v[1];
    sys.epsilon_kj_per_mol[static_cast<std::size_t>(a)] = v[2];
  }
}

void add_exceptions(const GeneratorInput& in, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (!ff.has_nonbonded_force) return;
  const std::vector<std::vector<int>> bonded_to = exclusion_bonds(in);
  std::vector<int> near;
  std::vector<int> within2;
  for (int i = 0; i < in.topology.num_atoms(); ++i) {
    neighbours_within_3(bonded_to, i, near, within2);
    for (int j : near) {
      if (j >= i) break;
      if (std::binary_search(within2.begin(), within2.end(), j)) {
        sys.exceptions.push_back({j, i, 0.0, 1.0, 0.0});
      } else {
        const auto uj = static_cast<std::size_t>(j), ui = static_cast<std::size_t>(i);
        sys.exceptions.push_back({j, i, ff.coulomb14scale * sys.charge_e[uj] * sys.charge_e[ui],
                                  0.5 * (sys.sigma_nm[uj] + sys.sigma_nm[ui]),
                                  ff.lj14scale * std::sqrt(sys.epsilon_kj_per_mol[uj] * sys.epsilon_kj_per_mol[ui])});
      }
    }
  }
}

}  // namespace mdsim::ffgen
