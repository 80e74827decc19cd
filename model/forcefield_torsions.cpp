// PeriodicTorsionForce generator: propers and impropers with OpenMM 7.7's priority rules (propers: first specific
// match, else first wildcard match; impropers: last specific match, else first wildcard match) and its improper
// atom-ordering rules (default, amber, charmm, smirnoff), including OpenMM's per-signature cache of improper atom
// positions, which decides the order for later impropers with the same types.
#include <algorithm>

#include "model/forcefield_generators.hpp"

namespace mdsim::ffgen {
namespace {

struct TorsionSpecs {
  std::array<ResolvedSpec, 4> s;
  bool wildcard = false;  // some atom is the wildcard
};

template <class Def>
std::vector<TorsionSpecs> resolve_torsions(const std::vector<Def>& in, const ForceFieldData& ff,
                                           const TypeTables& tables) {
  std::vector<TorsionSpecs> out(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) {
    for (std::size_t s = 0; s < 4; ++s) {
      out[d].s[s] = resolve(in[d].atoms[s], ff, tables);
      if (out[d].s[s].kind == FFSpecKind::Wildcard) out[d].wildcard = true;
    }
  }
  return out;
}

// One term per nonzero force constant of the definition.
void add_torsion_terms(int a1, int a2, int a3, int a4, const FFTorsionDef& def, System& sys) {
  for (std::size_t n = 0; n < def.phase_rad.size(); ++n)
    if (def.k_kj_per_mol[n] != 0.0)
      sys.torsions.push_back({a1, a2, a3, a4, def.periodicity[n], def.phase_rad[n], def.k_kj_per_mol[n]});
}

// The proper definition for types sig (either direction), or -1. `candidates`: those that could match sig[1].
int find_proper_def(const std::vector<TorsionSpecs>& defs, const std::vector<int>& candidates,
                    const std::array<int, 4>& sig, const TypeTables& tables) {
  const auto [t1, t2, t3, t4] = sig;
  int found = -1;
  for (int d : candidates) {
    const auto& s = defs[static_cast<std::size_t>(d)].s;
    const bool forward = spec_has(s[0], t1, tables) && spec_has(s[1], t2, tables) && spec_has(s[2], t3, tables) &&
                         spec_has(s[3], t4, tables);
    const bool backward = spec_has(s[0], t4, tables) && spec_has(s[1], t3, tables) && spec_has(s[2], t2, tables) &&
                          spec_has(s[3], t1, tables);
    if (!forward && !backward) continue;
    const bool wildcard = defs[static_cast<std::size_t>(d)].wildcard;
    if (found < 0 || !wildcard) found = d;
    if (!wildcard) break;
  }
  return found;
}

// What improper matching decided for a type signature: the definition and, for each of its four atoms, the
// position in the improper (centre, then neighbours in index order) it takes.
struct ImproperChoice {
  std::array<int, 4> positions;
  int def;
};

// The improper's atoms in the order of a matching definition's ordering rule. tor = (centre, n1, n2, n3); p2..p4
// say which neighbours the definition's atoms 2..4 matched; ty2..ty4 their types.
class ImproperOrderer {
 public:
  ImproperOrderer(const GeneratorInput& in, const std::array<int, 4>& tor) : in_(in), tor_(tor) {}

  std::array<int, 4> order(ImproperOrdering ordering, bool wildcard, const std::array<int, 3>& perm,
                           const std::array<int, 4>& sig) const {
    int a2 = tor_[static_cast<std::size_t>(perm[0])], a3 = tor_[static_cast<std::size_t>(perm[1])],
        a4 = tor_[static_cast<std::size_t>(perm[2])];
    switch (ordering) {
      case ImproperOrdering::Default: return element_rule(a2, a3, a4);
      case ImproperOrdering::Charmm: return wildcard ? element_rule(a2, a3, a4) : std::array<int, 4>{tor_[0], a2, a3, a4};
      case ImproperOrdering::Amber: {
        int u2 = sig[static_cast<std::size_t>(perm[0])], u3 = sig[static_cast<std::size_t>(perm[1])],
            u4 = sig[static_cast<std::size_t>(perm[2])];  // types follow their atoms through the swaps
        if (!wildcard) {
          if (u2 == u4 && later(a2, a4)) { std::swap(a2, a4); std::swap(u2, u4); }
          if (u3 == u4 && later(a3, a4)) { std::swap(a3, a4); std::swap(u3, u4); }
          if (u2 == u3 && later(a2, a3)) std::swap(a2, a3);
        } else {
          if (element(a2) == element(a4) && later(a2, a4)) std::swap(a2, a4);
          if (element(a3) == element(a4) && later(a3, a4)) std::swap(a3, a4);
          if (later(a2, a3)) std::swap(a2, a3);
        }
        return {a2, a3, tor_[0], a4};
      }
      case ImproperOrdering::Smirnoff: break;
    }
    return {tor_[0], a2, a3, a4};
  }

 private:
  const GeneratorInput& in_;
  const std::array<int, 4>& tor_;

  const std::string& element(int a) const { return in_.graph.element[static_cast<std::size_t>(a)]; }

  // x after y by (residue index, template atom index)
  bool later(int x, int y) const {
    const int rx = in_.topology.atoms[static_cast<std::size_t>(x)].residue;
    const int ry = in_.topology.atoms[static_cast<std::size_t>(y)].residue;
    const auto& tindex = in_.match.atom_template_index;
    return rx > ry || (rx == ry && tindex[static_cast<std::size_t>(x)] > tindex[static_cast<std::size_t>(y)]);
  }

  // OpenMM's default: the first two neighbours ordered by element (carbon first, else the heavier; same element by
  // index), then the centre, then the third neighbour.
  std::array<int, 4> element_rule(int a2, int a3, int a4) const {
    int x1 = a2, x2 = a3;
    const std::string& e1 = element(x1);
    const std::string& e2 = element(x2);
    if (e1 == e2 && x1 > x2) std::swap(x1, x2);
    else if (e1 != "C" && (e2 == "C" || element_mass(e1) < element_mass(e2))) std::swap(x1, x2);
    return {x1, x2, tor_[0], a4};
  }
};

// _matchImproper for an improper not seen before: the last matching definition without wildcards, else the first
// with wildcards, with the atom order its ordering rule gives.
ImproperChoice choose_improper(const GeneratorInput& in, const std::vector<TorsionSpecs>& defs,
                               const std::vector<ImproperOrdering>& orderings, const std::array<int, 4>& tor,
                               const std::array<int, 4>& sig) {
  static constexpr std::array<std::array<int, 3>, 6> kPermutations{
      {{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}}};
  const ImproperOrderer orderer(in, tor);
  std::array<int, 4> atoms{};
  int def = -1;
  for (std::size_t d = 0; d < defs.size(); ++d) {
    const auto& s = defs[d].s;
    const bool wildcard = defs[d].wildcard;
    if (def >= 0 && wildcard) continue;
    if (!spec_has(s[0], sig[0], in.tables)) continue;
    for (const auto& perm : kPermutations) {
      if (!spec_has(s[1], sig[static_cast<std::size_t>(perm[0])], in.tables) ||
          !spec_has(s[2], sig[static_cast<std::size_t>(perm[1])], in.tables) ||
          !spec_has(s[3], sig[static_cast<std::size_t>(perm[2])], in.tables))
        continue;
      atoms = orderer.order(orderings[d], wildcard, perm, sig);
      def = static_cast<int>(d);
      break;
    }
  }
  ImproperChoice choice{{0, 0, 0, 0}, def};
  if (def >= 0)
    for (std::size_t q = 0; q < 4; ++q)
      choice.positions[q] = static_cast<int>(std::find(tor.begin(), tor.end(), atoms[q]) - tor.begin());
  return choice;
}

// _matchImproper over every improper with the definitions `defs` (orderings per definition): per improper, the
// chosen definition's index and the atoms in its order; cached per type signature when `cache_by_types` (as
// OpenMM's PeriodicTorsionGenerator does; its CustomTorsionGenerator matches every improper afresh).
template <class F>
void for_each_matched_improper(const GeneratorInput& in, const std::vector<TorsionSpecs>& defs,
                               const std::vector<ImproperOrdering>& orderings,
                               const std::vector<std::array<int, 4>>& impropers, bool cache_by_types, F&& f) {
  std::map<std::array<int, 4>, ImproperChoice> cache;
  for (const auto& tor : impropers) {
    const std::array<int, 4> sig{in.type_of(tor[0]), in.type_of(tor[1]), in.type_of(tor[2]), in.type_of(tor[3])};
    if (!cache_by_types) cache.clear();
    auto cached = cache.find(sig);
    if (cached == cache.end()) cached = cache.emplace(sig, choose_improper(in, defs, orderings, tor, sig)).first;
    const ImproperChoice& choice = cached->second;
    if (choice.def < 0) continue;
    std::array<int, 4> atoms{};
    for (std::size_t q = 0; q < 4; ++q) atoms[q] = tor[static_cast<std::size_t>(choice.positions[q])];
    f(atoms, static_cast<std::size_t>(choice.def));
  }
}

void add_improper_terms(const std::array<int, 4>& atoms, const FFTorsionDef& d, System& sys) {
  if (d.ordering != ImproperOrdering::Smirnoff) {
    add_torsion_terms(atoms[0], atoms[1], atoms[2], atoms[3], d, sys);
    return;
  }
  // SMIRNOFF: each term three times, the three neighbours rotated.
  for (std::size_t n = 0; n < d.phase_rad.size(); ++n) {
    if (d.k_kj_per_mol[n] == 0.0) continue;
    const auto [a1, a2, a3, a4] = atoms;
    for (const auto& q : {std::array<int, 4>{a1, a2, a3, a4}, std::array<int, 4>{a1, a3, a4, a2},
                          std::array<int, 4>{a1, a4, a2, a3}})
      sys.torsions.push_back({q[0], q[1], q[2], q[3], d.periodicity[n], d.phase_rad[n], d.k_kj_per_mol[n]});
  }
}

}  // namespace

void add_propers(const GeneratorInput& in, const std::vector<std::array<int, 4>>& propers, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (!ff.has_periodic_torsion_force) return;
  const std::vector<TorsionSpecs> defs = resolve_torsions(ff.propers, ff, in.tables);
  std::vector<std::vector<int>> for_type(ff.atom_types.size());
  for (std::size_t d = 0; d < defs.size(); ++d)
    for (std::size_t t = 0; t < ff.atom_types.size(); ++t)
      if (spec_has(defs[d].s[1], static_cast<int>(t), in.tables) || spec_has(defs[d].s[2], static_cast<int>(t), in.tables))
        for_type[t].push_back(static_cast<int>(d));
  std::map<std::array<int, 4>, int> cache;  // keyed by the smaller of the signature and its reverse
  for (const auto& tor : propers) {
    const std::array<int, 4> sig{in.type_of(tor[0]), in.type_of(tor[1]), in.type_of(tor[2]), in.type_of(tor[3])};
    const std::array<int, 4> key = std::min(sig, std::array<int, 4>{sig[3], sig[2], sig[1], sig[0]});
    auto cached = cache.find(key);
    const int found = cached != cache.end()
                          ? cached->second
                          : find_proper_def(defs, for_type[static_cast<std::size_t>(sig[1])], sig, in.tables);
    if (cached == cache.end()) cache.emplace(key, found);
    if (found >= 0) add_torsion_terms(tor[0], tor[1], tor[2], tor[3], ff.propers[static_cast<std::size_t>(found)], sys);
  }
}

void add_impropers(const GeneratorInput& in, const std::vector<std::array<int, 4>>& impropers, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (!ff.has_periodic_torsion_force) return;
  const std::vector<TorsionSpecs> defs = resolve_torsions(ff.impropers, ff, in.tables);
  std::vector<ImproperOrdering> orderings;
  for (const FFTorsionDef& d : ff.impropers) orderings.push_back(d.ordering);
  for_each_matched_improper(in, defs, orderings, impropers, true, [&](const std::array<int, 4>& atoms, std::size_t d) {
    add_improper_terms(atoms, ff.impropers[d], sys);
  });
}

void add_harmonic_impropers(const GeneratorInput& in, const std::vector<std::array<int, 4>>& impropers, System& sys) {
  const ForceFieldData& ff = in.forcefield;
  if (ff.harmonic_impropers.empty()) return;
  const std::vector<TorsionSpecs> defs = resolve_torsions(ff.harmonic_impropers, ff, in.tables);
  std::vector<ImproperOrdering> orderings;
  for (const FFHarmonicImproperDef& d : ff.harmonic_impropers) orderings.push_back(d.ordering);
  for_each_matched_improper(in, defs, orderings, impropers, false,
                            [&](const std::array<int, 4>& atoms, std::size_t d) {
    const FFHarmonicImproperDef& def = ff.harmonic_impropers[d];
    sys.impropers.push_back({atoms[0], atoms[1], atoms[2], atoms[3], def.theta0_rad, def.k_kj_per_mol_rad2});
  });
}

}  // namespace mdsim::ffgen
