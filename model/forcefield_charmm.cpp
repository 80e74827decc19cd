// CHARMM's force sections of OpenMM's charmm36.xml as OpenMM 7.7's app/forcefield.py builds them: Urey-Bradley terms
// (AmoebaUreyBradleyGenerator: HarmonicBondForce entries of 2k on an angle's outer atoms), CMAP torsions
// (CMAPTorsionGenerator) and the Lennard-Jones force with NBFIX (LennardJonesGenerator: a tabulated
// CustomNonbondedForce plus a LennardJones14 CustomBondForce, here per-particle sigma/epsilon, the 1-4 exceptions'
// LJ and System::lj_types). The harmonic impropers (CustomTorsionGenerator) are in forcefield_torsions.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/errors.hpp"
#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

// Per atom type: the last <LennardJonesForce> <Atom> naming it (by type or class), or null.
std::vector<const FFLennardJonesAtom*> lj_by_type(const GeneratorInput& in) {
  const ForceFieldData& ff = in.forcefield;
  std::vector<const FFLennardJonesAtom*> out(ff.atom_types.size(), nullptr);
  for (const FFLennardJonesAtom& entry : ff.lennard_jones_atoms) {
    const ResolvedSpec s = resolve(entry.atom, ff, in.tables);
    for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
      if (spec_has(s, static_cast<int>(t), in.tables)) out[t] = &entry;
  }
  return out;
}

// NBFIX (sigma, epsilon) per ordered type pair.
std::map<std::pair<int, int>, std::pair<double, double>> nbfix_by_types(const GeneratorInput& in) {
  const ForceFieldData& ff = in.forcefield;
  std::map<std::pair<int, int>, std::pair<double, double>> out;
  for (const FFNbfixPair& p : ff.nbfix_pairs) {
    const ResolvedSpec s1 = resolve(p.atoms[0], ff, in.tables), s2 = resolve(p.atoms[1], ff, in.tables);
    for (int t1 = 0; t1 < static_cast<int>(ff.atom_types.size()); ++t1) {
      if (!spec_has(s1, t1, in.tables)) continue;
      for (int t2 = 0; t2 < static_cast<int>(ff.atom_types.size()); ++t2) {
        if (!spec_has(s2, t2, in.tables)) continue;
        out[{t1, t2}] = {p.sigma_nm, p.epsilon_kj_per_mol};
        out[{t2, t1}] = {p.sigma_nm, p.epsilon_kj_per_mol};
      }
    }
  }
  return out;
}

// System::lj_types as LennardJonesGenerator's acoef/bcoef tables: one type per atom type present (types with equal
// sigma/epsilon and no NBFIX merged), the combining rule except for NBFIX pairs.
LjTypeTable lj_type_table(const GeneratorInput& in, const std::vector<const FFLennardJonesAtom*>& lj,
                          const std::map<std::pair<int, int>, std::pair<double, double>>& nbfix,
                          const std::set<int>& nbfix_types) {
  LjTypeTable table;
  std::map<int, int> merged;                               // atom type -> table type
  std::map<std::pair<double, double>, int> by_parameters;  // (sigma, epsilon) -> table type
  std::vector<int> type_of_entry;                          // table type -> an atom type
  for (int a = 0; a < in.topology.num_atoms(); ++a) {
    const int t = in.type_of(a);
    if (merged.count(t)) continue;
    const std::pair<double, double> p{lj[static_cast<std::size_t>(t)]->sigma_nm,
                                      lj[static_cast<std::size_t>(t)]->epsilon_kj_per_mol};
    auto it = by_parameters.find(p);
    if (!nbfix_types.count(t) && it != by_parameters.end()) {
      merged[t] = it->second;
      continue;
    }
    merged[t] = static_cast<int>(type_of_entry.size());
    if (!nbfix_types.count(t)) by_parameters.emplace(p, merged[t]);
    type_of_entry.push_back(t);
  }
  const int n = static_cast<int>(type_of_entry.size());
  table.num_types = n;
  table.c12_kj_per_mol_nm12.assign(static_cast<std::size_t>(n * n), 0.0);
  table.c6_kj_per_mol_nm6.assign(static_cast<std::size_t>(n * n), 0.0);
  for (int m = 0; m < n; ++m)
    for (int k = 0; k < n; ++k) {
      const int t1 = type_of_entry[static_cast<std::size_t>(m)], t2 = type_of_entry[static_cast<std::size_t>(k)];
      double sigma = 0.0, epsilon = 0.0;
      if (auto f = nbfix.find({t1, t2}); f != nbfix.end()) {
        std::tie(sigma, epsilon) = f->second;
      } else {
        const auto* p1 = lj[static_cast<std::size_t>(t1)];
        const auto* p2 = lj[static_cast<std::size_t>(t2)];
        sigma = 0.5 * (p1->sigma_nm + p2->sigma_nm);
        epsilon = std::sqrt(p1->epsilon_kj_per_mol * p2->epsilon_kj_per_mol);
      }
      const double sigma6 = std::pow(sigma, 6);
      table.c12_kj_per_mol_nm12[static_cast<std::size_t>(m + n * k)] = 4.0 * epsilon * sigma6 * sigma6;
      table.c6_kj_per_mol_nm6[static_cast<std::size_t>(m + n * k)] = 4.0 * epsilon * sigma6;
    }
  for (int a = 0; a < in.topology.num_atoms(); ++a) table.particle_type.push_back(merged.at(in.type_of(a)));
  return table;
}

// The LJ of a 1-4 pair (LennardJonesGenerator.postprocessSystem): NBFIX, else sigma14/epsilon14 where given,
// combined by Lorentz-Berthelot; epsilon scaled by lj14scale.
std::pair<double, double> lj14(const GeneratorInput& in, const std::vector<const FFLennardJonesAtom*>& lj,
                               const std::map<std::pair<int, int>, std::pair<double, double>>& nbfix, int a1, int a2) {
  const int t1 = in.type_of(a1), t2 = in.type_of(a2);
  const double scale = in.forcefield.lennard_jones_lj14scale;
  if (auto f = nbfix.find({t1, t2}); f != nbfix.end()) return {f->second.first, scale * f->second.second};
  const auto* p1 = lj[static_cast<std::size_t>(t1)];
  const auto* p2 = lj[static_cast<std::size_t>(t2)];
  const double s1 = p1->sigma14_nm.value_or(p1->sigma_nm), s2 = p2->sigma14_nm.value_or(p2->sigma_nm);
  const double e1 = p1->epsilon14_kj_per_mol.value_or(p1->epsilon_kj_per_mol);
  const double e2 = p2->epsilon14_kj_per_mol.value_or(p2->epsilon_kj_per_mol);
  return {0.5 * (s1 + s2), scale * std::sqrt(e1 * e2)};
}

// Every atom's type needs a <LennardJonesForce> entry, and its <NonbondedForce> epsilon must be 0 (the two forces'
// LJ would add up; mdsim keeps one per-particle LJ).
void check_lennard_jones_atoms(const GeneratorInput& in, const std::vector<const FFLennardJonesAtom*>& lj,
                               const System& sys) {
  const Topology& top = in.topology;
  for (int a = 0; a < top.num_atoms(); ++a) {
    const auto& atom = top.atoms[static_cast<std::size_t>(a)];
    const std::string& type = in.forcefield.atom_types[static_cast<std::size_t>(in.type_of(a))].name;
    if (lj[static_cast<std::size_t>(in.type_of(a))] == nullptr)
      throw InputError(located(top.source, atom.line, 0,
                               fmt::format("atom '{}' of {} has atom type '{}', for which <LennardJonesForce> defines "
                                           "no sigma and epsilon; add an <Atom type=\"{}\"> entry",
                                           atom.name, residue_label(top, atom.residue), type, type)));
    if (in.forcefield.has_nonbonded_force && sys.epsilon_kj_per_mol[static_cast<std::size_t>(a)] != 0.0)
      throw InputError(located(top.source, atom.line, 0,
                               fmt::format("atom '{}' of {} (type '{}') has Lennard-Jones parameters in both "
                                           "<NonbondedForce> (epsilon {}) and <LennardJonesForce>; mdsim supports "
                                           "<LennardJonesForce> with <NonbondedForce> epsilon 0 (as charmm36.xml)",
                                           atom.name, residue_label(top, atom.residue), type,
                                           sys.epsilon_kj_per_mol[static_cast<std::size_t>(a)])));
  }
}

}  // namespace

void add_urey_bradleys(const GeneratorInput& in, const std::vector<std::array<int, 3>>& angles,
                       const ConstraintFlags& flags, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (ff.urey_bradleys.empty()) return;
  std::vector<std::array<ResolvedSpec, 3>> defs(ff.urey_bradleys.size());
  for (std::size_t d = 0; d < defs.size(); ++d)
    for (std::size_t s = 0; s < 3; ++s) defs[d][s] = resolve(ff.urey_bradleys[d].atoms[s], ff, in.tables);
  for (std::size_t n = 0; n < angles.size(); ++n) {
    if (flags.angle[n] && !in.options.flexible_constraints) continue;
    const auto& angle = angles[n];
    const int t1 = in.type_of(angle[0]), t2 = in.type_of(angle[1]), t3 = in.type_of(angle[2]);
    for (std::size_t d = 0; d < defs.size(); ++d) {
      const auto& s = defs[d];
      if (!spec_has(s[1], t2, in.tables)) continue;
      if ((spec_has(s[0], t1, in.tables) && spec_has(s[2], t3, in.tables)) ||
          (spec_has(s[0], t3, in.tables) && spec_has(s[2], t1, in.tables))) {
        const FFUreyBradleyDef& def = ff.urey_bradleys[d];
        sys.urey_bradleys.push_back({angle[0], angle[2], def.r13_nm, 2.0 * def.k_kj_per_mol_nm2});
        break;
      }
    }
  }
}

void add_cmap_torsions(const GeneratorInput& in, const std::vector<std::array<int, 4>>& propers, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (!ff.has_cmap_torsion_force) return;
  for (const std::vector<double>& values : ff.cmap_maps) {
    CmapMap map;
    map.size = static_cast<int>(std::llround(std::sqrt(static_cast<double>(values.size()))));
    map.energy_kj_per_mol = values;
    sys.cmap_maps.push_back(std::move(map));
  }
  std::set<std::array<int, 5>> chains;  // every chain of five bonded atoms extending a proper
  for (const auto& t : propers) {
    for (int a : in.graph.bonded_to[static_cast<std::size_t>(t[0])])
      if (a != t[1]) chains.insert({a, t[0], t[1], t[2], t[3]});
    for (int a : in.graph.bonded_to[static_cast<std::size_t>(t[3])])
      if (a != t[2]) chains.insert({t[0], t[1], t[2], t[3], a});
  }
  std::vector<std::array<ResolvedSpec, 5>> defs(ff.cmap_torsions.size());
  std::vector<char> wildcard(defs.size(), 0);
  for (std::size_t d = 0; d < defs.size(); ++d)
    for (std::size_t s = 0; s < 5; ++s) {
      defs[d][s] = resolve(ff.cmap_torsions[d].atoms[s], ff, in.tables);
      if (defs[d][s].kind == FFSpecKind::Wildcard) wildcard[d] = 1;
    }
  for (const auto& c : chains) {
    std::array<int, 5> ty{};
    for (std::size_t q = 0; q < 5; ++q) ty[q] = in.type_of(c[q]);
    int match = -1;
    for (std::size_t d = 0; d < defs.size(); ++d) {
      bool forward = true, backward = true;
      for (std::size_t q = 0; q < 5; ++q) {
        forward = forward && spec_has(defs[d][q], ty[q], in.tables);
        backward = backward && spec_has(defs[d][q], ty[4 - q], in.tables);
      }
      if (!forward && !backward) continue;
      if (match < 0 || !wildcard[d]) match = static_cast<int>(d);
      if (!wildcard[d]) break;
    }
    if (match >= 0)
      sys.cmap_torsions.push_back(
          {{c[0], c[1], c[2], c[3], c[1], c[2], c[3], c[4]}, ff.cmap_torsions[static_cast<std::size_t>(match)].map});
  }
}

void apply_lennard_jones(const GeneratorInput& in, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (!ff.has_lennard_jones_force) return;
  if (!sys.virtual_sites.empty())
    throw InputError(located(in.topology.source, 0, 0,
                             "<LennardJonesForce> with virtual sites is not supported (their 1-4 pairs); use "
                             "<NonbondedForce> Lennard-Jones parameters for a model with extra particles"));
  const std::vector<const FFLennardJonesAtom*> lj = lj_by_type(in);
  check_lennard_jones_atoms(in, lj, sys);
  const auto nbfix = nbfix_by_types(in);
  std::set<int> nbfix_types, present;
  for (const auto& [types, value] : nbfix) nbfix_types.insert(types.first);
  for (int a = 0; a < in.topology.num_atoms(); ++a) {
    const FFLennardJonesAtom* p = lj[static_cast<std::size_t>(in.type_of(a))];
    sys.sigma_nm[static_cast<std::size_t>(a)] = p->sigma_nm;
    sys.epsilon_kj_per_mol[static_cast<std::size_t>(a)] = p->epsilon_kj_per_mol;
    present.insert(in.type_of(a));
  }
  // The table only where an NBFIX pair has both its types in the system (else the combining rule gives every pair).
  const bool nbfix_present = std::any_of(nbfix.begin(), nbfix.end(), [&](const auto& entry) {
    return present.count(entry.first.first) > 0 && present.count(entry.first.second) > 0;
  });
  // The 1-4 pairs: the exceptions that are neither 1-2 nor 1-3 (those carry no interaction at all).
  const std::vector<std::vector<int>>& bonded = in.graph.bonded_to;
  const auto within2 = [&](int i, int j) {
    for (int k : bonded[static_cast<std::size_t>(i)])
      if (k == j || std::binary_search(bonded[static_cast<std::size_t>(k)].begin(),
                                       bonded[static_cast<std::size_t>(k)].end(), j))
        return true;
    return false;
  };
  for (NonbondedException& e : sys.exceptions) {
    if (within2(e.i, e.j)) continue;
    std::tie(e.sigma_nm, e.epsilon_kj_per_mol) = lj14(in, lj, nbfix, e.i, e.j);
  }
  if (nbfix_present) sys.lj_types = lj_type_table(in, lj, nbfix, nbfix_types);
}

}  // namespace mdsim::ffgen
