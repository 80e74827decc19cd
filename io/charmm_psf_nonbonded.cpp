// The nonbonded part of io/charmm_psf's System: Lennard-Jones (per particle, or by type pair with NBFIX), the
// exceptions by nbxmod from the bond graph, and CHARMM lone pairs as virtual sites, as OpenMM 7.7's
// CharmmPsfFile.createSystem builds them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>

#include "common/errors.hpp"
#include "io/charmm_psf_build.hpp"
#include "model/bond_graph.hpp"

namespace mdsim::charmm {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

const double kSigmaPerRmin = std::pow(2.0, -1.0 / 6.0);  // sigma = Rmin 2^(-1/6)

// True when some NBFIX pair joins two of the types present (OpenMM then uses its CustomNonbondedForce).
bool uses_nbfix(const Build& b, int* pairs) {
  std::set<std::string> present;
  for (const CharmmAtomType* t : b.type) present.insert(t->name);
  *pairs = 0;
  for (const auto& [key, fix] : b.par.nbfix)
    if (present.count(key[0]) && present.count(key[1])) ++*pairs;
  return *pairs > 0;
}

// One LJ type per atom type present (types with the same Rmin/2 and epsilon and no NBFIX share one, as OpenMM
// condenses them), with c12 = eps Rmin^12 and c6 = 2 eps Rmin^6 per pair (the NBFIX values where given).
LjTypeTable nbfix_table(const Build& b) {
  std::set<std::string> fixed;
  for (const auto& [key, fix] : b.par.nbfix) fixed.insert(key[0]), fixed.insert(key[1]);
  LjTypeTable table;
  std::map<std::string, int> index;  // by type name, or "=rmin,eps" for a type without NBFIX
  std::vector<const CharmmAtomType*> types;
  for (const CharmmAtomType* t : b.type) {
    const std::string key =
        fixed.count(t->name) ? t->name : fmt::format("={:a},{:a}", t->rmin_half_a, t->epsilon_kcal);
    auto [it, added] = index.emplace(key, static_cast<int>(types.size()));
    if (added) types.push_back(t);
    table.particle_type.push_back(it->second);
  }
  const auto n = types.size();
  table.num_types = static_cast<int>(n);
  table.c12_kj_per_mol_nm12.resize(n * n);
  table.c6_kj_per_mol_nm6.resize(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double rmin_a = types[i]->rmin_half_a + types[j]->rmin_half_a;
      double eps_kcal = std::sqrt(types[i]->epsilon_kcal * types[j]->epsilon_kcal);
      const auto fix = b.par.nbfix.find(CharmmParameters::bond_key(types[i]->name, types[j]->name));
      if (fix != b.par.nbfix.end()) rmin_a = fix->second.rmin_a, eps_kcal = fix->second.emin_kcal;
      const double rmin6 = std::pow(rmin_a * kNmPerA, 6), eps = eps_kcal * kKjPerKcal;
      table.c12_kj_per_mol_nm12[i * n + j] = eps * rmin6 * rmin6;
      table.c6_kj_per_mol_nm6[i * n + j] = 2.0 * eps * rmin6;
    }
  return table;
}

void add_lennard_jones(Build& b) {
  System& sys = b.system;
  int pairs = 0;
  if (!uses_nbfix(b, &pairs)) {
    for (const CharmmAtomType* t : b.type) {
      sys.sigma_nm.push_back(2.0 * t->rmin_half_a * kNmPerA * kSigmaPerRmin);
      sys.epsilon_kj_per_mol.push_back(t->epsilon_kcal * kKjPerKcal);
    }
    return;
  }
  sys.sigma_nm.assign(b.type.size(), 1.0);
  sys.epsilon_kj_per_mol.assign(b.type.size(), 0.0);
  sys.lj_types = nbfix_table(b);
  b.notes.push_back(fmt::format("{} NBFIX pair{} join{} atom types present: pair-specific LJ by type for the {} types "
                                "(as OpenMM's CustomNonbondedForce)",
                                pairs, pairs == 1 ? "" : "s", pairs == 1 ? "s" : "", sys.lj_types->num_types));
}

// The 1-4 exception of i and l: charges times e14fac; the pair's NBFIX 1-4 values, else the types' 1-4 values.
NonbondedException one_four(const Build& b, int i, int l) {
  const CharmmAtomType &ti = *b.type[at(i)], &tl = *b.type[at(l)];
  const double qq = b.system.charge_e[at(i)] * b.system.charge_e[at(l)] * b.par.e14fac;
  const auto fix = b.par.nbfix.find(CharmmParameters::bond_key(ti.name, tl.name));
  if (fix != b.par.nbfix.end())
    return {i, l, qq, fix->second.rmin14_a * kNmPerA * kSigmaPerRmin, fix->second.emin14_kcal * kKjPerKcal};
  return {i, l, qq, (ti.rmin14_half_a + tl.rmin14_half_a) * kNmPerA * kSigmaPerRmin,
          std::sqrt(ti.epsilon14_kcal * tl.epsilon14_kcal) * kKjPerKcal};
}

// The lone pair as OpenMM places it: a LocalCoordinates site on hosts (a1, a3, a2) for the relative (distance > 0)
// and bisector (distance < 0) types, on (a1, a2, a neighbour of a2) for the colinear type.
VirtualSite lone_pair_site(const Build& b, const PsfLonePair& lp) {
  VirtualSite s;
  s.particle = lp.site;
  s.type = VirtualSiteType::LocalCoordinates;
  s.num_parents = 3;
  s.origin_weights = {1.0, 0.0, 0.0};
  s.y_weights = {0.0, -1.0, 1.0};
  if (lp.hosts.size() == 3) {
    s.parents = {lp.hosts[0], lp.hosts[2], lp.hosts[1]};
    const bool bisector = lp.distance_a < 0;
    const double r = std::fabs(lp.distance_a) * kNmPerA;
    s.x_weights = bisector ? std::array<double, 3>{-1.0, 0.5, 0.5} : std::array<double, 3>{-1.0, 0.0, 1.0};
    const double theta = lp.angle_deg * std::numbers::pi / 180.0, phi = (180.0 - lp.dihedral_deg) * std::numbers::pi / 180.0;
    double p[3] = {r * std::cos(theta), r * std::sin(theta) * std::cos(phi), r * std::sin(theta) * std::sin(phi)};
    for (double& x : p)
      if (std::fabs(x) <= 1e-10) x = 0.0;
    s.local_position_nm = {p[0], p[1], p[2]};
    return s;
  }
  int third = -1;  // the last bond partner of the second host other than the first (as OpenMM picks it)
  for (const auto& [i, j] : b.bonds) {
    if (i == lp.hosts[1] && j != lp.hosts[0]) third = j;
    if (j == lp.hosts[1] && i != lp.hosts[0]) third = i;
  }
  if (third < 0)
    throw InputError(located(b.psf.source, lp.line, 0,
                             fmt::format("colinear lone pair {}: its second host, {}, has no other bonded atom to "
                                         "orient it",
                                         atom_text(b.psf, lp.site), atom_text(b.psf, lp.hosts[1]))));
  s.parents = {lp.hosts[0], lp.hosts[1], third};
  s.x_weights = {1.0, -1.0, 0.0};
  s.local_position_nm = {lp.distance_a * kNmPerA, 0.0, 0.0};
  return s;
}

// Lone pairs as virtual sites; per atom, the lone pairs it hosts (they share its exclusions).
std::vector<std::vector<int>> add_lone_pairs(Build& b) {
  std::vector<std::vector<int>> hosted(b.type.size());
  std::vector<char> is_site(b.type.size(), 0);
  for (const PsfLonePair& lp : b.psf.lone_pairs) is_site[at(lp.site)] += 1;
  for (const PsfLonePair& lp : b.psf.lone_pairs) {
    std::set<int> distinct(lp.hosts.begin(), lp.hosts.end());
    distinct.insert(lp.site);
    const bool host_is_site =
        std::any_of(lp.hosts.begin(), lp.hosts.end(), [&](int h) { return is_site[at(h)] != 0; });
    if (distinct.size() != lp.hosts.size() + 1 || is_site[at(lp.site)] > 1 || host_is_site)
      throw InputError(located(b.psf.source, lp.line, 0,
                               fmt::format("lone pair {}: its hosts must be {} distinct atoms that are not lone pairs "
                                           "themselves, and it must be listed once",
                                           atom_text(b.psf, lp.site), lp.hosts.size())));
    if (b.system.mass_amu[at(lp.site)] != 0.0)
      throw InputError(located(b.psf.source, lp.line, 0,
                               fmt::format("lone pair {} has mass {} amu: a lone pair must have mass 0",
                                           atom_text(b.psf, lp.site), b.system.mass_amu[at(lp.site)])));
    b.system.virtual_sites.push_back(lone_pair_site(b, lp));
    hosted[at(lp.hosts[0])].push_back(lp.site);
  }
  return hosted;
}

// The exceptions by nbxmod: 1-4 pairs (5: with 1-4 values; 4: excluded; 3 or less: normal), 1-2 (nbxmod > 1) and
// 1-3 (nbxmod > 2) excluded together with the lone pairs their atoms host; each lone pair excluded with its host.
void add_exceptions(Build& b, const std::vector<std::vector<int>>& hosted) {
  const int nbxmod = std::abs(b.par.nbxmod);
  const int n = static_cast<int>(b.type.size());
  std::vector<std::vector<int>> bonded_to(at(n));
  for (const auto& [i, j] : b.bonds) bonded_to[at(i)].push_back(j), bonded_to[at(j)].push_back(i);
  std::set<std::pair<int, int>> done;
  const auto exclude = [&](int i, int j) {
    if (i != j && done.emplace(std::min(i, j), std::max(i, j)).second) b.system.exceptions.push_back({i, j, 0.0, 0.1, 0.0});
  };
  std::vector<int> near, within2;
  for (int i = 0; i < n; ++i) {
    neighbours_within_3(bonded_to, i, near, within2);
    for (int j : near) {
      if (j >= i) continue;
      const bool close = std::binary_search(within2.begin(), within2.end(), j);
      const bool is12 = std::find(bonded_to[at(i)].begin(), bonded_to[at(i)].end(), j) != bonded_to[at(i)].end();
      if (!close) {  // a 1-4 pair
        if (nbxmod == 5 && done.emplace(j, i).second) b.system.exceptions.push_back(one_four(b, j, i));
        if (nbxmod == 4) exclude(j, i);
        continue;
      }
      if (is12 ? nbxmod <= 1 : nbxmod <= 2) continue;
      for (int a : hosted[at(i)]) exclude(a, j);
      for (int a : hosted[at(j)]) exclude(i, a);
      for (int a : hosted[at(i)])
        for (int c : hosted[at(j)]) exclude(a, c);
      exclude(j, i);
    }
  }
  for (int host = 0; host < n; ++host) {
    const std::vector<int>& sites = hosted[at(host)];
    for (std::size_t s = 0; s < sites.size(); ++s) {
      exclude(host, sites[s]);
      for (std::size_t t = 0; t < s; ++t) exclude(sites[t], sites[s]);
    }
  }
}

}  // namespace

void add_nonbonded(Build& b) {
  add_lennard_jones(b);
  const std::vector<std::vector<int>> hosted = add_lone_pairs(b);
  add_exceptions(b, hosted);
}

}  // namespace mdsim::charmm
