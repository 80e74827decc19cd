#include "io/pdb_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "model/elements.hpp"

namespace mdsim {
namespace {

constexpr double kPi = 3.141592653589793;  // == Python's math.pi

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
char to_upper(char c) { return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Columns [begin, end) (0-based) of a fixed-format line, clipped to the line's length.
std::string_view columns(std::string_view line, std::size_t begin, std::size_t end) {
  if (begin >= line.size()) return {};
  return line.substr(begin, std::min(end, line.size()) - begin);
}

// Python int(s): optional sign, decimal digits, surrounding blanks allowed.
bool parse_decimal(std::string_view s, long& out) {
  s = trim(s);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.size() > 12) return false;
  long value = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    value = value * 10 + (c - '0');
  }
  out = negative ? -value : value;
  return true;
}

// Python int(s, 16) for the unsigned tokens VMD writes.
bool parse_hex(std::string_view s, long& out) {
  s = trim(s);
  if (s.empty() || s.size() > 12) return false;
  long value = 0;
  for (char c : s) {
    int digit;
    if (is_digit(c)) digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return false;
    value = value * 16 + digit;
  }
  out = value;
  return true;
}

// Hybrid-36 beyond the decimal range: `width` characters, first a letter, upper- or lower-case
// base-36 throughout. Upper case starts at 10^width ("A0000" = 100000), lower case follows it.
bool parse_hybrid36(std::string_view s, int width, long& out) {
  s = trim(s);
  if (static_cast<int>(s.size()) != width) return false;
  const bool upper = is_upper(s.front());
  if (!upper && !is_lower(s.front())) return false;
  long value = 0;
  for (char c : s) {
    int digit;
    if (is_digit(c)) digit = c - '0';
    else if (upper && is_upper(c)) digit = c - 'A' + 10;
    else if (!upper && is_lower(c)) digit = c - 'a' + 10;
    else return false;
    value = value * 36 + digit;
  }
  long power36 = 1, power10 = 1;
  for (int i = 0; i < width - 1; ++i) power36 *= 36;
  for (int i = 0; i < width; ++i) power10 *= 10;
  out = value - 10 * power36 + power10 + (upper ? 0 : 26 * power36);
  return true;
}

// Python float(s) for fixed-format numbers (correctly rounded, like Python). Finite values only.
// Coordinates beyond this (10 micrometres) are damaged records, not structures.
constexpr double kMaxCoordinateAngstrom = 1e5;

bool parse_double(std::string_view s, double& out) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}

// A serial-number or resSeq column with a sticky encoding, as OpenMM switches to hexadecimal for
// the rest of the file once a non-decimal token appears (VMD). The first non-decimal token picks
// the encoding: one starting with a letter is hybrid-36 (VMD's hexadecimal passes 99999 as
// "186a0", which starts with a digit, and only reaches a leading letter at 0xa0000), else hex.
class NumberColumn {
 public:
  explicit NumberColumn(int width) : width_(width) {}

  bool decode(std::string_view raw, long& out) {
    if (mode_ == Mode::kHex) return parse_hex(raw, out);
    if (parse_decimal(raw, out)) return true;
    if (mode_ == Mode::kHybrid36) return parse_hybrid36(raw, width_, out);
    const std::string_view token = trim(raw);
    if (token.empty()) return false;
    if ((is_upper(token.front()) || is_lower(token.front())) && parse_hybrid36(token, width_, out)) {
      mode_ = Mode::kHybrid36;
      return true;
    }
    if (parse_hex(token, out)) {
      mode_ = Mode::kHex;
      return true;
    }
    return false;
  }
  void reset() { mode_ = Mode::kDecimal; }

 private:
  enum class Mode { kDecimal, kHex, kHybrid36 };
  int width_;
  Mode mode_ = Mode::kDecimal;
};

enum class ElementState { kKnown, kExtraParticle, kInfer };

// The fields of an ATOM/HETATM record.
struct AtomRecord {
  long raw_serial = 0;  // as written, before unwrapping
  std::string_view atom_name;
  char altloc = ' ';
  std::string_view residue_name;
  char chain_id = ' ';
  std::string_view resseq_text;
  char insertion_code = ' ';
  Vec3d position_angstrom;
  long resseq = 0;
  bool resseq_ok = false;
};

struct PendingConect {
  int line;
  int count;
  long serials[5];
};

class PdbParser {
 public:
  explicit PdbParser(const std::string& path) : path_(path) { top_.source = path; }

  Topology parse() {
    read_file();
    return parse_text();
  }

  Topology parse(std::string text) {
    text_ = std::move(text);
    return parse_text();
  }

 private:
  Topology parse_text() {
    std::string_view rest(text_);
    int line_number = 0;
    while (!rest.empty()) {
      const std::size_t eol = rest.find('\n');
      std::string_view line = rest.substr(0, eol);
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!handle_line(line, line_number)) break;
    }
    if (top_.atoms.empty()) fail(0, 0, "no ATOM or HETATM records found");
    assign_elements();
    resolve_conects();
    return std::move(top_);
  }

  [[noreturn]] void fail(int line, int col, const std::string& message) const {
    throw InputError(located(path_, line, col, message));
  }

  void read_file() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) fail(0, 0, std::string("cannot open PDB file: ") + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) fail(0, 0, "error while reading the PDB file");
    text_ = std::move(buffer).str();
  }

  // Returns false at END (stop reading).
  bool handle_line(std::string_view line, int number) {
    const std::string_view record = columns(line, 0, 6);
    if (record == "ATOM  " || record == "HETATM") {
      if (!first_model_done_) add_atom(line, number);
    } else if (record == "CONECT") {
      add_conect(line, number);
    } else if (record.substr(0, 5) == "MODEL") {
      if (models_seen_ > 0 || !top_.atoms.empty()) first_model_done_ = true;
      ++models_seen_;
      if (!first_model_done_) {
        serial_column_.reset();
        resseq_column_.reset();
      }
    } else if (record == "ENDMDL") {
      if (models_seen_ > 0 || !top_.atoms.empty()) first_model_done_ = true;
    } else if (first_token(line) == "END") {
      return false;
    } else if (first_token(line) == "TER") {
      if (!first_model_done_ && chain_ >= 0) chain_has_ter_ = true;
      resseq_column_.reset();
    } else if (record == "CRYST1") {
      read_cryst1(line, number);
    }
    return true;
  }

  static std::string_view first_token(std::string_view line) {
    std::size_t end = 0;
    while (end < line.size() && !is_blank(line[end])) ++end;
    return line.substr(0, end);
  }

  double coordinate(std::string_view line, int number, std::size_t begin, const char* axis) const {
    double value = 0;
    if (!parse_double(columns(line, begin, begin + 8), value)) {
      fail(number, static_cast<int>(begin) + 1,
           std::string("expected a number for the ") + axis + " coordinate in columns " + std::to_string(begin + 1) +
               "-" + std::to_string(begin + 8) + ", found '" + std::string(columns(line, begin, begin + 8)) + "'");
    }
    // The fixed format holds at most 8 characters (9999.999 Å); far beyond that is a damaged record, and
    // positions that large lose all precision in the force computation.
    if (std::fabs(value) > kMaxCoordinateAngstrom) {
      fail(number, static_cast<int>(begin) + 1,
           std::string("the ") + axis + " coordinate in columns " + std::to_string(begin + 1) + "-" +
               std::to_string(begin + 8) + " is '" + std::string(trim(columns(line, begin, begin + 8))) +
               "' Å, beyond the " + fmt::format("{:g}", kMaxCoordinateAngstrom) +
               " Å (10 µm) a structure's coordinates can reach: a damaged record? Fix it");
    }
    return value;
  }

  void add_atom(std::string_view line, int number) {
    check_atom_record(line, number);
    const AtomRecord record = read_atom_record(line, number);
    const Placement placement = place_atom(record, number);
    if (placement == Placement::kDropped) return;
    if (placement == Placement::kNewResidue) start_residue(record, number);
    residue_atoms_.emplace(record.atom_name, SeenAtom{std::string(1, record.altloc), number});
    append_atom(line, record, number);
  }

  void check_atom_record(std::string_view line, int number) const {
    if (line.size() < 54) {
      fail(number, static_cast<int>(line.size()) + 1,
           "ATOM/HETATM record is " + std::to_string(line.size()) +
               " characters long; expected coordinates in columns 31-54");
    }
    // Fixed columns of ASCII: a byte outside it (a name typed in another encoding, binary damage) is refused
    // rather than carried into names and messages.
    for (std::size_t i = 0; i < line.size(); ++i) {
      const auto c = static_cast<unsigned char>(line[i]);
      if (c >= 0x80 || (c < 0x20 && c != '\t'))
        fail(number, static_cast<int>(i) + 1,
             fmt::format("byte 0x{:02x} in column {} is not ASCII text; PDB records are plain ASCII", c, i + 1));
    }
  }

  // The fields of an ATOM/HETATM record at least 54 characters long.
  AtomRecord read_atom_record(std::string_view line, int number) {
    AtomRecord r;
    // Serial number (columns 7-11); undecodable ones continue the count, as OpenMM does.
    if (!serial_column_.decode(columns(line, 6, 11), r.raw_serial)) r.raw_serial = previous_raw_serial_ + 1;
    if (have_previous_serial_ && r.raw_serial + 50000 < previous_raw_serial_) serial_offset_ += 100000;  // wrapped
    have_previous_serial_ = true;
    previous_raw_serial_ = r.raw_serial;

    r.atom_name = trim(columns(line, 12, 16));
    r.altloc = line[16];
    r.residue_name = trim(columns(line, 17, 20));
    if (line[20] != ' ') {
      if (r.residue_name.size() != 3) {
        fail(number, 18, "misaligned residue name '" + std::string(columns(line, 17, 21)) +
                             "': a 4-character name must fill columns 18-21");
      }
      r.residue_name = columns(line, 17, 21);
    }
    r.chain_id = line[21];
    r.resseq_text = trim(columns(line, 22, 26));
    r.insertion_code = line[26];
    const Vec3d position_angstrom(coordinate(line, number, 30, "x"), coordinate(line, number, 38, "y"),
                                  coordinate(line, number, 46, "z"));
    r.position_angstrom = position_angstrom;
    r.resseq_ok = resseq_column_.decode(columns(line, 22, 26), r.resseq);
    return r;
  }

  enum class Placement { kSameResidue, kNewResidue, kDropped };

  // Where the atom goes. Chain: new when the ID changes or after TER (starting a chain here).
  Placement place_atom(const AtomRecord& r, int number) {
    if (chain_ < 0 || chain_has_ter_ || top_.chains[chain_].id[0] != r.chain_id) {
      chain_ = static_cast<int>(top_.chains.size());
      top_.chains.push_back(TopologyChain{std::string(1, r.chain_id), {}});
      chain_has_ter_ = false;
      return Placement::kNewResidue;
    }
    if (r.resseq_text != residue_resseq_ || r.insertion_code != residue_icode_ ||
        (r.residue_name != residue_name_ && r.altloc == ' ')) {
      return Placement::kNewResidue;
    }
    if (r.residue_name != residue_name_) return Placement::kDropped;  // other residue of a point-mutation alternate
    auto found = residue_atoms_.find(r.atom_name);
    if (found == residue_atoms_.end()) return Placement::kSameResidue;
    if (found->second.altlocs.find(r.altloc) == std::string::npos) {
      found->second.altlocs.push_back(r.altloc);  // another alternate location of a kept atom
      return Placement::kDropped;
    }
    // The same name again: in unnumbered residues (e.g. waters) the next residue; in a numbered
    // one two atoms with one name, which no template can match.
    if (r.resseq_ok) {
      const TopologyResidue& residue = top_.residues.back();
      fail(number, 13,
           "duplicate atom name '" + std::string(r.atom_name) + "' in residue " + residue.name + " " +
               std::to_string(residue.number) + " (chain '" + top_.chains[chain_].id + "'): already on line " +
               std::to_string(found->second.line) +
               "; give each atom of a residue its own name, or give a separate residue its own number");
    }
    return Placement::kNewResidue;
  }

  void start_residue(const AtomRecord& r, int number) {
    const int number_as_read = r.resseq_ok ? static_cast<int>(r.resseq) : last_resseq_ + 1;
    TopologyResidue residue;
    residue.name = std::string(r.residue_name);
    residue.chain = chain_;
    residue.number = number_as_read;
    residue.insertion_code = r.insertion_code;
    residue.line = number;
    top_.chains[chain_].residues.push_back(static_cast<int>(top_.residues.size()));
    top_.residues.push_back(std::move(residue));
    residue_resseq_ = r.resseq_text;
    residue_icode_ = r.insertion_code;
    residue_name_ = r.residue_name;
    residue_atoms_.clear();
    last_resseq_ = number_as_read;
  }

  // The atom in the current residue; its element from columns 77-78 when they name one.
  void append_atom(std::string_view line, const AtomRecord& r, int number) {
    const int residue_index = static_cast<int>(top_.residues.size()) - 1;
    const int atom_index = static_cast<int>(top_.atoms.size());
    TopologyAtom atom;
    atom.name = std::string(r.atom_name);
    atom.residue = residue_index;
    atom.serial = static_cast<int>(r.raw_serial + serial_offset_);
    atom.line = number;
    const std::string_view element_text = trim(columns(line, 76, 78));
    ElementState state = ElementState::kInfer;
    if (element_text == "EP") {
      state = ElementState::kExtraParticle;
    } else if (const Element* element = find_element(element_text)) {
      atom.element = element->symbol;
      state = ElementState::kKnown;
    }
    top_.residues[residue_index].atoms.push_back(atom_index);
    top_.atoms.push_back(std::move(atom));
    element_state_.push_back(state);
    element_text_.push_back(element_text);
    raw_serials_.emplace_back(r.raw_serial, atom_index);
    top_.positions_nm.push_back(r.position_angstrom * 0.1);
  }

  void add_conect(std::string_view line, int number) {
    PendingConect conect{number, 0, {}};
    for (std::size_t begin = 6; begin < 31; begin += 5) {
      const std::string_view text = columns(line, begin, begin + 5);
      long serial = 0;
      if (begin > 6 && trim(text).empty()) continue;
      if (!serial_column_.decode(text, serial)) {
        fail(number, static_cast<int>(begin) + 1,
             "expected an atom serial number in columns " + std::to_string(begin + 1) + "-" +
                 std::to_string(begin + 5) + " of the CONECT record, found '" + std::string(text) + "'");
      }
      conect.serials[conect.count++] = serial;
    }
    conects_.push_back(conect);
  }

  void read_cryst1(std::string_view line, int number) {
    static constexpr struct {
      std::size_t begin, end;
      const char* what;
    } kFields[6] = {{6, 15, "a"}, {15, 24, "b"}, {24, 33, "c"}, {33, 40, "alpha"}, {40, 47, "beta"}, {47, 54, "gamma"}};
    double v[6];
    for (int i = 0; i < 6; ++i) {
      if (!parse_double(columns(line, kFields[i].begin, kFields[i].end), v[i])) {
        fail(number, static_cast<int>(kFields[i].begin) + 1,
             std::string("expected a number for the unit cell ") + kFields[i].what + " in columns " +
                 std::to_string(kFields[i].begin + 1) + "-" + std::to_string(kFields[i].end) + " of CRYST1, found '" +
                 std::string(columns(line, kFields[i].begin, kFields[i].end)) + "'");
      }
    }
    std::string problem;
    int field = -1;
    const std::optional<Boxd> box = reduced_box_from_cell(v, problem, field);
    if (!box) {
      const int column = field >= 0 ? static_cast<int>(kFields[field].begin) + 1 : problem == kCellInvalidAngles ? 34 : 7;
      fail(number, column, "CRYST1 " + problem);
    }
    top_.box = *box;
  }

  // OpenMM's element guess from the atom name (PDBFile.__init__), for blank/unknown columns.
  const Element* infer_element(const TopologyAtom& atom, const TopologyResidue& residue, bool& drude) const {
    std::string upper;
    upper.reserve(atom.name.size());
    for (char ch : atom.name) upper.push_back(to_upper(ch));
    std::size_t start = 0;
    while (upper.size() - start > 1 && is_digit(upper[start])) ++start;
    const std::string_view u = std::string_view(upper).substr(start);
    auto starts = [&](std::string_view prefix) { return u.substr(0, prefix.size()) == prefix; };
    if (starts("CL")) return find_element("Cl");
    if (starts("NA")) return find_element("Na");
    if (starts("MG")) return find_element("Mg");
    if (starts("BE")) return find_element("Be");
    if (starts("LI")) return find_element("Li");
    if (starts("K")) return find_element("K");
    if (starts("ZN")) return find_element("Zn");
    if (residue.atoms.size() == 1 && starts("CA")) return find_element("Ca");
    if (starts("D") && !atom.name.empty()) {
      const std::string_view parent = std::string_view(atom.name).substr(1);
      for (int other : residue.atoms) {
        if (top_.atoms[other].name == parent) {
          drude = true;  // a Drude particle: OpenMM leaves its element unset
          return nullptr;
        }
      }
    }
    if (u.empty()) return nullptr;
    return find_element(u.substr(0, 1));
  }

  void assign_elements() {
    for (std::size_t i = 0; i < top_.atoms.size(); ++i) {
      if (element_state_[i] != ElementState::kInfer) continue;
      TopologyAtom& atom = top_.atoms[i];
      const TopologyResidue& residue = top_.residues[atom.residue];
      bool drude = false;
      const Element* element = infer_element(atom, residue, drude);
      if (element == nullptr) {
        const std::string column_text =
            element_text_[i].empty() ? std::string("blank") : fmt::format("'{}' (unknown)", element_text_[i]);
        fail(atom.line, drude ? 13 : 77,
             "cannot determine the element of atom '" + atom.name + "' in residue " + residue.name + " " +
                 std::to_string(residue.number) + " (chain '" + top_.chains[residue.chain].id + "'): element column 77-78 is " +
                 column_text + (drude ? " and the name marks a Drude particle, which is not supported"
                                      : " and the atom name does not start with an element symbol"));
      }
      atom.element = element->symbol;
    }
  }

  // Residues whose bonds OpenMM-style writers leave out of CONECT: water and standard polymers.
  static bool is_standard_residue(std::string_view name) {
    static constexpr std::string_view kNames[] = {"HOH", "ALA", "ASN", "CYS", "GLU", "HIS", "LEU", "MET", "PRO",
                                                  "THR", "TYR", "ARG", "ASP", "GLN", "GLY", "ILE", "LYS", "PHE",
                                                  "SER", "TRP", "VAL", "A",   "G",   "C",   "U",   "I",   "DA",
                                                  "DG",  "DC",  "DT",  "DI"};
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
  }

  // CONECT serials refer to atoms by serial number. Where serials are unique (the usual case, and
  // always with hybrid-36 or hexadecimal) that is a plain look-up. Where a wrapped file repeats a
  // serial, the record's first atom is chosen among the candidates in a hetero residue (CONECT
  // lists bonds of ligands, not of water or standard polymers) if there are any, taking the first
  // at or after the previous record's atom (records come in file order); each bonded partner is
  // the candidate nearest to the first atom (bonds are local in the file).
  void resolve_conects() {
    std::sort(raw_serials_.begin(), raw_serials_.end());
    auto candidates = [&](long serial) {
      return std::equal_range(raw_serials_.begin(), raw_serials_.end(), std::make_pair(serial, -1),
                              [](const std::pair<long, int>& x, const std::pair<long, int>& y) { return x.first < y.first; });
    };
    int cursor = 0;
    std::vector<int> choices;
    std::vector<std::pair<int, int>> pairs;
    for (const PendingConect& conect : conects_) {
      auto [first_begin, first_end] = candidates(conect.serials[0]);
      if (first_begin == first_end) continue;  // not an atom we kept (another model, altloc): ignored like OpenMM
      int atom = first_begin->second;
      if (std::next(first_begin) != first_end) {
        choices.clear();
        for (auto it = first_begin; it != first_end; ++it) {
          const TopologyAtom& a = top_.atoms[static_cast<std::size_t>(it->second)];
          if (!is_standard_residue(top_.residues[static_cast<std::size_t>(a.residue)].name)) choices.push_back(it->second);
        }
        if (choices.empty()) {
          for (auto it = first_begin; it != first_end; ++it) choices.push_back(it->second);
        }
        auto at = std::lower_bound(choices.begin(), choices.end(), cursor);
        atom = at != choices.end() ? *at : choices.back();
      }
      cursor = atom;
      for (int k = 1; k < conect.count; ++k) {
        auto [begin, end] = candidates(conect.serials[k]);
        if (begin == end) continue;
        int partner = begin->second;
        for (auto it = begin; it != end; ++it) {
          if (std::abs(it->second - atom) < std::abs(partner - atom)) partner = it->second;
        }
        if (partner != atom) pairs.emplace_back(std::min(atom, partner), std::max(atom, partner));
      }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    top_.conect = std::move(pairs);
  }

  std::string path_;
  std::string text_;
  Topology top_;

  bool first_model_done_ = false;
  int models_seen_ = 0;
  NumberColumn serial_column_{5};
  NumberColumn resseq_column_{4};
  bool have_previous_serial_ = false;
  long previous_raw_serial_ = 0;
  long serial_offset_ = 0;

  int chain_ = -1;
  bool chain_has_ter_ = false;
  std::string_view residue_resseq_;
  char residue_icode_ = ' ';
  std::string_view residue_name_;
  int last_resseq_ = 0;
  struct SeenAtom {
    std::string altlocs;  // alternate locations seen
    int line = 0;         // where the name first appeared
  };
  std::unordered_map<std::string_view, SeenAtom> residue_atoms_;  // by atom name, in the current residue

  std::vector<ElementState> element_state_;
  std::vector<std::string_view> element_text_;
  std::vector<std::pair<long, int>> raw_serials_;  // (serial as written, atom index)
  std::vector<PendingConect> conects_;
};

}  // namespace

const char* const kCellInvalidAngles = "cell angles do not describe a valid unit cell";

std::optional<Boxd> reduced_box_from_cell(const double cell[6], std::string& problem, int& field) {
  field = -1;
  for (int i = 0; i < 3; ++i) {
    if (!(cell[i] > 0)) {
      field = i;
      problem = "cell lengths must be positive";
      return std::nullopt;
    }
  }
  for (int i = 3; i < 6; ++i) {
    if (!(cell[i] > 0 && cell[i] < 180)) {
      field = i;
      problem = "cell angles must lie between 0 and 180 degrees";
      return std::nullopt;
    }
  }
  // OpenMM's computePeriodicBoxVectors, operation for operation (same rounding).
  const double a_len = cell[0] * 0.1, b_len = cell[1] * 0.1, c_len = cell[2] * 0.1;
  const double alpha = cell[3] * kPi / 180.0, beta = cell[4] * kPi / 180.0, gamma = cell[5] * kPi / 180.0;
  Vec3d a(a_len, 0.0, 0.0);
  Vec3d b(b_len * std::cos(gamma), b_len * std::sin(gamma), 0.0);
  const double cx = c_len * std::cos(beta);
  const double cy = c_len * (std::cos(alpha) - std::cos(beta) * std::cos(gamma)) / std::sin(gamma);
  const double cz2 = c_len * c_len - cx * cx - cy * cy;
  if (!(cz2 > 0)) {
    problem = kCellInvalidAngles;
    return std::nullopt;
  }
  Vec3d c(cx, cy, std::sqrt(cz2));
  for (Vec3d* vec : {&a, &b, &c}) {
    for (int k = 0; k < 3; ++k) {
      if (std::fabs((*vec)[k]) < 1e-6) (*vec)[k] = 0.0;
    }
  }
  if (!(a.x > 0 && b.y > 0 && c.z > 0)) {
    problem = "describes a degenerate unit cell";
    return std::nullopt;
  }
  // Reduced form; Python's round() rounds halves to even, as nearbyint does by default.
  c = c - b * std::nearbyint(c.y / b.y);
  c = c - a * std::nearbyint(c.x / a.x);
  b = b - a * std::nearbyint(b.x / a.x);
  return Boxd{a, b, c};
}

Topology read_pdb(const std::string& path) { return PdbParser(path).parse(); }

Topology read_pdb_text(std::string text, const std::string& source) { return PdbParser(source).parse(std::move(text)); }

}  // namespace mdsim
