// read_charmm_parameters: CHARMM topology, parameter and stream files (io/charmm_parameters.hpp).
#include "io/charmm_parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "common/errors.hpp"
#include "io/text_input.hpp"
#include "io/file_names.hpp"
#include "model/elements.hpp"

namespace mdsim {
namespace {

struct Line {  // a logical line: comment removed, continuations joined, words split
  int number = 0;  // the first physical line's number
  std::vector<std::string> words;  // upper case (CHARMM's names are case-insensitive)
  std::vector<std::string> raw;    // as written, for messages
};

[[noreturn]] void fail(const std::string& source, int line, const std::string& message) {
  throw InputError(located(source, line, 0, message));
}

Line make_line(int number, const std::vector<std::string>& raw) {
  Line l{number, raw, raw};
  for (std::string& w : l.words)
    for (char& c : w) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return l;
}

std::vector<Line> logical_lines(const std::string& text) {
  std::vector<Line> out;
  std::istringstream in(text);
  std::string raw, pending;
  int number = 0, first = 0;
  while (std::getline(in, raw)) {
    ++number;
    if (const auto bang = raw.find('!'); bang != std::string::npos) raw.erase(bang);
    while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
    if (pending.empty()) first = number;
    if (!raw.empty() && raw.back() == '-') {
      raw.pop_back();
      pending += raw;
      pending += ' ';
      continue;
    }
    pending += raw;
    if (std::vector<std::string> words = split_words(pending); !words.empty()) out.push_back(make_line(first, words));
    pending.clear();
  }
  if (const std::vector<std::string> words = split_words(pending); !words.empty()) out.push_back(make_line(first, words));
  return out;
}

double number_at(const std::string& source, const Line& l, std::size_t k, const char* what) {
  if (k >= l.words.size())
    fail(source, l.number, fmt::format("expected {} as field {}, but the line has {} fields", what, k + 1, l.words.size()));
  const std::string& w = l.raw[k];
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  if (end == w.c_str() || *end != '\0' || !std::isfinite(v))
    fail(source, l.number, fmt::format("expected {} as field {}, found '{}'", what, k + 1, w));
  return v;
}

bool is_number(const std::string& w) {
  char* end = nullptr;
  std::strtod(w.c_str(), &end);
  return end != w.c_str() && *end == '\0';
}

void need_fields(const std::string& source, const Line& l, std::size_t n, const char* what) {
  if (l.words.size() < n)
    fail(source, l.number, fmt::format("expected {} ({} fields), found {} field{}", what, n, l.words.size(),
                                       l.words.size() == 1 ? "" : "s"));
}

// A MASS line (topology files and the ATOMS section): MASS number type mass [element].
void read_mass(const std::string& source, const Line& l, CharmmParameters& p) {
  need_fields(source, l, 4, "MASS number type mass [element]");
  CharmmAtomType t;
  const double number = number_at(source, l, 1, "the type's number");
  // Not a whole number in int's range (no psf type can name it): none, as CHARMM's -1.
  const bool whole = number == std::floor(number) && number >= 0 && number <= std::numeric_limits<int>::max();
  t.number = whole ? static_cast<int>(number) : -1;
  t.name = l.words[2];
  t.mass_amu = number_at(source, l, 3, "the type's mass (amu)");
  const Element* e = l.words.size() > 4 ? find_element(l.words[4]) : nullptr;
  if (e == nullptr) e = element_by_mass(t.mass_amu);
  t.atomic_number = e != nullptr ? e->atomic_number : 0;
  t.where = {source, l.number};
  if (const auto old = p.types.find(t.name); old != p.types.end() && old->second.has_lj) {
    t.has_lj = true;  // a re-definition keeps the LJ values already read for the name
    t.epsilon_kcal = old->second.epsilon_kcal, t.rmin_half_a = old->second.rmin_half_a;
    t.epsilon14_kcal = old->second.epsilon14_kcal, t.rmin14_half_a = old->second.rmin14_half_a;
    t.lj_where = old->second.lj_where;
  }
  if (t.number >= 0) p.type_by_number[t.number] = t.name;
  p.types[t.name] = std::move(t);
}

enum class Section { None, Atoms, Bonds, Angles, Dihedrals, Impropers, Cmap, Nonbonded, Nbfix, Skipped };

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The section a header line opens (Section::None with `header` false for a data line).
Section section_of(const Line& l, bool& header) {
  const std::string& w = l.words[0];
  header = true;
  if (starts_with(w, "ATOM")) return Section::Atoms;
  if (starts_with(w, "BOND")) return Section::Bonds;
  if (starts_with(w, "ANGL") || starts_with(w, "THET")) return Section::Angles;
  if (starts_with(w, "DIHE") || starts_with(w, "PHI")) return Section::Dihedrals;
  if (starts_with(w, "IMPR") || starts_with(w, "IMPH")) return Section::Impropers;
  if (starts_with(w, "CMAP")) return Section::Cmap;
  if (starts_with(w, "NONB") || starts_with(w, "NBON")) return Section::Nonbonded;
  if (starts_with(w, "NBFIX")) return Section::Nbfix;
  if (starts_with(w, "THOLE") || starts_with(w, "HBOND")) return Section::Skipped;
  if (starts_with(w, "END")) return Section::None;
  header = false;
  return Section::None;
}

// The state of one parameter block while it is read.
struct Block {
  Block(const std::string& s, CharmmParameters& params) : source(s), p(params) {}
  const std::string& source;
  CharmmParameters& p;
  Section section = Section::None;
  bool read_first_nonbonded = false;
  std::optional<std::array<std::string, 8>> cmap_key;
  std::string cmap_written;  // its types as the header wrote them, for messages
  CharmmCmapType cmap;
  std::vector<std::pair<Line, std::array<double, 4>>> nonbonded;  // applied at the block's end (types may follow)
};

void finish_cmap(Block& b) {
  if (!b.cmap_key) return;
  const std::size_t want = static_cast<std::size_t>(b.cmap.size) * static_cast<std::size_t>(b.cmap.size);
  if (b.cmap.grid_kcal.size() != want)
    fail(b.source, b.cmap.where.line,
         fmt::format("the CMAP grid of {} has {} values, expected {} x {} = {}", b.cmap_written, b.cmap.grid_kcal.size(),
                     b.cmap.size, b.cmap.size, want));
  b.p.cmaps[*b.cmap_key] = std::move(b.cmap);
  b.cmap_key.reset();
  b.cmap = {};
}

void read_nonbonded_header(Block& b, const Line& l) {
  b.read_first_nonbonded = false;
  for (std::size_t k = 0; k + 1 < l.words.size(); ++k) {
    if (l.words[k] == "NBXMOD") {
      const double v = number_at(b.source, l, k + 1, "the nbxmod value");
      if (v != std::floor(v) || v < -5 || v > 5)
        fail(b.source, l.number, fmt::format("nbxmod {} is not supported: expected an integer from -5 to 5", l.raw[k + 1]));
      b.p.nbxmod = static_cast<int>(v);
    }
    if (l.words[k] == "E14FAC") b.p.e14fac = number_at(b.source, l, k + 1, "the e14fac value");
  }
}

void read_bond(const Block& b, const Line& l) {
  need_fields(b.source, l, 4, "a bond: type type Kb (kcal/mol/A^2) b0 (A)");
  b.p.bonds[CharmmParameters::bond_key(l.words[0], l.words[1])] = {
      number_at(b.source, l, 2, "the bond force constant"), number_at(b.source, l, 3, "the bond length")};
}

void read_angle(const Block& b, const Line& l) {
  need_fields(b.source, l, 5, "an angle: type type type Ktheta (kcal/mol/rad^2) theta0 (degrees) [Kub S0]");
  CharmmAngleType a;
  a.k_kcal_per_rad2 = number_at(b.source, l, 3, "the angle force constant");
  a.theta0_deg = number_at(b.source, l, 4, "the angle (degrees)");
  if (l.words.size() >= 7) {
    a.urey_bradley = true;
    a.ub_k_kcal_per_a2 = number_at(b.source, l, 5, "the Urey-Bradley force constant");
    a.ub_r0_a = number_at(b.source, l, 6, "the Urey-Bradley distance");
  }
  b.p.angles[CharmmParameters::angle_key(l.words[0], l.words[1], l.words[2])] = a;
}

std::array<std::string, 4> four_types(const Line& l) { return {l.words[0], l.words[1], l.words[2], l.words[3]}; }

void read_dihedral(const Block& b, const Line& l) {
  need_fields(b.source, l, 7, "a dihedral: 4 types, Kchi (kcal/mol), n, delta (degrees)");
  CharmmDihedralTerm t;
  t.k_kcal = number_at(b.source, l, 4, "the dihedral force constant");
  const double n = number_at(b.source, l, 5, "the periodicity");
  if (n != std::floor(n) || n < 1 || n > 100)
    fail(b.source, l.number,
         fmt::format("dihedral periodicity {} is not supported: expected an integer from 1 to 100 (periodicity 0, "
                     "CHARMM's harmonic dihedral, is not supported)",
                     l.raw[5]));
  t.periodicity = static_cast<int>(n);
  t.phase_deg = number_at(b.source, l, 6, "the phase (degrees)");
  std::vector<CharmmDihedralTerm>& terms = b.p.dihedrals[CharmmParameters::torsion_key(four_types(l))];
  const auto same = std::find_if(terms.begin(), terms.end(), [&](const auto& o) { return o.periodicity == t.periodicity; });
  if (same != terms.end())
    *same = t;
  else
    terms.push_back(t);
}

void read_improper(const Block& b, const Line& l) {
  need_fields(b.source, l, 6, "an improper: 4 types, Kpsi (kcal/mol/rad^2), [0,] psi0 (degrees)");
  CharmmImproperType t;
  t.k_kcal_per_rad2 = number_at(b.source, l, 4, "the improper force constant");
  t.psi0_deg = number_at(b.source, l, l.words.size() >= 7 ? 6 : 5, "the improper angle (degrees)");
  b.p.impropers[CharmmParameters::torsion_key(four_types(l))] = t;
}

void read_cmap_line(Block& b, const Line& l) {
  if (std::all_of(l.words.begin(), l.words.end(), is_number)) {
    if (!b.cmap_key) fail(b.source, l.number, "CMAP grid values before a CMAP header (8 types and the grid size)");
    for (std::size_t k = 0; k < l.words.size(); ++k) b.cmap.grid_kcal.push_back(number_at(b.source, l, k, "a value"));
    return;
  }
  finish_cmap(b);
  need_fields(b.source, l, 9, "a CMAP header: 8 types and the grid size");
  const double n = number_at(b.source, l, 8, "the CMAP grid size");
  if (n != std::floor(n) || n < 2 || n > 1000)
    fail(b.source, l.number, fmt::format("CMAP grid size {} is not an integer from 2 to 1000", l.raw[8]));
  const auto first = CharmmParameters::torsion_key({l.words[0], l.words[1], l.words[2], l.words[3]});
  const auto second = CharmmParameters::torsion_key({l.words[4], l.words[5], l.words[6], l.words[7]});
  b.cmap_key = {first[0], first[1], first[2], first[3], second[0], second[1], second[2], second[3]};
  b.cmap_written = fmt::format("{} {} {} {} / {} {} {} {}", l.raw[0], l.raw[1], l.raw[2], l.raw[3], l.raw[4],
                               l.raw[5], l.raw[6], l.raw[7]);
  b.cmap.size = static_cast<int>(n);
  b.cmap.where = {b.source, l.number};
}

void read_nonbonded(Block& b, const Line& l) {
  if (l.words.size() < 4 || !is_number(l.words[2]) || !is_number(l.words[3])) {
    if (!b.read_first_nonbonded) return;  // the header's settings, continued without '-'
    need_fields(b.source, l, 4, "nonbonded values: type ignored epsilon Rmin/2 [ignored eps,1-4 Rmin/2,1-4]");
  }
  b.read_first_nonbonded = true;
  std::array<double, 4> v{};
  v[0] = std::fabs(number_at(b.source, l, 2, "epsilon (kcal/mol)"));
  v[1] = number_at(b.source, l, 3, "Rmin/2 (A)");
  const bool has14 = l.words.size() >= 7;
  v[2] = has14 ? std::fabs(number_at(b.source, l, 5, "the 1-4 epsilon (kcal/mol)")) : v[0];
  v[3] = has14 ? number_at(b.source, l, 6, "the 1-4 Rmin/2 (A)") : v[1];
  b.nonbonded.emplace_back(l, v);
}

void read_nbfix(const Block& b, const Line& l) {
  need_fields(b.source, l, 4, "an NBFIX pair: type type Emin (kcal/mol) Rmin (A) [Emin,1-4 Rmin,1-4]");
  CharmmNbfix f;
  f.emin_kcal = std::fabs(number_at(b.source, l, 2, "Emin (kcal/mol)"));
  f.rmin_a = number_at(b.source, l, 3, "Rmin (A)");
  const bool has14 = l.words.size() >= 6;
  f.emin14_kcal = has14 ? std::fabs(number_at(b.source, l, 4, "the 1-4 Emin (kcal/mol)")) : f.emin_kcal;
  f.rmin14_a = has14 ? number_at(b.source, l, 5, "the 1-4 Rmin (A)") : f.rmin_a;
  // As OpenMM: a pair whose types are not defined yet is left out (stream files name types of other files).
  if (b.p.types.count(l.words[0]) && b.p.types.count(l.words[1]))
    b.p.nbfix[CharmmParameters::bond_key(l.words[0], l.words[1])] = f;
}

void read_data_line(Block& b, const Line& l) {
  switch (b.section) {
    case Section::Atoms:
      if (l.words[0] == "MASS") read_mass(b.source, l, b.p);
      return;
    case Section::Bonds: return read_bond(b, l);
    case Section::Angles: return read_angle(b, l);
    case Section::Dihedrals: return read_dihedral(b, l);
    case Section::Impropers: return read_improper(b, l);
    case Section::Cmap: return read_cmap_line(b, l);
    case Section::Nonbonded: return read_nonbonded(b, l);
    case Section::Nbfix: return read_nbfix(b, l);
    case Section::None:
    case Section::Skipped: return;
  }
}

void apply_nonbonded(Block& b) {
  for (const auto& [l, v] : b.nonbonded) {
    const auto t = b.p.types.find(l.words[0]);
    if (t == b.p.types.end())
      fail(b.source, l.number,
           fmt::format("nonbonded values for atom type {}, which no MASS line defines: list the topology (.rtf) or "
                       "stream file that defines it in system.parameters (topology files are read first)",
                       l.raw[0]));
    CharmmAtomType& a = t->second;
    a.has_lj = true;
    a.epsilon_kcal = v[0], a.rmin_half_a = v[1], a.epsilon14_kcal = v[2], a.rmin14_half_a = v[3];
    a.lj_where = {b.source, l.number};
  }
}

void read_parameter_block(const std::string& source, const std::vector<Line>& lines, CharmmParameters& p) {
  Block b{source, p};
  for (const Line& l : lines) {
    if (l.words[0].front() == '*') continue;  // title lines
    bool header = false;
    const Section s = section_of(l, header);
    if (header) {
      if (b.section == Section::Cmap) finish_cmap(b);
      b.section = s;
      if (s == Section::Nonbonded) read_nonbonded_header(b, l);
      continue;
    }
    read_data_line(b, l);
  }
  if (b.section == Section::Cmap) finish_cmap(b);
  apply_nonbonded(b);
}

void read_topology_block(const std::string& source, const std::vector<Line>& lines, CharmmParameters& p) {
  for (const Line& l : lines)
    if (l.words[0] == "MASS") read_mass(source, l, p);
}

// A stream file's `read rtf card ...` and `read para card ...` blocks, each up to its END line.
void read_stream(const std::string& source, const std::vector<Line>& lines, CharmmParameters& p) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    if (l.words[0] != "READ" || l.words.size() < 2) continue;
    const bool rtf = l.words[1] == "RTF", para = starts_with(l.words[1], "PARA");
    std::vector<Line> block;
    for (++i; i < lines.size() && !starts_with(lines[i].words[0], "END"); ++i) block.push_back(lines[i]);
    if (i == lines.size() && (rtf || para))
      fail(source, l.number, fmt::format("the '{} {}' block has no END line", l.raw[0], l.raw[1]));
    if (rtf) read_topology_block(source, block, p);
    if (para) read_parameter_block(source, block, p);
  }
}

template <std::size_t N>
std::array<std::string, N> reversed(std::array<std::string, N> a) {
  std::reverse(a.begin(), a.end());
  return a;
}

// Tries t with wildcards in 0, 1, 2, then 3 positions (positions in lexicographic order), as OpenMM does.
template <typename Map>
const typename Map::mapped_type* find_with_wildcards(const Map& map, const std::array<std::string, 4>& t) {
  // No wildcard, then the combinations of 1, 2 and 3 positions out of 4, each in lexicographic order.
  static const std::vector<std::vector<int>> kOrder = {{},     {0},    {1},    {2},       {3},       {0, 1},
                                                       {0, 2}, {0, 3}, {1, 2}, {1, 3},    {2, 3},    {0, 1, 2},
                                                       {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
  for (const std::vector<int>& positions : kOrder) {
    std::array<std::string, 4> key = t;
    for (int k : positions) key[static_cast<std::size_t>(k)].assign(1, 'X');
    const auto it = map.find(CharmmParameters::torsion_key(key));
    if (it != map.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

std::array<std::string, 2> CharmmParameters::bond_key(std::string a, std::string b) {
  if (b < a) std::swap(a, b);
  return {std::move(a), std::move(b)};
}

std::array<std::string, 3> CharmmParameters::angle_key(std::string a, const std::string& b, std::string c) {
  if (c < a) std::swap(a, c);
  return {std::move(a), b, std::move(c)};
}

std::array<std::string, 4> CharmmParameters::torsion_key(const std::array<std::string, 4>& t) {
  return std::min(t, reversed(t));
}

const std::vector<CharmmDihedralTerm>* CharmmParameters::find_dihedral(const std::array<std::string, 4>& t) const {
  return find_with_wildcards(dihedrals, t);
}

const CharmmImproperType* CharmmParameters::find_improper(const std::array<std::string, 4>& t) const {
  return find_with_wildcards(impropers, t);
}

CharmmFileKind charmm_file_kind(const std::string& path) {
  if (ends_with_ci(path, ".rtf") || ends_with_ci(path, ".top")) return CharmmFileKind::Topology;
  if (ends_with_ci(path, ".prm") || ends_with_ci(path, ".par")) return CharmmFileKind::Parameters;
  if (ends_with_ci(path, ".str")) return CharmmFileKind::Stream;
  if (ends_with_ci(path, ".inp")) {
    const std::string name = path.substr(path.find_last_of('/') + 1);
    if (name.find("par") != std::string::npos) return CharmmFileKind::Parameters;
    if (name.find("top") != std::string::npos) return CharmmFileKind::Topology;
  }
  throw InputError(located(path, 0, 0,
                           "not a CHARMM parameter file name: expected .rtf or .top (topology), .prm or .par "
                           "(parameters), .str (stream), or .inp with 'par' or 'top' in its name"));
}

void read_charmm_parameter_text(const std::string& text, const std::string& source, CharmmFileKind kind,
                                CharmmParameters& into) {
  const std::vector<Line> lines = logical_lines(text);
  switch (kind) {
    case CharmmFileKind::Topology: read_topology_block(source, lines, into); break;
    case CharmmFileKind::Parameters: read_parameter_block(source, lines, into); break;
    case CharmmFileKind::Stream: read_stream(source, lines, into); break;
  }
  into.files.push_back(source);
}

CharmmParameters read_charmm_parameters(const std::vector<std::string>& paths) {
  if (paths.empty())
    throw InputError(
        "a CHARMM psf needs its parameter files: list them in system.parameters (e.g. [par_all36m_prot.prm, "
        "top_all36_prot.rtf, toppar_water_ions.str])");
  CharmmParameters p;
  for (const CharmmFileKind kind : {CharmmFileKind::Topology, CharmmFileKind::Parameters, CharmmFileKind::Stream})
    for (const std::string& path : paths)
      if (charmm_file_kind(path) == kind) read_charmm_parameter_text(read_text_file(path, "CHARMM parameter file"), path, kind, p);
  return p;
}

}  // namespace mdsim
