// GROMACS bonded terms of one molecule type (io/gromacs_top_build.hpp). Parameters come from the record itself when
// it carries them, else from the parameter tables by the atoms' bonded types (either order; dihedrals by GROMACS's
// rule: the [dihedraltypes] line with the fewest X wildcards, the first in the file among equals). Angles in the files
// are in degrees; force constants in kJ/mol/nm^2 and kJ/mol/rad^2.
#include <fmt/format.h>

#include <cmath>

#include "common/errors.hpp"
#include "io/gromacs_top_build.hpp"

namespace mdsim {

int gmx_atom(const GmxRecord& r, std::size_t index, int num_atoms, const char* section) {
  const int a = gmx_integer(r, index, "an atom number");
  if (a < 1 || a > num_atoms)
    gmx_fail(r.where, fmt::format("[ {} ]: atom {} is not in the molecule (atoms 1 to {})", section, a, num_atoms));
  return a - 1;
}

namespace {

constexpr double kDegToRad = M_PI / 180.0;

struct Context {
  const GmxTopology& top;
  const GmxMoleculeType& m;
  const GmxMoleculeAtoms& atoms;
  GmxFragment& out;
  int n() const { return static_cast<int>(atoms.type.size()); }
  std::vector<int> read_atoms(const GmxRecord& r, int count, const char* section) const {
    std::vector<int> a;
    for (int k = 0; k < count; ++k) a.push_back(gmx_atom(r, static_cast<std::size_t>(k), n(), section));
    return a;
  }
  std::vector<std::string> bonded_types(const std::vector<int>& a) const {
    std::vector<std::string> t;
    for (int i : a) t.push_back(atoms.type[static_cast<std::size_t>(i)]->bonded);
    return t;
  }
};

std::string joined(const std::vector<std::string>& types) {
  std::string s;
  for (const auto& t : types) {
    if (!s.empty()) s += ' ';
    s += t;
  }
  return s;
}

std::string atom_list(const std::vector<int>& a) {
  std::string s;
  for (int i : a) {
    if (!s.empty()) s += '-';
    s += std::to_string(i + 1);
  }
  return s;
}

// table[types func] in the forward or the reversed order; nullptr if neither.
const GmxRecord* lookup(const std::map<std::string, GmxRecord>& table, std::vector<std::string> types,
                        const std::string& func) {
  auto it = table.find(joined(types) + " " + func);
  if (it != table.end()) return &it->second;
  std::reverse(types.begin(), types.end());
  it = table.find(joined(types) + " " + func);
  return it == table.end() ? nullptr : &it->second;
}

[[noreturn]] void missing(const GmxRecord& r, const char* term, const std::vector<int>& a, const char* table,
                          const std::vector<std::string>& types, const std::string& func, const char* layout) {
  gmx_fail(r.where, fmt::format("no parameters for the {} {}: [ {} ] has no line for the types {} (function {}), "
                                "in either order; add one there, or give the parameters on this line ({})",
                                term, atom_list(a), table, joined(types), func, layout));
}

[[noreturn]] void unsupported(const GmxRecord& r, const char* section, const std::string& func, const char* supported) {
  gmx_fail(r.where, fmt::format("[ {} ] function type {} is not supported (mdsim reads {})", section, func, supported));
}

void add_bonds(Context& c) {
  for (const GmxRecord& r : c.m.section("bonds")) {
    const std::vector<int> a = c.read_atoms(r, 2, "bonds");
    const std::string func = r.fields.size() > 2 ? r.fields[2] : "";
    if (func != "1" && func != "5") unsupported(r, "bonds", func, "1 harmonic and 5 connection");
    c.out.topology_bonds.emplace_back(a[0], a[1]);
    c.out.graph_bonds.emplace_back(a[0], a[1]);
    if (func == "5") continue;  // a connection: exclusions and the topology only
    const GmxRecord* p = &r;
    if (r.fields.size() < 4) {
      p = lookup(c.top.bondtypes, c.bonded_types(a), func);
      if (p == nullptr) missing(r, "bond", a, "bondtypes", c.bonded_types(a), func, "ai aj 1 b0 kb");
    }
    c.out.system.bonds.push_back({a[0], a[1], gmx_number(*p, 3, "b0 (nm)"), gmx_number(*p, 4, "kb (kJ/mol/nm^2)")});
  }
}

void add_angles(Context& c) {
  for (const GmxRecord& r : c.m.section("angles")) {
    const std::vector<int> a = c.read_atoms(r, 3, "angles");
    const std::string func = r.fields.size() > 3 ? r.fields[3] : "";
    if (func != "1" && func != "5") unsupported(r, "angles", func, "1 harmonic and 5 Urey-Bradley");
    const GmxRecord* p = &r;
    if (r.fields.size() < 5) {
      p = lookup(c.top.angletypes, c.bonded_types(a), func);
      if (p == nullptr)
        missing(r, "angle", a, "angletypes", c.bonded_types(a), func,
                func == "1" ? "ai aj ak 1 theta0 k" : "ai aj ak 5 theta0 k r13 kUB");
    }
    c.out.system.angles.push_back(
        {a[0], a[1], a[2], gmx_number(*p, 4, "theta0 (degrees)") * kDegToRad, gmx_number(*p, 5, "k (kJ/mol/rad^2)")});
    if (func == "5") {
      // Urey-Bradley: a harmonic term between the outer atoms, its own energy term (OpenMM puts it in a
      // HarmonicBondForce of its own); not a bond of the topology or the exclusions.
      const double k = gmx_number(*p, 7, "kUB (kJ/mol/nm^2)");
      if (k != 0.0) c.out.system.urey_bradleys.push_back({a[0], a[2], gmx_number(*p, 6, "r13 (nm)"), k});
    }
  }
}

// Whether `key` (4 types, X = any) matches `types` in order; the number of wildcards through `wild`.
bool matches(const std::array<std::string, 5>& key, const std::vector<std::string>& types, int& wild) {
  wild = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    if (key[k] == "X") {
      ++wild;
    } else if (key[k] != types[k]) {
      return false;
    }
  }
  return true;
}

// The [dihedraltypes] lines for these types: the match with the fewest wildcards, the first among equals. Functions
// 1 and 9 (both periodic) match each other.
const std::vector<GmxRecord>* find_dihedral_type(const GmxTopology& top, std::vector<std::string> types,
                                                 const std::string& func) {
  const auto same_class = [&](const std::string& f) {
    return f == func || ((f == "1" || f == "9") && (func == "1" || func == "9"));
  };
  std::vector<std::string> reversed(types.rbegin(), types.rend());
  const std::vector<GmxRecord>* best = nullptr;
  int best_wild = 5;
  for (const auto& [key, list] : top.dihedraltypes) {
    if (!same_class(key[4])) continue;
    int w1 = 0, w2 = 0;
    const bool f = matches(key, types, w1), b = matches(key, reversed, w2);
    const int w = f && b ? std::min(w1, w2) : f ? w1 : b ? w2 : 5;
    if (w < best_wild) best = &list, best_wild = w;
    if (best_wild == 0) break;
  }
  return best;
}

void add_dihedral(Context& c, const std::vector<int>& a, const std::string& func, const GmxRecord& p) {
  System& s = c.out.system;
  if (func == "1" || func == "4" || func == "9") {
    const double k = gmx_number(p, 6, "k (kJ/mol)");
    if (k != 0.0)
      s.torsions.push_back({a[0], a[1], a[2], a[3], static_cast<int>(gmx_number(p, 7, "the multiplicity")),
                            gmx_number(p, 5, "the phase (degrees)") * kDegToRad, k});
  } else if (func == "2") {
    // GROMACS: E = 1/2 k (xi - xi0)^2, the difference taken the short way round; mdsim's improper is k dtheta^2.
    double xi0 = gmx_number(p, 5, "xi0 (degrees)");
    const double k = gmx_number(p, 6, "k (kJ/mol/rad^2)");
    if (xi0 > 180.0) xi0 -= 360.0;
    if (k != 0.0) s.impropers.push_back({a[0], a[1], a[2], a[3], xi0 * kDegToRad, 0.5 * k});
  } else {
    // Ryckaert-Bellemans (3) in GROMACS's convention psi = phi - 180 degrees, as RbTorsionTerm; Fourier (5)
    // converted to it.
    std::array<double, 6> cn{};
    const int count = func == "3" ? 6 : 4;
    for (int n = 0; n < count; ++n) cn[static_cast<std::size_t>(n)] = gmx_number(p, 5 + static_cast<std::size_t>(n), "a coefficient (kJ/mol)");
    if (func == "5") {
      const std::array<double, 6> f = cn;
      cn = {f[1] + 0.5 * (f[0] + f[2]), 0.5 * (-f[0] + 3 * f[2]), -f[1] + 4 * f[3], -2 * f[2], -4 * f[3], 0.0};
    }
    if (std::any_of(cn.begin(), cn.end(), [](double x) { return x != 0.0; }))
      s.rb_torsions.push_back({a[0], a[1], a[2], a[3], cn});
  }
}

void add_dihedrals(Context& c) {
  std::map<std::string, const std::vector<GmxRecord>*> cache;  // by types and function
  for (const GmxRecord& r : c.m.section("dihedrals")) {
    const std::vector<int> a = c.read_atoms(r, 4, "dihedrals");
    const std::string func = r.fields.size() > 4 ? r.fields[4] : "";
    if (func != "1" && func != "2" && func != "3" && func != "4" && func != "5" && func != "9")
      unsupported(r, "dihedrals", func, "1, 4, 9 periodic, 2 harmonic improper, 3 Ryckaert-Bellemans, 5 Fourier");
    const std::size_t explicit_fields = func == "2" ? 7 : func == "3" ? 11 : func == "5" ? 9 : 8;
    if (r.fields.size() >= explicit_fields) {
      add_dihedral(c, a, func, r);
      continue;
    }
    const std::vector<std::string> types = c.bonded_types(a);
    const std::string key = joined(types) + " " + func;
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, find_dihedral_type(c.top, types, func)).first;
    if (it->second == nullptr)
      missing(r, "dihedral", a, "dihedraltypes", types, func, "ai aj ak al func parameters; X matches any type");
    for (const GmxRecord& p : *it->second) add_dihedral(c, a, func, p);
  }
}

}  // namespace

void add_gromacs_bonded(const GmxTopology& top, const GmxMoleculeType& m, const GmxMoleculeAtoms& atoms,
                        std::vector<CmapMap>& cmap_maps, GmxFragment& out) {
  Context c{top, m, atoms, out};
  add_bonds(c);
  add_angles(c);
  add_dihedrals(c);
  add_gromacs_cmap(top, m, atoms, cmap_maps, out);
  add_gromacs_sites(m, atoms, top, out);
}

}  // namespace mdsim
