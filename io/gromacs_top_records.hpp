// The records of a GROMACS topology as io/gromacs_top_parse reads them (after io/gromacs_preprocessor): the
// [defaults], the parameter tables ([atomtypes], [bondtypes], ...) and the molecule types with their sections, each
// record kept as its blank-separated fields with the line it came from. io/gromacs_top builds the System from them.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "io/gromacs_preprocessor.hpp"

namespace mdsim {

struct GmxRecord {
  const GromacsLine* where = nullptr;  // into GmxTopology::lines
  std::vector<std::string> fields;
};

struct GmxAtomType {
  std::string name, bonded;  // bonded = the bonded type (the name when the column is absent)
  int atomic_number = -1;    // -1: column absent
  double mass_amu = 0.0, charge_e = 0.0;
  double v = 0.0, w = 0.0;  // comb-rule 1: c6, c12; 2 and 3: sigma (nm), epsilon (kJ/mol)
  const GromacsLine* where = nullptr;
};

struct GmxMoleculeType {
  std::string name;
  int nrexcl = 3;
  const GromacsLine* where = nullptr;
  // Section name ("atoms", "bonds", "pairs", ...) -> its records, in file order.
  std::map<std::string, std::vector<GmxRecord>> sections;
  const std::vector<GmxRecord>& section(const std::string& name) const {
    static const std::vector<GmxRecord> kNone;
    const auto it = sections.find(name);
    return it == sections.end() ? kNone : it->second;
  }
};

struct GmxMoleculeCount {
  std::string name;
  int count = 0;
  const GromacsLine* where = nullptr;
};

struct GmxTopology {
  GmxTopology() = default;
  GmxTopology(GmxTopology&&) = default;  // moving keeps the records' pointers into `lines` valid
  GmxTopology& operator=(GmxTopology&&) = default;
  GmxTopology(const GmxTopology&) = delete;
  std::vector<GromacsLine> lines;  // every record points into it (not changed after reading)
  bool defaults_seen = false;
  int nbfunc = 1, comb_rule = 1;
  bool gen_pairs = false;
  double fudge_lj = 1.0, fudge_qq = 1.0;
  std::map<std::string, GmxAtomType> atomtypes;
  // Parameter tables: key = the type names and the function type, blank-joined ("CT HC 1"); for [dihedraltypes] a
  // list per key (function 9 lists several terms), in file order.
  std::map<std::string, GmxRecord> bondtypes, angletypes, constrainttypes, pairtypes, nonbond_params, cmaptypes;
  std::vector<std::pair<std::array<std::string, 5>, std::vector<GmxRecord>>> dihedraltypes;  // 4 types + func
  std::vector<GmxMoleculeType> moleculetypes;
  std::map<std::string, int> moleculetype_index;
  std::vector<GmxMoleculeCount> molecules;
  std::string system_name;
};

// Parses the preprocessed lines. InputError (file:line) for a data line outside a section, a section GROMACS does
// not have, too few fields, a number that does not parse, a molecule section before [moleculetype].
GmxTopology parse_gromacs_records(std::vector<GromacsLine> lines);

// The number in a field, or InputError naming the record's file, line and what the field is.
double gmx_number(const GmxRecord& r, std::size_t index, const char* what);
int gmx_integer(const GmxRecord& r, std::size_t index, const char* what);
[[noreturn]] void gmx_fail(const GromacsLine* where, const std::string& message);

}  // namespace mdsim
