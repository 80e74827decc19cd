#include "io/atom_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>

#include "common/errors.hpp"

namespace mdsim {

namespace {

constexpr std::array<std::string_view, 20> kStandardAminoAcids = {
    "ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE",
    "LEU", "LYS", "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL"};

constexpr std::array<std::string_view, 24> kProteinVariants = {
    "HID", "HIE", "HIP", "HSD", "HSE", "HSP", "CYX", "CYM", "ASH", "GLH", "LYN", "MSE",
    "SEC", "PYL", "HYP", "ORN", "ACE", "NME", "NMA", "NHE", "NH2", "UNK", "DAL", "GLX"};


template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

enum class Tok { Word, Number, Dash, Comma, LParen, RParen, End };

struct Token {
  Tok kind;
  std::string text;      // lower-cased word, digits
  std::int64_t value = 0;
  std::size_t column = 0;  // 1-based position in the selection string
};

class Parser {
 public:
  Parser(const Topology& topology, std::string_view text, const std::string& where)
      : topology_(topology), text_(text), where_(where) {
    tokenize();
  }

  std::vector<char> parse() {
    std::vector<char> mask = parse_or();
    if (peek().kind != Tok::End) fail(peek(), "expected 'and', 'or' or the end of the selection");
    return mask;
  }

 private:
  [[noreturn]] void fail(const Token& at, const std::string& what) const {
    const std::string found = at.kind == Tok::End ? std::string("the end") : fmt::format("'{}'", token_text(at));
    throw InputError(fmt::format("{}: invalid atom selection \"{}\": {} at character {} (found {}); expected "
                                 "all, protein, backbone, water, heavy, hydrogen, not/and/or, or an index list like "
                                 "\"0-21,30\"",
                                 where_, text_, what, at.column, found));
  }

  std::string token_text(const Token& t) const {
    switch (t.kind) {
      case Tok::Word:
      case Tok::Number: return t.text;
      case Tok::Dash: return "-";
      case Tok::Comma: return ",";
      case Tok::LParen: return "(";
      case Tok::RParen: return ")";
      case Tok::End: return "";
    }
    return "";
  }

  void tokenize() {
    std::size_t i = 0;
    while (i < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[i]);
      if (std::isspace(c)) {
        ++i;
        continue;
      }
      Token t{Tok::End, "", 0, i + 1};
      if (std::isdigit(c)) {
        std::size_t j = i;
        while (j < text_.size() && std::isdigit(static_cast<unsigned char>(text_[j]))) ++j;
        t.kind = Tok::Number;
        t.text = std::string(text_.substr(i, j - i));
        const auto [ptr, ec] = std::from_chars(text_.data() + i, text_.data() + j, t.value);
        if (ec != std::errc() || ptr != text_.data() + j)
          t.value = std::numeric_limits<std::int64_t>::max();  // reported as out of range later
        i = j;
      } else if (std::isalpha(c) || c == '_') {
        std::size_t j = i;
        while (j < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_'))
          ++j;
        t.kind = Tok::Word;
        for (std::size_t k = i; k < j; ++k)
          t.text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text_[k]))));
        i = j;
      } else if (c == '-') {
        t.kind = Tok::Dash;
        ++i;
      } else if (c == ',') {
        t.kind = Tok::Comma;
        ++i;
      } else if (c == '(') {
        t.kind = Tok::LParen;
        ++i;
      } else if (c == ')') {
        t.kind = Tok::RParen;
        ++i;
      } else {
        t.kind = Tok::Word;
        t.text = std::string(1, static_cast<char>(c));
        fail(t, "unexpected character");
      }
      tokens_.push_back(std::move(t));
    }
    tokens_.push_back(Token{Tok::End, "", 0, text_.size() + 1});
  }

  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_++]; }
  bool peek_word(std::string_view w) const { return peek().kind == Tok::Word && peek().text == w; }

  std::vector<char> parse_or() {
    std::vector<char> mask = parse_and();
    while (peek_word("or")) {
      next();
      const std::vector<char> rhs = parse_and();
      for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<char>(mask[i] || rhs[i]);
    }
    return mask;
  }

  std::vector<char> parse_and() {
    std::vector<char> mask = parse_unary();
    while (peek_word("and")) {
      next();
      const std::vector<char> rhs = parse_unary();
      for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<char>(mask[i] && rhs[i]);
    }
    return mask;
  }

  std::vector<char> parse_unary() {
    if (peek_word("not")) {
      next();
      std::vector<char> mask = parse_unary();
      for (char& m : mask) m = static_cast<char>(!m);
      return mask;
    }
    if (peek().kind == Tok::LParen) {
      next();
      std::vector<char> mask = parse_or();
      if (peek().kind != Tok::RParen) fail(peek(), "expected ')'");
      next();
      return mask;
    }
    return parse_primary();
  }

  std::vector<char> parse_primary() {
    const std::size_t n = topology_.atoms.size();
    const Token& t = peek();
    if (t.kind == Tok::Number) return parse_index_list();
    if (t.kind != Tok::Word) fail(t, "expected a keyword or an atom index");
    next();
    std::vector<char> mask(n, 0);
    if (t.text == "all") {
      std::fill(mask.begin(), mask.end(), 1);
    } else if (t.text == "none") {
      // all zero
    } else if (t.text == "protein" || t.text == "water") {
      const bool protein = t.text == "protein";
      for (std::size_t i = 0; i < n; ++i) {
        const int r = topology_.atoms[i].residue;
        if (r < 0 || r >= static_cast<int>(topology_.residues.size())) continue;
        const std::string& name = topology_.residues[static_cast<std::size_t>(r)].name;
        mask[i] = static_cast<char>(protein ? is_protein_residue_name(name) : is_water_residue_name(name));
      }
    } else if (t.text == "backbone") {
      for (std::size_t i = 0; i < n; ++i) {
        const TopologyAtom& atom = topology_.atoms[i];
        const int r = atom.residue;
        if (r < 0 || r >= static_cast<int>(topology_.residues.size())) continue;
        const bool name = atom.name == "N" || atom.name == "CA" || atom.name == "C" || atom.name == "O";
        mask[i] = static_cast<char>(name && is_protein_residue_name(topology_.residues[static_cast<std::size_t>(r)].name));
      }
    } else if (t.text == "heavy" || t.text == "hydrogen") {
      const bool heavy = t.text == "heavy";
      for (std::size_t i = 0; i < n; ++i) {
        const std::string& e = topology_.atoms[i].element;
        const bool hydrogen = e == "H" || e == "D";
        mask[i] = static_cast<char>(heavy ? (!hydrogen && !e.empty()) : hydrogen);
      }
    } else {
      fail(t, "unknown keyword");
    }
    return mask;
  }

  std::int64_t index(const Token& t) const {
    const std::int64_t n = static_cast<std::int64_t>(topology_.atoms.size());
    if (t.value < 0 || t.value >= n)
      throw InputError(fmt::format("{}: invalid atom selection \"{}\": atom index {} at character {} is out of "
                                   "range; the system has {} atoms (indices 0-{})",
                                   where_, text_, t.text, t.column, n, n - 1));
    return t.value;
  }

  std::vector<char> parse_index_list() {
    std::vector<char> mask(topology_.atoms.size(), 0);
    for (;;) {
      if (peek().kind != Tok::Number) fail(peek(), "expected an atom index");
      const Token first = next();
      std::int64_t lo = index(first), hi = lo;
      if (peek().kind == Tok::Dash) {
        next();
        if (peek().kind != Tok::Number) fail(peek(), "expected the end of the range");
        const Token last = next();
        hi = index(last);
        if (hi < lo)
          throw InputError(fmt::format("{}: invalid atom selection \"{}\": range {}-{} at character {} ends before "
                                       "it starts",
                                       where_, text_, first.text, last.text, first.column));
      }
      for (std::int64_t i = lo; i <= hi; ++i) mask[static_cast<std::size_t>(i)] = 1;
      if (peek().kind != Tok::Comma) break;
      next();
    }
    return mask;
  }

  const Topology& topology_;
  std::string_view text_;
  const std::string& where_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace

bool is_protein_residue_name(std::string_view name) {
  if (contains(kStandardAminoAcids, name) || contains(kProteinVariants, name)) return true;
  // AMBER's terminal forms: NALA, CALA, NHID, CHIE ...
  if (name.size() == 4 && (name[0] == 'N' || name[0] == 'C')) {
    const std::string_view rest = name.substr(1);
    return contains(kStandardAminoAcids, rest) || contains(kProteinVariants, rest);
  }
  return false;
}


std::vector<int> select_atoms(const Topology& topology, std::string_view selection, const std::string& where) {
  Parser parser(topology, selection, where);
  const std::vector<char> mask = parser.parse();
  std::vector<int> out;
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) out.push_back(static_cast<int>(i));
  if (out.empty())
    throw InputError(fmt::format("{}: atom selection \"{}\" matches none of the {} atoms", where, selection,
                                 topology.atoms.size()));
  return out;
}

Topology subset_topology(const Topology& topology, const std::vector<int>& atom_indices) {
  Topology out;
  out.source = topology.source;
  out.box = topology.box;
  const int n = topology.num_atoms();
  std::vector<int> new_index(static_cast<std::size_t>(n), -1);
  std::map<int, int> new_chain, new_residue;
  int previous = -1;
  for (int a : atom_indices) {
    if (a < 0 || a >= n) throw RuntimeError(fmt::format("subset_topology: atom index {} outside 0..{}", a, n - 1));
    if (a <= previous) throw RuntimeError("subset_topology: atom indices must be sorted and unique");
    previous = a;
    const TopologyAtom& atom = topology.atoms[static_cast<std::size_t>(a)];
    const TopologyResidue& residue = topology.residues.at(static_cast<std::size_t>(atom.residue));
    auto [ci, chain_added] = new_chain.try_emplace(residue.chain, static_cast<int>(out.chains.size()));
    if (chain_added) {
      TopologyChain c;
      c.id = topology.chains.at(static_cast<std::size_t>(residue.chain)).id;
      out.chains.push_back(std::move(c));
    }
    auto [ri, residue_added] = new_residue.try_emplace(atom.residue, static_cast<int>(out.residues.size()));
    if (residue_added) {
      TopologyResidue r = residue;
      r.chain = ci->second;
      r.atoms.clear();
      out.residues.push_back(std::move(r));
      out.chains[static_cast<std::size_t>(ci->second)].residues.push_back(ri->second);
    }
    const int k = static_cast<int>(out.atoms.size());
    new_index[static_cast<std::size_t>(a)] = k;
    TopologyAtom copy = atom;
    copy.residue = ri->second;
    out.atoms.push_back(std::move(copy));
    out.residues[static_cast<std::size_t>(ri->second)].atoms.push_back(k);
    if (static_cast<std::size_t>(a) < topology.positions_nm.size())
      out.positions_nm.push_back(topology.positions_nm[static_cast<std::size_t>(a)]);
  }
  const auto remap = [&](const std::vector<std::pair<int, int>>& pairs, std::vector<std::pair<int, int>>& dest) {
    for (const auto& [i, j] : pairs) {
      if (i < 0 || j < 0 || i >= n || j >= n) continue;
      const int ni = new_index[static_cast<std::size_t>(i)], nj = new_index[static_cast<std::size_t>(j)];
      if (ni >= 0 && nj >= 0) dest.emplace_back(ni, nj);
    }
  };
  remap(topology.bonds, out.bonds);
  remap(topology.conect, out.conect);
  return out;
}

}  // namespace mdsim
