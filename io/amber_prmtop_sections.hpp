// The %FLAG sections of an AMBER prmtop (the "new" format of tleap and ParmEd since AMBER 7): each flag's items as
// its %FORMAT's fixed-width fields (10I8, 5E16.8, 20a4, ...), with the line each came from, and typed access that
// checks counts against POINTERS and names the flag and line in every error. Used by io/amber_prmtop.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mdsim::amber {

struct Section {
  std::string flag;
  int flag_line = 0;  // 1-based line of %FLAG
  int width = 0;      // the %FORMAT's field width
  std::vector<std::string> items;  // fields, blanks trimmed
  std::vector<int> item_line;      // the line of each item
};

class PrmtopSections {
 public:
  // Parses the text; InputError for an old-style prmtop (no %FLAG lines), a %FORMAT that is not understood, or
  // data before the first %FLAG.
  PrmtopSections(const std::string& text, std::string source);

  const std::string& source() const { return source_; }
  const Section* find(const std::string& flag) const;
  // The section; InputError naming it when the file has none.
  const Section& require(const std::string& flag) const;
  // Its items as numbers; `expected` >= 0: exactly that many, else InputError quoting `what_expected`.
  std::vector<long> ints(const std::string& flag, long expected, const std::string& what_expected) const;
  std::vector<double> reals(const std::string& flag, long expected, const std::string& what_expected) const;
  std::vector<std::string> strings(const std::string& flag, long expected, const std::string& what_expected) const;
  // "file:line: %FLAG NAME: message", at item `item` of the section (its %FLAG line when item < 0).
  [[noreturn]] void fail(const Section& s, long item, const std::string& message) const;
  int last_line() const { return last_line_; }

 private:
  void check_count(const Section& s, long expected, const std::string& what_expected) const;
  std::string source_;
  std::map<std::string, Section> sections_;
  int last_line_ = 0;
};

}  // namespace mdsim::amber
