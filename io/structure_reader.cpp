#include "io/structure_reader.hpp"

#include <zlib.h>

#include <gemmi/cif.hpp>
#include <gemmi/pdb.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "io/file_names.hpp"
#include "io/pdb_reader.hpp"
#include "model/elements.hpp"

namespace mdsim {
namespace {

namespace cif = gemmi::cif;

// Structures beyond this (Å) are damaged records, as in read_pdb.
constexpr double kMaxCoordinateAngstrom = 1e5;

std::string without_gz(const std::string& path) {
  return ends_with_ci(path, ".gz") ? path.substr(0, path.size() - 3) : path;
}

// One line: gemmi's messages may span several.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

[[noreturn]] void fail(const std::string& path, int line, const std::string& message) {
  throw InputError(located(path, line, 0, message));
}

// The file's bytes, through zlib for .gz.
std::string read_bytes(const std::string& path) {
  if (!ends_with_ci(path, ".gz")) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, 0, fmt::format("cannot open the structure file: {}", std::strerror(errno)));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) fail(path, 0, "error while reading the structure file");
    return std::move(buffer).str();
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) fail(path, 0, fmt::format("cannot open the structure file: {}", std::strerror(errno)));
  std::string out;
  char buffer[1 << 16];
  int status = Z_OK;
  std::string problem;
  for (;;) {
    const int n = gzread(file, buffer, sizeof buffer);
    if (n > 0) out.append(buffer, static_cast<std::size_t>(n));
    const char* text = gzerror(file, &status);
    if (n < 0 || (status != Z_OK && status != Z_STREAM_END)) {
      problem = status == Z_ERRNO ? std::strerror(errno) : text;
      if (problem.rfind(path + ": ", 0) == 0) problem = problem.substr(path.size() + 2);  // zlib names the file
      break;
    }
    if (n == 0) break;
  }
  const bool plain = gzdirect(file) == 1;
  gzclose(file);
  if (!problem.empty())
    fail(path, 0, fmt::format("cannot decompress the gzip file ({}): it is damaged or truncated; download it again, "
                              "or name the uncompressed file",
                              problem));
  if (plain && !out.empty())
    fail(path, 0, "the name ends in .gz but the file is not gzip-compressed; rename it without .gz");
  return out;
}

// A decimal number as CIF writes it, with an optional standard uncertainty "1.234(5)".
bool parse_number(std::string_view s, double& out) {
  if (const std::size_t paren = s.find('('); paren != std::string_view::npos && s.back() == ')') s = s.substr(0, paren);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(out);
}

bool parse_int(std::string_view s, long& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// ------------------------------------------------------------------ the structure both formats give

struct AtomIn {
  std::string name;
  std::string element;  // symbol as the Topology holds it ("C", "Cl")
  char altloc = 0;      // 0 = none
  double occupancy = 1.0;
  Vec3d position_angstrom;
  int serial = 0;
  int line = 0;
  int input = 0;  // index in input order, for CONECT / struct_conn look-ups
};

struct ResidueIn {
  std::string name;
  int number = 0;
  char icode = ' ';
  std::vector<AtomIn> atoms;
};

struct ChainIn {
  std::string id;
  std::vector<ResidueIn> residues;
};

// The chains, residues and atoms a reader found, in input order, before alternate locations are resolved.
struct StructureIn {
  std::vector<ChainIn> chains;
  int num_input = 0;    // atoms read
  int last_number = 0;  // a residue without a number follows the previous one

  void start_chain(const std::string& id) { chains.push_back(ChainIn{id.empty() ? std::string(" ") : id, {}}); }

  void start_residue(std::string name, std::optional<int> number, char icode) {
    ResidueIn residue;
    residue.name = std::move(name);
    residue.number = number ? *number : last_number + 1;
    last_number = residue.number;
    residue.icode = icode;
    chains.back().residues.push_back(std::move(residue));
  }

  ResidueIn& residue() { return chains.back().residues.back(); }
  const std::string& chain_id() const { return chains.back().id; }
};

// Positions beyond 10 µm, or not numbers, are damaged records (as read_pdb refuses them).
void check_coordinates(const std::string& path, const AtomIn& a) {
  for (int k = 0; k < 3; ++k) {
    const double x = a.position_angstrom[k];
    if (!std::isfinite(x))
      fail(path, a.line,
           fmt::format("atom '{}' (serial {}) has the coordinate {}, not a number: a damaged record? Fix it", a.name,
                       a.serial, quoted_number(x)));
    if (std::fabs(x) > kMaxCoordinateAngstrom)
      fail(path, a.line,
           fmt::format("atom '{}' (serial {}) has the coordinate {} Å, beyond the {:g} Å (10 µm) a structure's "
                       "coordinates can reach: a damaged record? Fix it",
                       a.name, a.serial, quoted_number(x), kMaxCoordinateAngstrom));
  }
}

// Alternate locations are chosen per residue, as a whole: the location label whose atoms have the highest mean
// occupancy (ties: the first in the file). Residues that share a number and insertion code but differ in name,
// each with alternate locations (microheterogeneity: ILE in A/B, LEU in C), form one site; of them only the
// residue holding the chosen label is kept.
struct AltlocSite {
  std::size_t first = 0, end = 0;  // the site's residues in the chain
  char chosen = 0;                 // 0 = no alternate locations
};

bool has_altlocs(const ResidueIn& r) {
  return std::any_of(r.atoms.begin(), r.atoms.end(), [](const AtomIn& a) { return a.altloc != 0; });
}

bool same_site(const ResidueIn& a, const ResidueIn& b) {
  return a.number == b.number && a.icode == b.icode && a.name != b.name && has_altlocs(a) && has_altlocs(b);
}

char choose_altloc(const std::vector<ResidueIn>& residues, std::size_t first, std::size_t end) {
  std::vector<std::pair<char, std::pair<double, int>>> labels;  // label -> (occupancy sum, atoms), file order
  for (std::size_t r = first; r < end; ++r)
    for (const AtomIn& a : residues[r].atoms) {
      if (a.altloc == 0) continue;
      auto it = std::find_if(labels.begin(), labels.end(), [&](const auto& l) { return l.first == a.altloc; });
      if (it == labels.end()) it = labels.insert(labels.end(), {a.altloc, {0.0, 0}});
      it->second.first += a.occupancy;
      ++it->second.second;
    }
  char best = 0;
  double best_mean = -1.0;
  for (const auto& [label, sum] : labels)
    if (const double mean = sum.first / sum.second; mean > best_mean) best = label, best_mean = mean;
  return best;
}

std::vector<AltlocSite> altloc_sites(const std::vector<ResidueIn>& residues) {
  std::vector<AltlocSite> sites;
  for (std::size_t r = 0; r < residues.size();) {
    AltlocSite site{r, r + 1, 0};
    while (site.end < residues.size() && same_site(residues[r], residues[site.end])) ++site.end;
    site.chosen = choose_altloc(residues, site.first, site.end);
    sites.push_back(site);
    r = site.end;
  }
  return sites;
}

// The atoms of a residue to keep: for each name, the record without a label or with the chosen one (an atom
// that has neither keeps its most occupied location, ties the first).
std::vector<bool> kept_atoms(const ResidueIn& residue, char chosen) {
  std::unordered_map<std::string, std::size_t> best;
  auto rank = [&](const AtomIn& a) { return a.altloc == 0 || a.altloc == chosen ? 1 : 0; };
  for (std::size_t i = 0; i < residue.atoms.size(); ++i) {
    const AtomIn& a = residue.atoms[i];
    auto [it, fresh] = best.emplace(a.name, i);
    const AtomIn& b = residue.atoms[it->second];
    if (!fresh && (rank(a) > rank(b) || (rank(a) == rank(b) && a.occupancy > b.occupancy))) it->second = i;
  }
  std::vector<bool> keep(residue.atoms.size(), false);
  for (const auto& [name, i] : best) keep[i] = true;
  return keep;
}

void add_residue(const ResidueIn& residue, const std::vector<bool>& keep, int chain_index, Topology& top,
                 std::vector<int>& index_of, std::map<char, int>& dropped) {
  TopologyResidue out;
  out.name = residue.name;
  out.chain = chain_index;
  out.number = residue.number;
  out.insertion_code = residue.icode;
  out.line = residue.atoms.empty() ? 0 : residue.atoms.front().line;
  const int residue_index = static_cast<int>(top.residues.size());
  for (std::size_t i = 0; i < residue.atoms.size(); ++i) {
    const AtomIn& a = residue.atoms[i];
    if (!keep[i]) {
      ++dropped[a.altloc ? a.altloc : ' '];
      continue;
    }
    const int atom_index = top.num_atoms();
    index_of[static_cast<std::size_t>(a.input)] = atom_index;
    out.atoms.push_back(atom_index);
    TopologyAtom atom;
    atom.name = a.name;
    atom.element = a.element;
    atom.residue = residue_index;
    atom.serial = a.serial;
    atom.line = a.line;
    top.atoms.push_back(std::move(atom));
    top.positions_nm.push_back(a.position_angstrom * 0.1);
  }
  top.chains.back().residues.push_back(residue_index);
  top.residues.push_back(std::move(out));
}

// A residue of a microheterogeneity site left out because another residue holds the chosen location.
std::string dropped_residue_note(const ResidueIn& dropped, const ResidueIn& kept, char chosen, const std::string& chain) {
  return fmt::format("residue {} {}{} (chain '{}') dropped: altloc {} of the same site, {}, has the highest occupancy",
                     dropped.name, dropped.number, dropped.icode == ' ' ? std::string() : std::string(1, dropped.icode),
                     chain, chosen, kept.name);
}

// Builds the Topology, keeping of each residue one alternate location (altloc_sites); returns the topology
// index of every input atom (-1 = dropped).
std::vector<int> build_topology(const std::string& path, StructureIn& in, Topology& top,
                                std::vector<std::string>& notes) {
  top.source = path;
  std::vector<int> index_of(static_cast<std::size_t>(in.num_input), -1);
  std::map<char, int> dropped;  // altloc -> atoms dropped
  std::vector<std::string> residue_notes;
  for (ChainIn& chain : in.chains) {
    const int chain_index = static_cast<int>(top.chains.size());
    top.chains.push_back(TopologyChain{chain.id, {}});
    for (const AltlocSite& site : altloc_sites(chain.residues)) {
      std::size_t holder = site.first;  // the site's residue with the chosen label
      for (std::size_t r = site.first; r < site.end; ++r)
        if (std::any_of(chain.residues[r].atoms.begin(), chain.residues[r].atoms.end(),
                        [&](const AtomIn& a) { return a.altloc == site.chosen; })) {
          holder = r;
          break;
        }
      for (std::size_t r = site.first; r < site.end; ++r) {
        const ResidueIn& residue = chain.residues[r];
        if (r != holder) {
          for (const AtomIn& a : residue.atoms) ++dropped[a.altloc ? a.altloc : ' '];
          residue_notes.push_back(dropped_residue_note(residue, chain.residues[holder], site.chosen, chain.id));
          continue;
        }
        add_residue(residue, kept_atoms(residue, site.chosen), chain_index, top, index_of, dropped);
      }
    }
  }
  if (top.atoms.empty()) fail(path, 0, "the file holds no atoms (no ATOM/HETATM records or _atom_site rows)");
  for (const auto& [altloc, count] : dropped)
    notes.push_back(fmt::format("altloc {} dropped for {} atom{} (each residue keeps its most occupied location)",
                                altloc == ' ' ? std::string("(none)") : std::string(1, altloc), count,
                                count == 1 ? "" : "s"));
  for (std::string& n : residue_notes) notes.push_back(std::move(n));
  return index_of;
}

void note_models(std::vector<std::string>& notes, const std::string& first, std::size_t count) {
  if (count > 1) notes.push_back(fmt::format("model {} of {} used (the file holds {} models)", first, count, count));
}

void sort_unique(std::vector<std::pair<int, int>>& pairs) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
}

void set_box(const std::string& path, int line, const double cell[6], Topology& top, std::vector<std::string>& notes,
             const char* what) {
  // A 1 Å cube is the placeholder of files without a crystal cell (NMR, models), not a box.
  if (cell[0] == 1.0 && cell[1] == 1.0 && cell[2] == 1.0) {
    notes.push_back(fmt::format("the {} unit cell of 1 Å × 1 Å × 1 Å is a placeholder: no periodic box read", what));
    return;
  }
  std::string problem;
  int field = -1;
  std::optional<Boxd> box = reduced_box_from_cell(cell, problem, field);
  static const char* const kNames[6] = {"a", "b", "c", "alpha", "beta", "gamma"};
  if (!box)
    fail(path, line,
         fmt::format("{} {}{}; fix the unit cell or remove it", what, problem,
                     field >= 0 ? fmt::format(" (found {} = {})", kNames[field], quoted_number(cell[field])) : ""));
  top.box = *box;
}

// ------------------------------------------------------------------ PDB through gemmi

std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> lines;
  std::string_view rest(text);
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (eol == std::string_view::npos) break;
    rest.remove_prefix(eol + 1);
  }
  return lines;
}

bool record_is(std::string_view line, std::string_view record) {
  if (line.size() < record.size()) return false;
  for (std::size_t i = 0; i < record.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(line[i])) != record[i]) return false;
  return true;
}

// gemmi's serial-number field (decimal or hybrid-36), from a copy padded to its 5 columns.
int pdb_serial(std::string_view line, std::size_t begin) {
  char field[6] = {' ', ' ', ' ', ' ', ' ', '\0'};
  for (std::size_t i = 0; i < 5 && begin + i < line.size(); ++i) field[i] = line[begin + i];
  return gemmi::pdb_impl::read_serial(field);
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// The copy of a PDB file gemmi reads. PDB records are plain ASCII: a byte outside it in an ATOM/HETATM record is
// refused where it is, as read_pdb does; elsewhere it becomes '?'. Only the records read here are kept (ATOM,
// HETATM, TER, MODEL, ENDMDL, END, CRYST1, CONECT, as OpenMM's PDBFile); the others are blanked, so gemmi's
// parsers of records nobody uses never see them: gemmi 0.5.7 reads a short LINK/SSBOND/CISPEP record past its
// end (a heap overflow) and overflows an int on a DBREF2 number of 10 digits.
std::string gemmi_input(const std::string& path, const std::string& text) {
  std::string out = text;
  int line = 1;
  std::size_t line_start = 0;
  const auto blank_unread_record = [&out](std::size_t start) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string head;  // the record name's first four characters, upper case (as gemmi compares them)
    for (std::size_t k = start; k < start + 4 && k < end; ++k)
      head.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(out[k]))));
    const bool kept = head == "ATOM" || head == "HETA" || head == "MODE" || head == "CRYS" || head == "CONE" ||
                      head.rfind("TER", 0) == 0 || head.rfind("END", 0) == 0;
    if (!kept)
      for (std::size_t k = start; k < end; ++k) out[k] = ' ';
  };
  blank_unread_record(0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      blank_unread_record(line_start);
      continue;
    }
    if (c < 0x80 && (c >= 0x20 || c == '\t' || c == '\r')) continue;
    const std::string_view record = std::string_view(text).substr(line_start, 6);
    if (record == "ATOM  " || record == "HETATM")
      throw InputError(located(path, line, static_cast<int>(i - line_start) + 1,
                               fmt::format("byte 0x{:02x} in column {} is not ASCII text; PDB records are plain ASCII",
                                           c, i - line_start + 1)));
    out[i] = '?';
  }
  return out;
}

// gemmi's reading of the cleaned text; its "Problem in line N: what" is reported at line N.
gemmi::Structure parse_pdb(const std::string& path, const std::string& text) {
  gemmi::PdbReadOptions options;
  options.split_chain_on_ter = true;  // a new chain after TER, as OpenMM's PDBFile
  try {
    return gemmi::read_pdb_from_memory(text.data(), text.size(), path, options);
  } catch (const std::exception& e) {
    std::string message = one_line(e.what());
    int line = 0;
    constexpr std::string_view kPrefix = "Problem in line ";
    if (message.rfind(kPrefix, 0) == 0) {
      const std::size_t colon = message.find(": ", kPrefix.size());
      line = std::atoi(message.c_str() + kPrefix.size());
      if (colon != std::string::npos) message = message.substr(colon + 2);
    }
    fail(path, line, fmt::format("cannot read this PDB file: {}; fix the record (or convert the file with a "
                                 "structure tool)",
                                 message));
  }
}

// The lines of the first model's ATOM/HETATM records by (serial, name, altloc), for messages, and the CRYST1 line.
struct PdbRecordLines {
  using Key = std::tuple<int, std::string, char>;
  std::map<Key, std::vector<int>> line_of;
  std::map<Key, std::size_t> used;  // lines of each key handed out
  int cryst1_line = 0;

  explicit PdbRecordLines(const std::vector<std::string_view>& lines) {
    bool atoms_seen = false, first_model_done = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string_view line = lines[i];
      const int number = static_cast<int>(i) + 1;
      if (record_is(line, "ATOM  ") || record_is(line, "HETATM")) {
        if (first_model_done || line.size() < 17) continue;
        atoms_seen = true;
        const char altloc = line[16] == ' ' ? '\0' : line[16];
        line_of[{pdb_serial(line, 6), trimmed(line.substr(12, 4)), altloc}].push_back(number);
      } else if (record_is(line, "ENDMDL") || record_is(line, "MODEL ")) {
        if (atoms_seen) first_model_done = true;
      } else if (record_is(line, "CRYST1")) {
        cryst1_line = number;
      } else if (record_is(line, "END") && (line.size() == 3 || line[3] == ' ')) {
        break;
      }
    }
  }

  // The next unused line of a record matching `atom` (0 = none).
  int take(const gemmi::Atom& atom) {
    const Key key{atom.serial, atom.name, atom.altloc};
    auto found = line_of.find(key);
    if (found == line_of.end()) return 0;
    std::size_t& next = used[key];
    return next < found->second.size() ? found->second[next++] : 0;
  }
};

struct PlacedAtom {
  std::size_t chain;
  const gemmi::Residue* residue;
  const gemmi::Atom* atom;
  int line;
};

// The first model's atoms with their chain and residue. gemmi files an atom under the residue of its chain
// with the same number and name, even one far back in the file (residue numbers wrap past 9999 in big
// systems): in file order (by line) a residue is therefore a run of atoms gemmi put in one residue, and a
// name repeated without an alternate location starts the next one.
std::vector<PlacedAtom> atoms_in_file_order(const gemmi::Structure& st, PdbRecordLines& record_lines) {
  std::vector<PlacedAtom> placed;
  if (!st.models.empty()) {
    const auto& model_chains = st.models.front().chains;
    for (std::size_t c = 0; c < model_chains.size(); ++c)
      for (const gemmi::Residue& residue : model_chains[c].residues)
        for (const gemmi::Atom& atom : residue.atoms) placed.push_back({c, &residue, &atom, record_lines.take(atom)});
  }
  if (std::all_of(placed.begin(), placed.end(), [](const PlacedAtom& p) { return p.line > 0; }))
    std::stable_sort(placed.begin(), placed.end(),
                     [](const PlacedAtom& a, const PlacedAtom& b) { return a.line < b.line; });
  return placed;
}

// The element gemmi gave an atom (from columns 77-78, else guessed from the name); none is refused.
const char* pdb_element(const std::string& path, const std::vector<std::string_view>& lines, const gemmi::Atom& atom,
                        const AtomIn& a, const ResidueIn& r, const std::string& chain_id) {
  const Element* element = atom.element.elem == gemmi::El::X ? nullptr : find_element(atom.element.name());
  if (element == nullptr) {
    const std::string_view text_line = a.line > 0 ? lines[static_cast<std::size_t>(a.line - 1)] : std::string_view();
    const std::string column = text_line.size() > 76 ? trimmed(text_line.substr(76, 2)) : std::string();
    fail(path, a.line,
         fmt::format("cannot determine the element of atom '{}' in residue {} {} (chain '{}'): element columns "
                     "77-78 are {} and the atom name does not start with an element symbol; write the element "
                     "symbol in columns 77-78",
                     a.name, r.name, r.number, chain_id,
                     column.empty() ? std::string("blank") : fmt::format("'{}' (unknown)", column)));
  }
  return element->symbol;
}

// The placed atoms as chains and residues: a new chain where gemmi's changes, a new residue where gemmi's
// changes or a (name, altloc) repeats.
StructureIn pdb_chains(const std::string& path, const gemmi::Structure& st, const std::vector<PlacedAtom>& placed,
                       const std::vector<std::string_view>& lines) {
  StructureIn in;
  std::size_t last_chain = static_cast<std::size_t>(-1);
  const gemmi::Residue* last_residue = nullptr;
  std::set<std::pair<std::string, char>> names_in_residue;
  for (const PlacedAtom& p : placed) {
    const gemmi::Atom& atom = *p.atom;
    if (in.chains.empty() || p.chain != last_chain) {
      in.start_chain(st.models.front().chains[p.chain].name);
      last_chain = p.chain;
      last_residue = nullptr;
    }
    if (p.residue != last_residue || names_in_residue.count({atom.name, atom.altloc})) {
      const gemmi::SeqId& seqid = p.residue->seqid;
      in.start_residue(p.residue->name, seqid.num.has_value() ? std::optional<int>(static_cast<int>(seqid.num))
                                                              : std::nullopt,
                       seqid.icode == '\0' ? ' ' : seqid.icode);
      last_residue = p.residue;
      names_in_residue.clear();
    }
    names_in_residue.insert({atom.name, atom.altloc});
    ResidueIn& r = in.residue();
    AtomIn a;
    a.name = atom.name;
    a.altloc = atom.altloc;
    a.occupancy = atom.occ;
    a.position_angstrom = Vec3d(atom.pos.x, atom.pos.y, atom.pos.z);
    a.serial = atom.serial;
    a.line = p.line;
    a.input = in.num_input++;
    a.element = pdb_element(path, lines, atom, a, r, in.chain_id());
    check_coordinates(path, a);
    r.atoms.push_back(std::move(a));
  }
  return in;
}

// CONECT records between kept atoms, by serial number (a serial two kept atoms share is ambiguous: skipped).
void add_conect_bonds(const std::vector<std::string_view>& lines, Topology& top) {
  std::unordered_map<int, int> atom_of_serial;
  std::set<int> ambiguous;
  for (int atom = 0; atom < top.num_atoms(); ++atom) {
    const int serial = top.atoms[static_cast<std::size_t>(atom)].serial;
    if (!atom_of_serial.emplace(serial, atom).second) ambiguous.insert(serial);
  }
  for (std::string_view line : lines) {
    if (!record_is(line, "CONECT")) continue;
    const int first = pdb_serial(line, 6);
    auto a = atom_of_serial.find(first);
    if (a == atom_of_serial.end() || ambiguous.count(first)) continue;
    for (std::size_t begin = 11; begin < 31 && begin < line.size(); begin += 5) {
      if (trimmed(line.substr(begin, 5)).empty()) continue;
      const int serial = pdb_serial(line, begin);
      auto b = atom_of_serial.find(serial);
      if (b == atom_of_serial.end() || ambiguous.count(serial) || b->second == a->second) continue;
      top.conect.emplace_back(std::min(a->second, b->second), std::max(a->second, b->second));
    }
  }
  sort_unique(top.conect);
}

StructureFile read_pdb_structure(const std::string& path, const std::string& original) {
  const std::string text = gemmi_input(path, original);
  const gemmi::Structure st = parse_pdb(path, text);
  const std::vector<std::string_view> lines = split_lines(text);
  PdbRecordLines record_lines(lines);
  StructureFile out;
  if (!st.models.empty()) note_models(out.notes, st.models.front().name, st.models.size());
  StructureIn in = pdb_chains(path, st, atoms_in_file_order(st, record_lines), lines);
  build_topology(path, in, out.topology, out.notes);
  add_conect_bonds(lines, out.topology);
  if (record_lines.cryst1_line > 0) {
    const double cell[6] = {st.cell.a, st.cell.b, st.cell.c, st.cell.alpha, st.cell.beta, st.cell.gamma};
    set_box(path, record_lines.cryst1_line, cell, out.topology, out.notes, "CRYST1");
  }
  return out;
}

// ------------------------------------------------------------------ PDBx/mmCIF

// The line of each row of the first loop holding `tag` ("_atom_site.id") when each row sits on one line
// (as every writer does); empty otherwise (messages then name the file only).
std::vector<int> loop_row_lines(const std::vector<std::string_view>& lines, std::string_view category,
                                std::size_t rows) {
  std::size_t i = 0;
  while (i < lines.size() && trimmed(lines[i]).rfind(category, 0) != 0) ++i;
  while (i < lines.size() && trimmed(lines[i]).rfind(category, 0) == 0) ++i;
  std::vector<int> out;
  for (; i < lines.size(); ++i) {
    const std::string line = trimmed(lines[i]);
    if (line.empty()) continue;
    if (line[0] == '_' || line[0] == '#' || line[0] == ';' || line.rfind("loop_", 0) == 0 ||
        line.rfind("data_", 0) == 0 || line.rfind("save_", 0) == 0)
      break;
    out.push_back(static_cast<int>(i) + 1);
  }
  if (out.size() != rows) out.clear();
  return out;
}

int line_of_tag(const std::vector<std::string_view>& lines, std::string_view tag) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (trimmed(lines[i]).rfind(tag, 0) == 0) return static_cast<int>(i) + 1;
  return 0;
}

// gemmi's parse of the document; a syntax error is reported at its line and column.
cif::Document parse_mmcif(const std::string& path, const std::string& text) {
  try {
    return cif::read_memory(text.data(), text.size(), path.c_str());
  } catch (const tao::pegtl::parse_error& e) {
    const int line = e.positions().empty() ? 0 : static_cast<int>(e.positions().front().line);
    const int column = e.positions().empty() ? 0 : static_cast<int>(e.positions().front().column);
    throw InputError(located(path, line, column,
                             fmt::format("PDBx/mmCIF syntax error: {}; fix the file there (a truncated download or "
                                         "a hand edit?)",
                                         one_line(std::string(e.message())))));
  } catch (const std::exception& e) {
    std::string message = one_line(e.what());
    if (message.rfind(path + ":", 0) == 0) message = message.substr(path.size() + 1);
    fail(path, 0, fmt::format("cannot read this PDBx/mmCIF file: {}", message));
  }
}

// The _atom_site tags read, in the order atom_site_table asks for them.
enum AtomSiteTag { kX, kY, kZ, kId, kSymbol, kLabelAtom, kAuthAtom, kLabelComp, kAuthComp, kLabelSeq, kAuthSeq,
                   kInsCode, kLabelAsym, kAuthAsym, kAltId, kOccupancy, kModel };

// The _atom_site loop; one without coordinates is refused.
cif::Table atom_site_table(const std::string& path, cif::Block& block, const std::vector<std::string_view>& lines) {
  cif::Table table =
      block.find("_atom_site.", {"Cartn_x", "?Cartn_y", "?Cartn_z", "?id", "?type_symbol", "?label_atom_id",
                                 "?auth_atom_id", "?label_comp_id", "?auth_comp_id", "?label_seq_id", "?auth_seq_id",
                                 "?pdbx_PDB_ins_code", "?label_asym_id", "?auth_asym_id", "?label_alt_id",
                                 "?occupancy", "?pdbx_PDB_model_num"});
  if (!table.ok() || !table.has_column(kY) || !table.has_column(kZ)) {
    if (block.find_mmcif_category("_atom_site.").ok())
      fail(path, line_of_tag(lines, "_atom_site."),
           "_atom_site has no coordinates (_atom_site.Cartn_x, Cartn_y, Cartn_z): this file describes atoms without "
           "positions; use the coordinate file of the entry");
    fail(path, 0,
         "no _atom_site category: this PDBx/mmCIF file holds no atom coordinates (a dictionary or sequence file?); "
         "use the coordinate file of the entry");
  }
  return table;
}

// Which of the auth_ and label_ tags give the atom name, residue name, residue number and chain.
struct AtomSiteColumns {
  int name = 0, resname = 0, resnum = 0, chain = 0;
  int alt_chain = -1;      // the other asym_id, when both are there: a change of either starts a chain
  bool has_chain = false;  // without auth_ or label_asym_id: one chain
  int line = 0;            // of the category's first tag
};

AtomSiteColumns atom_site_columns(const std::string& path, cif::Table& table,
                                  const std::vector<std::string_view>& lines) {
  AtomSiteColumns c;
  c.name = table.first_of(kAuthAtom, kLabelAtom);
  c.resname = table.first_of(kAuthComp, kLabelComp);
  c.resnum = table.first_of(kAuthSeq, kLabelSeq);
  c.chain = table.first_of(kAuthAsym, kLabelAsym);
  c.alt_chain = table.has_column(kAuthAsym) && table.has_column(kLabelAsym) ? kLabelAsym : -1;
  c.line = line_of_tag(lines, "_atom_site.");
  c.has_chain = table.has_column(c.chain);
  if (!table.has_column(c.name))
    fail(path, c.line, "_atom_site has neither auth_atom_id nor label_atom_id (atom names)");
  if (!table.has_column(c.resname))
    fail(path, c.line, "_atom_site has neither auth_comp_id nor label_comp_id (residue names)");
  if (!table.has_column(kSymbol))
    fail(path, c.line, "_atom_site has no type_symbol (elements); add the element of each atom");

  // OpenMM's choice of chain identifiers: label_asym_id when it distinguishes more chains.
  if (c.alt_chain >= 0) {
    std::set<std::string> ids, alt_ids;
    for (std::size_t r = 0; r < table.length(); ++r) {
      ids.insert(table[static_cast<int>(r)][static_cast<std::size_t>(c.chain)]);
      alt_ids.insert(table[static_cast<int>(r)][static_cast<std::size_t>(c.alt_chain)]);
    }
    if (alt_ids.size() > ids.size()) std::swap(c.chain, c.alt_chain);
  }
  return c;
}

// (label_seq_id, label_asym_id, label_comp_id, label_atom_id) -> input atoms.
using LabelIndex = std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<int>>;

// The first model's _atom_site rows as chains, residues and atoms, as OpenMM's PDBxFile groups them.
class AtomSiteReader {
 public:
  AtomSiteReader(const std::string& path, cif::Table& table, const AtomSiteColumns& columns)
      : path_(path), table_(table), columns_(columns) {}

  void read_row(std::size_t r, int line) {
    const cif::Table::Row row = table_[static_cast<int>(r)];
    if (row.has(kModel)) {
      const std::string model = row[kModel];
      if (r == 0) first_model = model;
      models.insert(model);
      if (model != first_model) return;
    }
    const Keys keys = keys_of(row);
    start_chain_or_residue(row, keys);
    check_duplicate(keys, line);
    AtomIn a = atom_of(row, keys, line);
    input_of_label[{row.has(kLabelSeq) ? row[kLabelSeq] : keys.resnum,
                    row.has(kLabelAsym) ? row[kLabelAsym] : keys.chain_raw,
                    cif::as_string(row.has(kLabelComp) ? row[kLabelComp] : row[col(columns_.resname)]),
                    row.has(kLabelAtom) ? cif::as_string(row[kLabelAtom]) : keys.name}]
        .push_back(a.input);
    in.residue().atoms.push_back(std::move(a));
  }

  StructureIn in;
  std::set<std::string> models;
  std::string first_model;
  // Label identifiers of each input atom, for _struct_conn (the residue name tells apart residues that share
  // the others, as waters do with numbered ones).
  LabelIndex input_of_label;

 private:
  // What places a row in its chain and residue.
  struct Keys {
    std::string chain_raw, chain, alt_chain, resnum, icode, name;
    char altloc = '\0';
  };

  static std::size_t col(int column) { return static_cast<std::size_t>(column); }

  Keys keys_of(const cif::Table::Row& row) const {
    Keys k;
    k.chain_raw = columns_.has_chain ? row[col(columns_.chain)] : std::string();
    k.chain = cif::as_string(k.chain_raw);
    k.alt_chain = columns_.alt_chain >= 0 ? row[col(columns_.alt_chain)] : std::string();
    k.resnum = row.has(col(columns_.resnum)) ? row[col(columns_.resnum)] : std::string(".");
    k.icode = row.has(kInsCode) ? cif::as_string(row[kInsCode]) : std::string();
    k.name = cif::as_string(row[col(columns_.name)]);
    const std::string altloc_text = row.has2(kAltId) ? cif::as_string(row[kAltId]) : std::string();
    k.altloc = altloc_text.empty() ? '\0' : altloc_text.front();
    return k;
  }

  // A new chain where either asym_id changes; a new residue where the number or insertion code changes or, in
  // an unnumbered residue, a name repeats without an alternate location.
  void start_chain_or_residue(const cif::Table::Row& row, const Keys& k) {
    if (!have_chain_ || k.chain != last_chain_ || k.alt_chain != last_alt_chain_) {
      in.start_chain(k.chain);
      last_chain_ = k.chain;
      last_alt_chain_ = k.alt_chain;
      have_chain_ = true;
      have_residue_ = false;
    }
    const bool alternate = k.altloc != '\0' && names_in_residue_.count(k.name) > 0;
    // A name change under one number is another residue (microheterogeneity: altloc sites, build_topology).
    if (!have_residue_ || k.resnum != last_resnum_ || k.icode != last_icode_ ||
        cif::as_string(row[col(columns_.resname)]) != in.residue().name ||
        (cif::is_null(k.resnum) && !alternate && names_in_residue_.count(k.name) > 0)) {
      std::optional<int> number;
      long value = 0;
      if (!cif::is_null(k.resnum) && parse_int(cif::as_string(k.resnum), value)) number = static_cast<int>(value);
      in.start_residue(cif::as_string(row[col(columns_.resname)]), number, k.icode.empty() ? ' ' : k.icode.front());
      last_resnum_ = k.resnum;
      last_icode_ = k.icode;
      have_residue_ = true;
      names_in_residue_.clear();
      line_of_atom_.clear();
    }
    names_in_residue_.insert(k.name);
  }

  void check_duplicate(const Keys& k, int line) {
    if (const auto [seen, fresh] = line_of_atom_.emplace(std::pair{k.name, k.altloc}, line); !fresh) {
      const ResidueIn& residue = in.residue();
      fail(path_, line,
           fmt::format("duplicate atom '{}'{} in residue {} {} (chain '{}'){}; give each atom of a residue its own "
                       "name, or a separate residue its own number",
                       k.name, k.altloc ? fmt::format(" (altloc {})", k.altloc) : std::string(), residue.name,
                       residue.number, in.chain_id(),
                       seen->second > 0 ? fmt::format(": already on line {}", seen->second) : ""));
    }
  }

  // The row's atom: serial, coordinates, occupancy and element.
  AtomIn atom_of(const cif::Table::Row& row, const Keys& k, int line) {
    AtomIn a;
    a.name = k.name;
    a.altloc = k.altloc;
    a.line = line;
    a.input = in.num_input++;
    long serial = 0;
    a.serial = row.has2(kId) && parse_int(cif::as_string(row[kId]), serial) ? static_cast<int>(serial) : a.input + 1;
    double xyz[3];
    static const char* const kAxes[3] = {"Cartn_x", "Cartn_y", "Cartn_z"};
    for (int axis = 0; axis < 3; ++axis) {
      const std::string value = cif::as_string(row[col(axis)]);
      if (!parse_number(value, xyz[axis]))
        fail(path_, line,
             fmt::format("_atom_site.{} of atom '{}' (id {}) is '{}', not a number; each atom needs coordinates",
                         kAxes[axis], k.name, a.serial, row[col(axis)]));
    }
    a.position_angstrom = Vec3d(xyz[0], xyz[1], xyz[2]);
    double occupancy = 1.0;
    if (row.has2(kOccupancy) && parse_number(cif::as_string(row[kOccupancy]), occupancy)) a.occupancy = occupancy;
    const Element* element = find_element(cif::as_string(row[kSymbol]));
    if (element == nullptr) {
      const ResidueIn& residue = in.residue();
      fail(path_, line,
           fmt::format("unknown element '{}' (_atom_site.type_symbol) of atom '{}' in residue {} {} (chain '{}'); "
                       "write the element symbol (C, N, O, Na, ...)",
                       row[kSymbol], k.name, residue.name, residue.number, in.chain_id()));
    }
    a.element = element->symbol;
    check_coordinates(path_, a);
    return a;
  }

  const std::string& path_;
  cif::Table& table_;
  const AtomSiteColumns& columns_;
  std::string last_chain_, last_alt_chain_, last_resnum_, last_icode_;
  bool have_chain_ = false, have_residue_ = false;
  std::set<std::string> names_in_residue_;
  std::map<std::pair<std::string, char>, int> line_of_atom_;  // (name, altloc) in the current residue -> its line
};

// Bonds of _struct_conn (OpenMM's PDBxFile: covale, disulf, modres), by label identifiers (OpenMM looks the
// label_ values up among auth_ ones, which differ in files from the PDB; an identifier several kept atoms share
// is skipped, where OpenMM takes the last).
void add_struct_conn_bonds(cif::Block& block, const LabelIndex& input_of_label, const std::vector<int>& index_of,
                           Topology& top) {
  cif::Table conn = block.find("_struct_conn.", {"conn_type_id", "ptnr1_label_seq_id", "ptnr1_label_asym_id",
                                                 "ptnr1_label_comp_id", "ptnr1_label_atom_id", "ptnr2_label_seq_id",
                                                 "ptnr2_label_asym_id", "ptnr2_label_comp_id", "ptnr2_label_atom_id"});
  for (std::size_t r = 0; conn.ok() && r < conn.length(); ++r) {
    cif::Table::Row row = conn[static_cast<int>(r)];
    const std::string type = cif::as_string(row[0]).substr(0, 6);
    if (type != "covale" && type != "disulf" && type != "modres") continue;
    auto atom = [&](std::size_t base) {
      auto found = input_of_label.find(
          {row[base], row[base + 1], cif::as_string(row[base + 2]), cif::as_string(row[base + 3])});
      if (found == input_of_label.end()) return -1;
      int kept = -1;
      for (int input : found->second) {
        const int index = index_of[static_cast<std::size_t>(input)];
        if (index < 0) continue;
        if (kept >= 0) return -1;  // ambiguous (waters without label_seq_id)
        kept = index;
      }
      return kept;
    };
    const int a = atom(1), b = atom(5);
    if (a >= 0 && b >= 0 && a != b) top.conect.emplace_back(std::min(a, b), std::max(a, b));
  }
  sort_unique(top.conect);
}

// The box of _cell, when all six values are numbers.
void read_cell(const std::string& path, cif::Block& block, const std::vector<std::string_view>& lines,
               StructureFile& out) {
  cif::Table cell = block.find("_cell.", {"length_a", "length_b", "length_c", "angle_alpha", "angle_beta", "angle_gamma"});
  if (cell.ok() && cell.length() > 0) {
    cif::Table::Row row = cell[0];
    double values[6];
    bool all = true;
    for (std::size_t k = 0; k < 6 && all; ++k) all = parse_number(cif::as_string(row[k]), values[k]);
    if (all) set_box(path, line_of_tag(lines, "_cell."), values, out.topology, out.notes, "_cell");
  }
}

StructureFile read_mmcif_structure(const std::string& path, const std::string& text) {
  cif::Document doc = parse_mmcif(path, text);
  if (doc.blocks.empty()) fail(path, 0, "no data block (data_...) in this PDBx/mmCIF file: is it a PDBx/mmCIF file?");
  cif::Block& block = doc.blocks.front();
  const std::vector<std::string_view> lines = split_lines(text);

  cif::Table table = atom_site_table(path, block, lines);
  const AtomSiteColumns columns = atom_site_columns(path, table, lines);
  const std::size_t rows = table.length();
  const std::vector<int> row_lines = loop_row_lines(lines, "_atom_site.", rows);
  AtomSiteReader reader(path, table, columns);
  for (std::size_t r = 0; r < rows; ++r)
    reader.read_row(r, row_lines.empty() ? (r == 0 ? columns.line : 0) : row_lines[r]);

  StructureFile out;
  note_models(out.notes, reader.first_model, reader.models.size());
  const std::vector<int> index_of = build_topology(path, reader.in, out.topology, out.notes);
  add_struct_conn_bonds(block, reader.input_of_label, index_of, out.topology);
  read_cell(path, block, lines, out);
  return out;
}

}  // namespace

bool is_mmcif_path(const std::string& path) {
  const std::string base = without_gz(path);
  return ends_with_ci(base, ".cif") || ends_with_ci(base, ".mmcif");
}

bool is_structure_path(const std::string& path) {
  const std::string base = without_gz(path);
  return is_mmcif_path(path) || ends_with_ci(base, ".pdb") || ends_with_ci(base, ".ent") || ends_with_ci(base, ".pdbx");
}

StructureFile read_structure(const std::string& path) { return read_structure_text(read_bytes(path), path); }

StructureFile read_structure_text(const std::string& text, const std::string& path) {
  const std::string base = without_gz(path);
  bool mmcif = is_mmcif_path(path);
  if (!mmcif && !ends_with_ci(base, ".pdb") && !ends_with_ci(base, ".ent")) {
    // Another name: by content, as gemmi does (a CIF file starts with data_ after comments).
    std::size_t i = 0;
    while (i < text.size()) {
      if (std::isspace(static_cast<unsigned char>(text[i]))) {
        ++i;
      } else if (text[i] == '#') {
        while (i < text.size() && text[i] != '\n') ++i;
      } else {
        break;
      }
    }
    mmcif = text.compare(i, 5, "data_") == 0;
  }
  try {
    return mmcif ? read_mmcif_structure(path, text) : read_pdb_structure(path, text);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {  // gemmi's own checks past parsing (a malformed table, an odd value)
    fail(path, 0, fmt::format("cannot read this {} file: {}", mmcif ? "PDBx/mmCIF" : "PDB", one_line(e.what())));
  }
}

Topology read_run_structure(const std::string& path, std::vector<std::string>* notes) {
  if (!is_mmcif_path(path) && !ends_with_ci(path, ".gz")) return read_pdb(path);
  StructureFile file = read_structure(path);
  if (notes) notes->insert(notes->end(), file.notes.begin(), file.notes.end());
  return std::move(file.topology);
}

}  // namespace mdsim
