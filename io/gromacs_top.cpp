// GROMACS topology to System and Topology (see the header). Each molecule type used in [molecules] is made once into a
// fragment (io/gromacs_top_build.hpp) and appended once per copy with its atom indices shifted.
#include "io/gromacs_top.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <set>

#include "common/errors.hpp"
#include "io/gromacs_preprocessor.hpp"
#include "io/gromacs_top_build.hpp"
#include "model/elements.hpp"

namespace mdsim {

namespace {

// Lennard-Jones of normal pairs: the combination rule over the atom types, [nonbond_params] where given.
struct LjModel {
  int comb_rule = 2;
  bool table = false;                       // true: System::lj_types; false: per-particle sigma/epsilon (rule 2)
  std::vector<const GmxAtomType*> types;    // the atom types the molecules use, in order of first use
  std::map<std::string, int> index;         // by name
  std::map<std::pair<int, int>, std::array<double, 2>> nbfix;  // c6, c12 of [nonbond_params] pairs of used types

  // A V, W pair as written under this combination rule, as c6 (kJ/mol nm^6), c12 (kJ/mol nm^12).
  std::array<double, 2> c6_c12(double v, double w) const {
    if (comb_rule == 1) return {v, w};
    return {4.0 * w * std::pow(v, 6), 4.0 * w * std::pow(v, 12)};
  }
  std::array<double, 2> normal(int a, int b) const {
    const auto it = nbfix.find(std::minmax(a, b));
    if (it != nbfix.end()) return it->second;
    const GmxAtomType &ta = *types[static_cast<std::size_t>(a)], &tb = *types[static_cast<std::size_t>(b)];
    if (comb_rule == 1) return {std::sqrt(ta.v * tb.v), std::sqrt(ta.w * tb.w)};
    const double sigma = comb_rule == 2 ? 0.5 * (ta.v + tb.v) : std::sqrt(ta.v * tb.v);
    return c6_c12(sigma, std::sqrt(ta.w * tb.w));
  }
};

const GmxAtomType& atom_type(const GmxTopology& top, const GmxRecord& r) {
  const auto it = top.atomtypes.find(r.fields[1]);
  if (it == top.atomtypes.end())
    gmx_fail(r.where, fmt::format("[ atoms ]: unknown atom type \"{}\"; define it in [ atomtypes ] (or #include the "
                                  "force field that does) before the molecule",
                                  r.fields[1]));
  return it->second;
}

LjModel make_lj_model(const GmxTopology& top) {
  LjModel lj;
  lj.comb_rule = top.comb_rule;
  for (const GmxMoleculeCount& mc : top.molecules) {
    if (mc.count <= 0) continue;
    const GmxMoleculeType& m = top.moleculetypes[static_cast<std::size_t>(top.moleculetype_index.at(mc.name))];
    for (const GmxRecord& r : m.section("atoms")) {
      if (r.fields.size() < 5) continue;  // reported when the molecule is built
      const GmxAtomType& t = atom_type(top, r);
      if (lj.index.emplace(t.name, static_cast<int>(lj.types.size())).second) lj.types.push_back(&t);
    }
  }
  for (const auto& [key, r] : top.nonbond_params) {
    const auto a = lj.index.find(r.fields[0]), b = lj.index.find(r.fields[1]);
    if (a == lj.index.end() || b == lj.index.end()) continue;
    lj.nbfix[std::minmax(a->second, b->second)] =
        lj.c6_c12(gmx_number(r, 3, "V (c6, or sigma in nm)"), gmx_number(r, 4, "W (c12, or epsilon in kJ/mol)"));
  }
  lj.table = top.comb_rule != 2 || !lj.nbfix.empty();
  return lj;
}

GmxMoleculeAtoms read_atoms(const GmxTopology& top, const GmxMoleculeType& m) {
  GmxMoleculeAtoms atoms;
  for (const GmxRecord& r : m.section("atoms")) {
    if (r.fields.size() < 5)
      gmx_fail(r.where, "[ atoms ] record with too few fields; expected nr type resnr residue atom [cgnr charge mass]");
    if (gmx_integer(r, 0, "the atom number") != static_cast<int>(atoms.type.size()) + 1)
      gmx_fail(r.where, fmt::format("[ atoms ]: atom number {} where {} was expected (atoms are numbered 1, 2, ... in "
                                    "order)", r.fields[0], atoms.type.size() + 1));
    const GmxAtomType& t = atom_type(top, r);
    atoms.type.push_back(&t);
    atoms.charge_e.push_back(r.fields.size() > 6 ? gmx_number(r, 6, "the charge (e)") : t.charge_e);
    atoms.mass_amu.push_back(r.fields.size() > 7 ? gmx_number(r, 7, "the mass (amu)") : t.mass_amu);
  }
  return atoms;
}

// Atom pairs within nrexcl bonds of each other (i < j).
std::set<std::pair<int, int>> bonded_exclusions(const GmxFragment& f, int n, int nrexcl) {
  std::vector<std::vector<int>> adjacent(static_cast<std::size_t>(n));
  for (const auto& [i, j] : f.graph_bonds) {
    adjacent[static_cast<std::size_t>(i)].push_back(j);
    adjacent[static_cast<std::size_t>(j)].push_back(i);
  }
  std::set<std::pair<int, int>> out;
  std::vector<int> depth(static_cast<std::size_t>(n), -1);
  for (int start = 0; start < n; ++start) {
    std::vector<int> seen{start};
    depth[static_cast<std::size_t>(start)] = 0;
    std::queue<int> q;
    q.push(start);
    while (!q.empty()) {
      const int a = q.front();
      q.pop();
      if (a > start) out.emplace(start, a);
      if (depth[static_cast<std::size_t>(a)] == nrexcl) continue;
      for (int b : adjacent[static_cast<std::size_t>(a)])
        if (depth[static_cast<std::size_t>(b)] < 0) {
          depth[static_cast<std::size_t>(b)] = depth[static_cast<std::size_t>(a)] + 1;
          seen.push_back(b);
          q.push(b);
        }
    }
    for (int a : seen) depth[static_cast<std::size_t>(a)] = -1;
  }
  return out;
}

struct PairSum {  // what replaces the normal interaction of one atom pair
  bool excluded = false;
  double qq = 0.0, c6 = 0.0, c12 = 0.0;
  const GromacsLine* where = nullptr;
};

// The LJ of one [pairs] record as c6, c12: from the line, [pairtypes], or generated (gen-pairs).
std::array<double, 2> pair_lj(const GmxTopology& top, const LjModel& lj, const GmxRecord& r, int ti, int tj) {
  if (r.fields.size() >= 5) return lj.c6_c12(gmx_number(r, 3, "V"), gmx_number(r, 4, "W"));
  const std::string &a = lj.types[static_cast<std::size_t>(ti)]->name, &b = lj.types[static_cast<std::size_t>(tj)]->name;
  for (const std::string& key : {a + " " + b + " 1", b + " " + a + " 1"}) {
    const auto it = top.pairtypes.find(key);
    if (it != top.pairtypes.end()) return lj.c6_c12(gmx_number(it->second, 3, "V"), gmx_number(it->second, 4, "W"));
  }
  if (!top.gen_pairs)
    gmx_fail(r.where, fmt::format("no parameters for the pair {}-{}: [ pairtypes ] has no line for the types {} {} "
                                  "and gen-pairs is no; add one, or give V W on this line",
                                  r.fields[0], r.fields[1], a, b));
  const std::array<double, 2> n = lj.normal(ti, tj);
  return {top.fudge_lj * n[0], top.fudge_lj * n[1]};
}

void add_exceptions(const GmxTopology& top, const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms, const LjModel& lj,
                    const std::vector<int>& type, GmxFragment& f) {
  const int n = static_cast<int>(atoms.type.size());
  std::map<std::pair<int, int>, PairSum> sums;
  for (const auto& p : bonded_exclusions(f, n, m.nrexcl)) sums[p].excluded = true;
  for (const GmxRecord& r : m.section("exclusions")) {
    const int i = gmx_atom(r, 0, n, "exclusions");
    for (std::size_t k = 1; k < r.fields.size(); ++k) {
      const int j = gmx_atom(r, k, n, "exclusions");
      if (j != i) sums[std::minmax(i, j)].excluded = true;
    }
  }
  for (const GmxRecord& r : m.section("pairs")) {
    const int i = gmx_atom(r, 0, n, "pairs"), j = gmx_atom(r, 1, n, "pairs");
    if (r.fields.size() < 3 || r.fields[2] != "1")
      gmx_fail(r.where, fmt::format("[ pairs ] function type {} is not supported (mdsim reads 1)",
                                    r.fields.size() < 3 ? "(none)" : r.fields[2]));
    const auto c = pair_lj(top, lj, r, type[static_cast<std::size_t>(i)], type[static_cast<std::size_t>(j)]);
    PairSum& s = sums[std::minmax(i, j)];
    s.qq += top.fudge_qq * atoms.charge_e[static_cast<std::size_t>(i)] * atoms.charge_e[static_cast<std::size_t>(j)];
    s.c6 += c[0];
    s.c12 += c[1];
    s.where = r.where;
  }
  for (auto& [ij, s] : sums) {
    const auto [i, j] = ij;
    if (!s.excluded) {  // a pair outside the exclusions: GROMACS adds the normal interaction to the pair's
      const auto c = lj.normal(type[static_cast<std::size_t>(i)], type[static_cast<std::size_t>(j)]);
      s.qq += atoms.charge_e[static_cast<std::size_t>(i)] * atoms.charge_e[static_cast<std::size_t>(j)];
      s.c6 += c[0];
      s.c12 += c[1];
    }
    NonbondedException e{i, j, s.qq, 1.0, 0.0};
    if (s.c6 > 0.0 && s.c12 > 0.0) {
      e.sigma_nm = std::pow(s.c12 / s.c6, 1.0 / 6.0);
      e.epsilon_kj_per_mol = s.c6 * s.c6 / (4.0 * s.c12);
    } else if (s.c6 != 0.0 || s.c12 != 0.0) {
      gmx_fail(s.where, fmt::format("the pair {}-{} has c6 {} and c12 {} kJ/mol nm^6, nm^12: mdsim's exceptions are "
                                    "sigma/epsilon Lennard-Jones, which needs both positive",
                                    i + 1, j + 1, quoted_number(s.c6), quoted_number(s.c12)));
    }
    f.system.exceptions.push_back(e);
  }
}

}  // namespace

namespace {

// Element symbols by atomic number (1 .. 103), for [atomtypes]' at.num column.
const char* element_symbol(int z) {
  static const char* const kSymbols[] = {
      "",   "H",  "He", "Li", "Be", "B",  "C",  "N",  "O",  "F",  "Ne", "Na", "Mg", "Al", "Si", "P",  "S",  "Cl",
      "Ar", "K",  "Ca", "Sc", "Ti", "V",  "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As", "Se", "Br",
      "Kr", "Rb", "Sr", "Y",  "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb", "Te", "I",
      "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu",
      "Hf", "Ta", "W",  "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac",
      "Th", "Pa", "U",  "Np", "Pu", "Am", "Cm", "Bk", "Cf", "Es", "Fm", "Md", "No", "Lr"};
  return z > 0 && z < static_cast<int>(std::size(kSymbols)) ? kSymbols[z] : "";
}

// The element of an atom: the atom type's atomic number (0: none), else by the mass (OpenMM's getByMass).
std::string element_of(const GmxAtomType& t, double mass_amu) {
  if (t.atomic_number >= 0) return element_symbol(t.atomic_number);
  const Element* e = element_by_mass(mass_amu > 0.0 ? mass_amu : t.mass_amu);
  return e != nullptr ? e->symbol : "";
}

struct MoleculeTemplate {
  GmxFragment fragment;
  Topology topology;  // one chain: the molecule's residues (by [atoms] residue number) and atoms
};

MoleculeTemplate make_template(const GmxTopology& top, const GmxMoleculeType& m, const LjModel& lj,
                               std::vector<CmapMap>& cmap_maps) {
  MoleculeTemplate t;
  const GmxMoleculeAtoms atoms = read_atoms(top, m);
  System& s = t.fragment.system;
  std::vector<int> type;
  t.topology.chains.push_back({"", {}});
  std::string last_residue;
  const auto& records = m.section("atoms");
  for (std::size_t k = 0; k < atoms.type.size(); ++k) {
    const GmxAtomType& at = *atoms.type[k];
    type.push_back(lj.index.at(at.name));
    s.mass_amu.push_back(atoms.mass_amu[k]);
    s.charge_e.push_back(atoms.charge_e[k]);
    s.sigma_nm.push_back(lj.table ? 1.0 : at.v);
    s.epsilon_kj_per_mol.push_back(lj.table ? 0.0 : at.w);
    const GmxRecord& r = records[k];
    if (k == 0 || r.fields[2] != last_residue) {
      last_residue = r.fields[2];
      t.topology.chains[0].residues.push_back(static_cast<int>(t.topology.residues.size()));
      TopologyResidue res;
      res.name = r.fields[3];
      res.chain = 0;
      res.number = std::atoi(r.fields[2].c_str());
      res.line = r.where->line;
      t.topology.residues.push_back(res);
    }
    t.topology.residues.back().atoms.push_back(static_cast<int>(k));
    t.topology.atoms.push_back({r.fields[4], element_of(at, atoms.mass_amu[k]),
                                static_cast<int>(t.topology.residues.size()) - 1, static_cast<int>(k) + 1,
                                r.where->line});
  }
  add_gromacs_bonded(top, m, atoms, cmap_maps, t.fragment);
  for (const VirtualSite& v : s.virtual_sites) s.mass_amu[static_cast<std::size_t>(v.particle)] = 0.0;
  add_exceptions(top, m, atoms, lj, type, t.fragment);
  t.topology.bonds = t.fragment.topology_bonds;
  return t;
}

template <typename T>
void append_shifted(std::vector<T>& to, const std::vector<T>& from, int offset) {
  for (T x : from) {
    x.shift_atoms(offset);
    to.push_back(x);
  }
}

// Appends one copy of a molecule: its particles, terms (indices shifted), a chain of its residues, its bonds.
void append_copy(TopologyFileModel& out, const MoleculeTemplate& t, const std::vector<int>& lj_type) {
  System& s = out.system;
  const System& f = t.fragment.system;
  const int offset = s.num_particles();
  for (auto* v : {&s.mass_amu, &s.charge_e, &s.sigma_nm, &s.epsilon_kj_per_mol}) v->reserve(v->size() + f.mass_amu.size());
  s.mass_amu.insert(s.mass_amu.end(), f.mass_amu.begin(), f.mass_amu.end());
  s.charge_e.insert(s.charge_e.end(), f.charge_e.begin(), f.charge_e.end());
  s.sigma_nm.insert(s.sigma_nm.end(), f.sigma_nm.begin(), f.sigma_nm.end());
  s.epsilon_kj_per_mol.insert(s.epsilon_kj_per_mol.end(), f.epsilon_kj_per_mol.begin(), f.epsilon_kj_per_mol.end());
  append_shifted(s.bonds, f.bonds, offset);
  append_shifted(s.angles, f.angles, offset);
  append_shifted(s.torsions, f.torsions, offset);
  append_shifted(s.rb_torsions, f.rb_torsions, offset);
  append_shifted(s.impropers, f.impropers, offset);
  append_shifted(s.cmap_torsions, f.cmap_torsions, offset);
  append_shifted(s.urey_bradleys, f.urey_bradleys, offset);
  append_shifted(s.virtual_sites, f.virtual_sites, offset);
  for (NonbondedException e : f.exceptions) s.exceptions.push_back({e.i + offset, e.j + offset, e.charge_product_e2,
                                                                     e.sigma_nm, e.epsilon_kj_per_mol});
  for (DistanceConstraint c : f.constraints) s.constraints.push_back({c.i + offset, c.j + offset, c.distance_nm});
  if (s.lj_types) s.lj_types->particle_type.insert(s.lj_types->particle_type.end(), lj_type.begin(), lj_type.end());
  for (TopologyPositionRestraint p : t.fragment.restraints) {
    p.atom += offset;
    out.position_restraints.push_back(p);
  }
  Topology& top = out.topology;
  const int chain = static_cast<int>(top.chains.size()), residue0 = static_cast<int>(top.residues.size());
  top.chains.push_back({std::to_string(chain + 1), {}});
  for (TopologyResidue r : t.topology.residues) {
    r.chain = chain;
    for (int& a : r.atoms) a += offset;
    top.chains.back().residues.push_back(static_cast<int>(top.residues.size()));
    top.residues.push_back(r);
  }
  for (TopologyAtom a : t.topology.atoms) {
    a.residue += residue0;
    top.atoms.push_back(a);
  }
  for (const auto& [i, j] : t.topology.bonds) top.bonds.emplace_back(i + offset, j + offset);
}

// The pair-specific LJ table (System::lj_types) of the used atom types; particle types are filled per copy.
LjTypeTable make_lj_table(const LjModel& lj) {
  LjTypeTable table;
  table.num_types = static_cast<int>(lj.types.size());
  const auto n = static_cast<std::size_t>(table.num_types);
  table.c6_kj_per_mol_nm6.resize(n * n);
  table.c12_kj_per_mol_nm12.resize(n * n);
  for (int a = 0; a < table.num_types; ++a)
    for (int b = 0; b < table.num_types; ++b) {
      const auto c = lj.normal(a, b);
      table.c6_kj_per_mol_nm6[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] = c[0];
      table.c12_kj_per_mol_nm12[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] = c[1];
    }
  return table;
}

void check_molecules(const GmxTopology& top, const std::string& path) {
  if (!top.defaults_seen)
    throw InputError(located(path, 0, 0, "no [ defaults ] section: #include a force field (its forcefield.itp) or "
                                         "write [ defaults ] before the molecules"));
  if (top.molecules.empty())
    throw InputError(located(path, 0, 0, "no [ molecules ] section: list each molecule type and its count"));
  for (const GmxMoleculeCount& mc : top.molecules) {
    if (top.moleculetype_index.count(mc.name) == 0) {
      std::string known;
      for (const GmxMoleculeType& m : top.moleculetypes) known += (known.empty() ? "" : ", ") + m.name;
      gmx_fail(mc.where, fmt::format("[ molecules ]: molecule type \"{}\" is not defined (defined: {}); #include its "
                                     ".itp or check the name",
                                     mc.name, known.empty() ? "none" : known));
    }
    if (mc.count < 0) gmx_fail(mc.where, fmt::format("[ molecules ]: negative count {} for {}", mc.count, mc.name));
  }
}

// The [molecules] total against the caller's limit (the coordinates' atom count), before anything is built: a count
// of 10^8 copies must not run out of memory first.
void check_atom_total(const GmxTopology& top, const std::optional<long>& limit) {
  const long most = limit.value_or(2147483647L);
  long total = 0;
  for (const GmxMoleculeCount& mc : top.molecules) {
    const auto& m = top.moleculetypes[static_cast<std::size_t>(top.moleculetype_index.at(mc.name))];
    total += static_cast<long>(mc.count) * static_cast<long>(m.section("atoms").size());  // < 2^31 * 2^31
    if (total > most)
      gmx_fail(mc.where, limit ? fmt::format("[ molecules ]: {} {} make at least {} atoms, but the coordinates have {}",
                                             mc.count, mc.name, total, most)
                               : fmt::format("[ molecules ]: {} {} make at least {} atoms, more than 2^31 - 1",
                                             mc.count, mc.name, total));
  }
}

}  // namespace

TopologyFileModel read_gromacs_top(const std::string& path, const TopologyFileOptions& options) {
  GromacsPreprocessorOptions pre;
  pre.include_dirs = options.include_dirs;
  pre.defines = {{"FLEXIBLE", "1"}};  // as OpenMM's GromacsTopFile: water models as bonds and an angle
  pre.defines.insert(pre.defines.end(), options.defines.begin(), options.defines.end());
  const GmxTopology top = parse_gromacs_records(preprocess_gromacs(path, pre));
  check_molecules(top, path);
  check_atom_total(top, options.atom_limit);
  const LjModel lj = make_lj_model(top);

  TopologyFileModel out;
  out.topology.source = path;
  out.system.nonbonded = options.nonbonded;
  out.system.box = options.box;
  if (lj.table) out.system.lj_types = make_lj_table(lj);
  std::map<std::string, MoleculeTemplate> templates;
  for (const GmxMoleculeCount& mc : top.molecules) {
    if (mc.count == 0) continue;
    const GmxMoleculeType& m = top.moleculetypes[static_cast<std::size_t>(top.moleculetype_index.at(mc.name))];
    auto it = templates.find(mc.name);
    if (it == templates.end()) it = templates.emplace(mc.name, make_template(top, m, lj, out.system.cmap_maps)).first;
    std::vector<int> lj_type;
    for (const GmxRecord& r : m.section("atoms")) lj_type.push_back(lj.index.at(r.fields[1]));
    for (int copy = 0; copy < mc.count; ++copy) append_copy(out, it->second, lj_type);
  }
  const bool waters = std::any_of(out.topology.residues.begin(), out.topology.residues.end(),
                                  [](const TopologyResidue& r) { return is_water_residue_name(r.name); });
  if (waters)
    out.notes.push_back("GROMACS topology: FLEXIBLE is defined (as OpenMM does), so water models are read as bonds "
                        "and an angle; rigid water and constraints are applied from the run's settings");
  return out;
}

}  // namespace mdsim
