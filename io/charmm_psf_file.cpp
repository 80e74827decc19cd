// parse_psf: a CHARMM PSF file's sections (io/charmm_psf_file.hpp). A section is a header line "<pointers> !TITLE"
// followed by its data lines up to a blank line (the NNB section has one spurious blank line first).
#include "io/charmm_psf_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "common/errors.hpp"
#include "io/text_input.hpp"

namespace mdsim::charmm {
namespace {

struct Section {
  std::string title;          // upper case, without the ": description" part
  std::vector<long> pointers;
  int line = 0;               // the header's line
  std::vector<std::pair<int, std::string>> data;  // (line, text)
};

[[noreturn]] void fail(const std::string& source, int line, const std::string& message) {
  throw InputError(located(source, line, 0, message));
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r") == std::string::npos; }

long parse_long(const std::string& source, int line, const std::string& w, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(w.c_str(), &end, 10);
  if (end == w.c_str() || *end != '\0' || errno == ERANGE)
    fail(source, line, fmt::format("expected {} (an integer), found '{}'", what, w));
  return v;
}

double parse_double(const std::string& source, int line, const std::string& w, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  if (end == w.c_str() || *end != '\0' || !std::isfinite(v))
    fail(source, line, fmt::format("expected {} (a number), found '{}'", what, w));
  return v;
}

Section read_header(const std::string& source, int number, const std::string& text) {
  Section s;
  s.line = number;
  const auto bang = text.find('!');
  if (bang == std::string::npos)
    fail(source, number, fmt::format("expected a section header ('<count> !NAME'), found '{}'", text));
  s.title = text.substr(bang + 1);
  if (const auto colon = s.title.find(':'); colon != std::string::npos) s.title.erase(colon);
  while (!s.title.empty() && std::isspace(static_cast<unsigned char>(s.title.back()))) s.title.pop_back();
  for (char& c : s.title) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& w : split_words(text.substr(0, bang)))
    s.pointers.push_back(parse_long(source, number, w, "the section's count"));
  if (s.pointers.empty()) fail(source, number, fmt::format("the !{} header has no count", s.title));
  return s;
}

std::map<std::string, Section> read_sections(const std::vector<std::string>& lines, const std::string& source) {
  std::map<std::string, Section> out;
  std::size_t i = 1;
  while (true) {
    while (i < lines.size() && blank(lines[i])) ++i;
    if (i == lines.size()) break;
    Section s = read_header(source, static_cast<int>(i + 1), lines[i]);
    ++i;
    if (s.title == "NNB" && i < lines.size() && blank(lines[i])) ++i;
    for (; i < lines.size() && !blank(lines[i]); ++i) s.data.emplace_back(static_cast<int>(i + 1), lines[i]);
    const std::string title = s.title;
    out[title] = std::move(s);
  }
  return out;
}

const Section& require(const std::map<std::string, Section>& sections, const std::string& source, const char* title) {
  const auto it = sections.find(title);
  if (it == sections.end()) fail(source, 0, fmt::format("the PSF has no !{} section", title));
  return it->second;
}

void read_atoms(const Section& s, const std::string& source, PsfFile& psf) {
  const long natom = s.pointers[0];
  if (natom <= 0 || natom > 2147483647L) fail(source, s.line, fmt::format("!NATOM {} is not a count from 1 to 2^31 - 1", natom));
  if (static_cast<long>(s.data.size()) != natom)
    fail(source, s.line, fmt::format("!NATOM says {} atoms, but the section has {} lines", natom, s.data.size()));
  for (const auto& [line, text] : s.data) {
    const std::vector<std::string> w = split_words(text);
    if (w.size() < 8)
      fail(source, line, fmt::format("expected an atom (number segment resid resname name type charge mass ...), "
                                     "found {} fields",
                                     w.size()));
    PsfAtom a;
    a.segment = w[1], a.resid = w[2], a.resname = w[3], a.name = w[4], a.type = w[5];
    a.charge_e = parse_double(source, line, w[6], "the charge (e)");
    a.mass_amu = parse_double(source, line, w[7], "the mass (amu)");
    if (a.mass_amu < 0) fail(source, line, fmt::format("the mass {} is negative", w[7]));
    a.line = line;
    psf.atoms.push_back(std::move(a));
  }
}

// The integers of a section, each with its line.
std::vector<std::pair<int, long>> section_integers(const Section& s, const std::string& source) {
  std::vector<std::pair<int, long>> out;
  for (const auto& [line, text] : s.data)
    for (const std::string& w : split_words(text)) out.emplace_back(line, parse_long(source, line, w, "an atom index"));
  return out;
}

template <std::size_t N>
void read_list(const std::map<std::string, Section>& sections, const std::string& source, const char* title,
               bool required, PsfList<N>& out, long natom) {
  const auto it = sections.find(title);
  if (it == sections.end()) {
    if (required) fail(source, 0, fmt::format("the PSF has no !{} section", title));
    return;
  }
  const Section& s = it->second;
  const long count = s.pointers[0];
  const std::vector<std::pair<int, long>> v = section_integers(s, source);
  if (count < 0 || static_cast<long>(v.size()) != count * static_cast<long>(N))
    fail(source, s.line, fmt::format("!{} says {} entries of {} atoms, but the section has {} indices", title, count, N,
                                     v.size()));
  for (std::size_t e = 0; e < v.size(); e += N) {
    std::array<int, N> atoms{};
    for (std::size_t k = 0; k < N; ++k) {
      const auto [line, index] = v[e + k];
      if (index < 1 || index > natom)
        fail(source, line, fmt::format("!{} entry {}: atom {} is out of range (1 to {})", title, e / N + 1, index, natom));
      atoms[k] = static_cast<int>(index - 1);
    }
    out.atoms.push_back(atoms);
    out.line.push_back(v[e].first);
  }
}

PsfLonePair read_lone_pair_line(const std::string& source, int line, const std::string& text) {
  const std::vector<std::string> w = split_words(text);
  if (w.size() != 6 || (w[2] != "F" && w[2] != "f"))
    fail(source, line, "expected a lone pair (host count, pointer, F, distance, angle, dihedral)");
  PsfLonePair lp;
  const long hosts = parse_long(source, line, w[0], "the lone pair's host count");
  if (hosts != 2 && hosts != 3)
    fail(source, line, fmt::format("a lone pair with {} hosts: only 2 (colinear) and 3 (relative, bisector) are "
                                   "supported",
                                   hosts));
  lp.hosts.resize(static_cast<std::size_t>(hosts));
  lp.distance_a = parse_double(source, line, w[3], "the lone pair's distance (A)");
  lp.angle_deg = parse_double(source, line, w[4], "the lone pair's angle (degrees)");
  lp.dihedral_deg = parse_double(source, line, w[5], "the lone pair's dihedral (degrees)");
  lp.line = line;
  return lp;
}

void read_lone_pairs(const std::map<std::string, Section>& sections, const std::string& source, PsfFile& psf) {
  const auto it = sections.find("NUMLP NUMLPH");
  if (it == sections.end() || it->second.pointers[0] == 0) return;
  const Section& s = it->second;
  const long numlp = s.pointers[0];
  if (numlp < 0 || static_cast<long>(s.data.size()) < numlp)
    fail(source, s.line, fmt::format("!NUMLP says {} lone pairs, but the section has {} lines", numlp, s.data.size()));
  for (long k = 0; k < numlp; ++k)
    psf.lone_pairs.push_back(
        read_lone_pair_line(source, s.data[static_cast<std::size_t>(k)].first, s.data[static_cast<std::size_t>(k)].second));
  std::vector<std::pair<int, long>> v;
  for (std::size_t k = static_cast<std::size_t>(numlp); k < s.data.size(); ++k)
    for (const std::string& w : split_words(s.data[k].second))
      v.emplace_back(s.data[k].first, parse_long(source, s.data[k].first, w, "an atom index"));
  std::size_t next = 0;
  const long natom = static_cast<long>(psf.atoms.size());
  for (PsfLonePair& lp : psf.lone_pairs) {
    if (next + lp.hosts.size() + 1 > v.size())
      fail(source, s.line, "the lone pairs' atom list is shorter than their host counts say");
    std::vector<int> atoms;
    for (std::size_t k = 0; k <= lp.hosts.size(); ++k, ++next) {
      if (v[next].second < 1 || v[next].second > natom)
        fail(source, v[next].first, fmt::format("lone pair atom {} is out of range (1 to {})", v[next].second, natom));
      atoms.push_back(static_cast<int>(v[next].second - 1));
    }
    lp.site = atoms[0];
    for (std::size_t k = 0; k < lp.hosts.size(); ++k) lp.hosts[k] = atoms[k + 1];
  }
}

void check_supported(const PsfFile& psf, const std::map<std::string, Section>& sections) {
  for (const std::string& f : psf.flags)
    if (f == "DRUDE")
      fail(psf.source, 1, "Drude polarisable PSFs are not supported (the DRUDE flag): use an additive force field");
  if (const auto it = sections.find("NNB"); it != sections.end() && it->second.pointers[0] != 0)
    fail(psf.source, it->second.line,
         fmt::format("{} explicit non-bonded exclusions (!NNB): not supported (OpenMM ignores them; CHARMM-GUI writes "
                     "none)",
                     it->second.pointers[0]));
}

}  // namespace

PsfFile parse_psf(const std::string& text, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(std::move(l));
  }
  if (lines.empty() || lines[0].rfind("PSF", 0) != 0)
    fail(source, 1, "not a PSF file: the first line must start with 'PSF' (as CHARMM, CHARMM-GUI and VMD write it)");
  PsfFile psf;
  psf.source = source;
  const std::vector<std::string> first = split_words(lines[0]);
  psf.flags.assign(first.begin() + 1, first.end());
  const std::map<std::string, Section> sections = read_sections(lines, source);
  check_supported(psf, sections);
  read_atoms(require(sections, source, "NATOM"), source, psf);
  const long natom = static_cast<long>(psf.atoms.size());
  read_list(sections, source, "NBOND", true, psf.bonds, natom);
  read_list(sections, source, "NTHETA", true, psf.angles, natom);
  read_list(sections, source, "NPHI", true, psf.dihedrals, natom);
  read_list(sections, source, "NIMPHI", true, psf.impropers, natom);
  read_list(sections, source, "NCRTERM", false, psf.cmaps, natom);
  read_lone_pairs(sections, source, psf);
  return psf;
}

}  // namespace mdsim::charmm
