#include "io/amber_prmtop_sections.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "common/errors.hpp"

namespace mdsim::amber {
namespace {

std::string trimmed(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string rstripped(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// The field width of a Fortran edit descriptor list such as "10I8", "5E16.8", "20a4", "a80" (OpenMM reads the
// first descriptor's width too); 0 when there is none.
int format_width(const std::string& format) {
  std::size_t i = 0;
  while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) ++i;
  if (i < format.size() && format[i] == '(') ++i;
  const std::size_t letters = i;
  while (i < format.size() && std::isalpha(static_cast<unsigned char>(format[i]))) ++i;
  if (i == letters) return 0;
  int width = 0;
  while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) {
    width = width * 10 + (format[i++] - '0');
    if (width > 1000) return 0;  // no prmtop field is that wide: not understood
  }
  return width;
}

}  // namespace

PrmtopSections::PrmtopSections(const std::string& text, std::string source) : source_(std::move(source)) {
  Section* current = nullptr;
  bool title_pending = false;
  int line_number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = rstripped(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_number;
    if (line.rfind("%FLAG", 0) == 0) {
      const std::string flag = trimmed(line.substr(5));
      if (flag == "CTITLE")
        throw InputError(located(source_, line_number, 0,
                                 "%FLAG CTITLE: a CHAMBER prmtop (CHARMM force field converted by chamber) is not "
                                 "supported; use the CHARMM files (psf, parameters) directly"));
      current = &sections_[flag];
      *current = Section{flag, line_number, 0, {}, {}};
      title_pending = flag == "TITLE";
    } else if (line.rfind("%FORMAT", 0) == 0) {
      const std::size_t open = line.find('('), close = line.rfind(')');
      const int width = open == std::string::npos || close == std::string::npos || close < open
                            ? 0
                            : format_width(line.substr(open + 1, close - open - 1));
      if (current == nullptr || width <= 0)
        throw InputError(located(source_, line_number, 0,
                                 current == nullptr ? "%FORMAT before any %FLAG"
                                                    : fmt::format("%FLAG {}: %FORMAT '{}' is not understood: expected "
                                                                  "a Fortran format such as (10I8), (5E16.8), (20a4)",
                                                                  current->flag, line)));
      current->width = width;
    } else if (line.rfind("%VERSION", 0) == 0 || line.rfind("%COMMENT", 0) == 0) {
      continue;
    } else if (current == nullptr) {
      if (line.empty()) continue;
      throw InputError(located(source_, line_number, 0,
                               "not a new-style AMBER prmtop: no %FLAG line before the data; old-style prmtop files "
                               "(AMBER 6 and before) are not supported: convert it with ParmEd or write it with tleap"));
    } else if (title_pending) {
      current->items.push_back(line);  // the title as one item, whatever its format says
      current->item_line.push_back(line_number);
      title_pending = false;
    } else {
      if (current->width <= 0)
        throw InputError(located(source_, line_number, 0, fmt::format("%FLAG {}: data before its %FORMAT line",
                                                                      current->flag)));
      for (std::size_t i = 0; i < line.size(); i += static_cast<std::size_t>(current->width)) {
        current->items.push_back(trimmed(line.substr(i, static_cast<std::size_t>(current->width))));
        current->item_line.push_back(line_number);
      }
    }
  }
  last_line_ = line_number;
  if (sections_.empty())
    throw InputError(located(source_, 0, 0,
                             "not an AMBER prmtop: no %FLAG line (an empty file, or an old-style prmtop, which is not "
                             "supported)"));
}

const Section* PrmtopSections::find(const std::string& flag) const {
  const auto it = sections_.find(flag);
  return it == sections_.end() ? nullptr : &it->second;
}

const Section& PrmtopSections::require(const std::string& flag) const {
  const Section* s = find(flag);
  if (s == nullptr)
    throw InputError(located(source_, last_line_, 0,
                             fmt::format("%FLAG {} is missing: every prmtop written by tleap or ParmEd has it; the file "
                                         "may be truncated",
                                         flag)));
  return *s;
}

void PrmtopSections::fail(const Section& s, long item, const std::string& message) const {
  const int line = item >= 0 && static_cast<std::size_t>(item) < s.item_line.size()
                       ? s.item_line[static_cast<std::size_t>(item)]
                       : s.flag_line;
  throw InputError(located(source_, line, 0, fmt::format("%FLAG {}: {}", s.flag, message)));
}

void PrmtopSections::check_count(const Section& s, long expected, const std::string& what_expected) const {
  if (expected >= 0 && static_cast<long>(s.items.size()) != expected)
    fail(s, -1,
         fmt::format("has {} values, expected {} ({}); the file is truncated or inconsistent with %FLAG POINTERS",
                     s.items.size(), expected, what_expected));
}

std::vector<long> PrmtopSections::ints(const std::string& flag, long expected, const std::string& what) const {
  const Section& s = require(flag);
  check_count(s, expected, what);
  std::vector<long> values(s.items.size());
  for (std::size_t k = 0; k < s.items.size(); ++k) {
    const std::string& item = s.items[k];
    const char* first = item.data() + (!item.empty() && item[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(first, item.data() + item.size(), values[k]);
    if (ec != std::errc() || end != item.data() + item.size() || item.empty())
      fail(s, static_cast<long>(k), fmt::format("value {} '{}' is not an integer", k + 1, item));
  }
  return values;
}

std::vector<double> PrmtopSections::reals(const std::string& flag, long expected, const std::string& what) const {
  const Section& s = require(flag);
  check_count(s, expected, what);
  std::vector<double> values(s.items.size());
  for (std::size_t k = 0; k < s.items.size(); ++k) {
    std::string item = s.items[k];
    for (char& c : item)
      if (c == 'D' || c == 'd') c = 'E';  // Fortran's double-precision exponent
    char* end = nullptr;
    values[k] = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size())
      fail(s, static_cast<long>(k), fmt::format("value {} '{}' is not a number", k + 1, s.items[k]));
    if (!std::isfinite(values[k]))
      fail(s, static_cast<long>(k), fmt::format("value {} '{}' is not a finite number", k + 1, s.items[k]));
  }
  return values;
}

std::vector<std::string> PrmtopSections::strings(const std::string& flag, long expected,
                                                 const std::string& what) const {
  const Section& s = require(flag);
  check_count(s, expected, what);
  return s.items;
}

}  // namespace mdsim::amber
