// GROMACS topology records (io/gromacs_top_records.hpp): the preprocessed lines split into sections and fields.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "common/errors.hpp"
#include "io/gromacs_top_records.hpp"

namespace mdsim {

void gmx_fail(const GromacsLine* where, const std::string& message) {
  if (where == nullptr) throw InputError(message);
  throw InputError(located(where->file, where->line, 0, message));
}

double gmx_number(const GmxRecord& r, std::size_t index, const char* what) {
  if (index >= r.fields.size()) gmx_fail(r.where, fmt::format("expected {} in field {}", what, index + 1));
  const std::string& s = r.fields[index];
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    gmx_fail(r.where, fmt::format("field {} \"{}\": expected {} (a number)", index + 1, s, what));
  return v;
}

int gmx_integer(const GmxRecord& r, std::size_t index, const char* what) {
  if (index >= r.fields.size()) gmx_fail(r.where, fmt::format("expected {} in field {}", what, index + 1));
  const std::string& s = r.fields[index];
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || v < -2147483647L || v > 2147483647L)
    gmx_fail(r.where, fmt::format("field {} \"{}\": expected {} (an integer)", index + 1, s, what));
  return static_cast<int>(v);
}

namespace {

// The sections a [moleculetype] holds; those the builder does not support are refused there, with their line.
const std::set<std::string> kMoleculeSections = {
    "atoms",          "bonds",          "pairs",           "pairs_nb",         "angles",
    "dihedrals",      "exclusions",     "constraints",     "settles",          "cmap",
    "virtual_sites1", "virtual_sites2", "virtual_sites3",  "virtual_sites4",   "virtual_sitesn",
    "dummies2",       "dummies3",       "dummies4",        "dummiesn",         "position_restraints",
    "distance_restraints", "dihedral_restraints", "orientation_restraints", "angle_restraints",
    "angle_restraints_z", "polarization", "water_polarization", "thole_polarization"};

// Global sections that carry no term of a fixed-charge model (implicit-solvent parameters).
const std::set<std::string> kIgnoredSections = {"implicit_genborn_params", "implicit_surface_params"};

std::string join(const std::vector<std::string>& f, std::size_t n) {
  std::string key;
  for (std::size_t i = 0; i < n; ++i) key += (i ? " " : "") + f[i];
  return key;
}

void need(const GmxRecord& r, std::size_t n, const std::string& section, const char* layout) {
  if (r.fields.size() < n)
    gmx_fail(r.where, fmt::format("[ {} ] record with {} fields; expected at least {}: {}", section,
                                  r.fields.size(), n, layout));
}

void read_atomtype(GmxTopology& top, const GmxRecord& r) {
  // name [bonded type] [atomic number] mass charge ptype V W: ptype is the third field from the end.
  const std::size_t n = r.fields.size();
  const char* layout = "name [bonded-type] [at.num] mass charge ptype V W";
  if (n < 6 || n > 8) gmx_fail(r.where, fmt::format("[ atomtypes ] record with {} fields; expected {}", n, layout));
  const std::string& ptype = r.fields[n - 3];
  if (ptype.size() != 1 || std::string("ASVD").find(ptype[0]) == std::string::npos)
    gmx_fail(r.where, fmt::format("[ atomtypes ]: field {} \"{}\" should be the particle type (A, S, V or D): {}",
                                  n - 2, ptype, layout));
  GmxAtomType t;
  t.name = t.bonded = r.fields[0];
  t.where = r.where;
  if (n == 8) {
    t.bonded = r.fields[1];
    t.atomic_number = gmx_integer(r, 2, "the atomic number");
  } else if (n == 7) {
    const std::string& x = r.fields[1];
    if (!x.empty() && std::isdigit(static_cast<unsigned char>(x[0])) != 0)
      t.atomic_number = gmx_integer(r, 1, "the atomic number");
    else
      t.bonded = x;
  }
  t.mass_amu = gmx_number(r, n - 5, "the mass (amu)");
  t.charge_e = gmx_number(r, n - 4, "the charge (e)");
  t.v = gmx_number(r, n - 2, "V (c6, or sigma in nm)");
  t.w = gmx_number(r, n - 1, "W (c12, or epsilon in kJ/mol)");
  top.atomtypes[t.name] = t;
}

void read_dihedraltype(GmxTopology& top, GmxRecord r) {
  need(r, 3, "dihedraltypes", "i j k l func parameters (or j k func parameters)");
  const std::string& third = r.fields[2];
  if (third.size() <= 2 && std::all_of(third.begin(), third.end(), ::isdigit)) {
    // Two types: the central pair j k, or for the harmonic improper (function 2) the outer pair i l.
    std::vector<std::string> f = r.fields;
    if (third == "2")
      r.fields = {f[0], "X", "X", f[1]};
    else
      r.fields = {"X", f[0], f[1], "X"};
    r.fields.insert(r.fields.end(), f.begin() + 2, f.end());
  }
  need(r, 6, "dihedraltypes", "i j k l func parameters");
  std::array<std::string, 5> key{r.fields[0], r.fields[1], r.fields[2], r.fields[3], r.fields[4]};
  // Function 9 lists several terms as consecutive lines of the same types; otherwise a later line replaces.
  for (auto& [k, list] : top.dihedraltypes)
    if (k == key) {
      if (key[4] == "9")
        list.push_back(std::move(r));
      else
        list = {std::move(r)};
      return;
    }
  top.dihedraltypes.push_back({key, {std::move(r)}});
}

void read_defaults(GmxTopology& top, const GmxRecord& r) {
  need(r, 2, "defaults", "nbfunc comb-rule [gen-pairs fudgeLJ fudgeQQ]");
  top.defaults_seen = true;
  top.nbfunc = gmx_integer(r, 0, "nbfunc");
  top.comb_rule = gmx_integer(r, 1, "the combination rule");
  if (top.nbfunc != 1)
    gmx_fail(r.where, fmt::format("[ defaults ] nbfunc {}: only 1 (Lennard-Jones) is supported; 2 (Buckingham) "
                                  "is not", top.nbfunc));
  if (top.comb_rule < 1 || top.comb_rule > 3)
    gmx_fail(r.where, fmt::format("[ defaults ] comb-rule {}: expected 1, 2 or 3", top.comb_rule));
  if (r.fields.size() > 2) {
    std::string g = r.fields[2];
    std::transform(g.begin(), g.end(), g.begin(), ::tolower);
    if (g != "yes" && g != "no") gmx_fail(r.where, fmt::format("[ defaults ] gen-pairs \"{}\": expected yes or no", g));
    top.gen_pairs = g == "yes";
  }
  if (r.fields.size() > 3) top.fudge_lj = gmx_number(r, 3, "fudgeLJ");
  if (r.fields.size() > 4) top.fudge_qq = gmx_number(r, 4, "fudgeQQ");
}

void read_parameter(GmxTopology& top, const std::string& section, GmxRecord r) {
  if (section == "atomtypes") return read_atomtype(top, r);
  if (section == "dihedraltypes") return read_dihedraltype(top, std::move(r));
  struct Table {
    const char* name;
    std::size_t types, min_fields;
    const char* layout;
    std::map<std::string, GmxRecord>* table;
  };
  const Table tables[] = {{"bondtypes", 2, 3, "i j func parameters", &top.bondtypes},
                          {"constrainttypes", 2, 4, "i j func b0", &top.constrainttypes},
                          {"pairtypes", 2, 5, "i j func V W", &top.pairtypes},
                          {"angletypes", 3, 4, "i j k func parameters", &top.angletypes},
                          {"cmaptypes", 5, 8, "i j k l m func nx ny grid", &top.cmaptypes}};
  for (const Table& t : tables)
    if (section == t.name) {
      need(r, t.min_fields, section, t.layout);
      (*t.table)[join(r.fields, t.types + 1)] = r;
      return;
    }
  // nonbond_params: keyed by the two types in sorted order.
  need(r, 5, section, "i j func V W");
  if (r.fields[2] != "1")
    gmx_fail(r.where, fmt::format("[ nonbond_params ] function {}: only 1 (Lennard-Jones) is supported", r.fields[2]));
  const auto [a, b] = std::minmax(r.fields[0], r.fields[1]);
  top.nonbond_params[a + " " + b] = r;
}

}  // namespace

GmxTopology parse_gromacs_records(std::vector<GromacsLine> lines) {
  GmxTopology top;
  top.lines = std::move(lines);
  std::string section;
  int molecule = -1;  // index of the current [moleculetype]
  for (const GromacsLine& line : top.lines) {
    if (line.text.front() == '[') {
      if (line.text.back() != ']')
        gmx_fail(&line, fmt::format("\"{}\": expected a section header \"[ name ]\"", line.text));
      std::istringstream in(line.text.substr(1, line.text.size() - 2));
      in >> section;
      continue;
    }
    GmxRecord r{&line, {}};
    std::istringstream in(line.text);
    for (std::string f; in >> f;) r.fields.push_back(f);
    if (section.empty()) gmx_fail(&line, fmt::format("\"{}\" before any [ section ]", line.text));
    if (section == "defaults") {
      read_defaults(top, r);
    } else if (section == "moleculetype") {
      need(r, 2, section, "name nrexcl");
      top.moleculetype_index[r.fields[0]] = static_cast<int>(top.moleculetypes.size());
      top.moleculetypes.push_back({r.fields[0], gmx_integer(r, 1, "nrexcl"), &line, {}});
      molecule = static_cast<int>(top.moleculetypes.size()) - 1;
    } else if (kMoleculeSections.count(section) > 0) {
      if (molecule < 0)
        gmx_fail(&line, fmt::format("[ {} ] before any [ moleculetype ]: its records belong to a molecule type",
                                    section));
      top.moleculetypes[static_cast<std::size_t>(molecule)].sections[section].push_back(std::move(r));
    } else if (section == "system") {
      top.system_name += (top.system_name.empty() ? "" : " ") + line.text;
    } else if (section == "molecules") {
      need(r, 2, section, "molecule-name count");
      top.molecules.push_back({r.fields[0], gmx_integer(r, 1, "the number of molecules"), &line});
    } else if (section == "atomtypes" || section == "bondtypes" || section == "constrainttypes" ||
               section == "pairtypes" || section == "angletypes" || section == "dihedraltypes" ||
               section == "cmaptypes" || section == "nonbond_params") {
      read_parameter(top, section, std::move(r));
    } else if (kIgnoredSections.count(section) == 0) {
      gmx_fail(&line, fmt::format("[ {} ]: a section mdsim does not read (GROMACS topologies: defaults, atomtypes, "
                                  "bondtypes, angletypes, dihedraltypes, constrainttypes, pairtypes, nonbond_params, "
                                  "cmaptypes, moleculetype and its sections, system, molecules)",
                                  section));
    }
  }
  return top;
}

}  // namespace mdsim
