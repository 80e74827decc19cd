// The C-preprocessor subset GROMACS topologies use (grompp's cpp): #include, #define / #undef (with an optional
// value), #ifdef / #ifndef / #else / #endif (nested), defines given by the caller (-DPOSRES, -DFLEXIBLE),
// substitution of defined names in data lines (force fields write `#define gb_1 0.1000 1.5700e+07` and use `gb_1` in
// [bondtypes]), `;` comments and `\` line continuation. The result is the topology's data lines in reading order,
// each with the file and line it came from, for the readers' error messages.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mdsim {

struct GromacsLine {
  std::string file;  // the file the line is in (an included file's path for its lines)
  int line = 0;      // 1-based; a continued line keeps its first line's number
  std::string text;  // comment removed, defines substituted, blanks trimmed; never empty
  // The conditionals the line is under, innermost last: "POSRES" (#ifdef POSRES), "not FLEXIBLE" (#ifndef, or
  // an #ifdef's #else), joined by " and "; "" outside any (what a notice names: the define restraints need).
  std::string guard;
};

struct GromacsPreprocessorOptions {
  std::vector<std::string> include_dirs;                     // searched after the including file's folder
  std::vector<std::pair<std::string, std::string>> defines;  // NAME, value ("" = defined without value)
  bool search_environment = true;  // then $GMXLIB (':'-separated) and /usr/share/gromacs/top
};

// The folders searched for `#include "name"` from a file in `including_dir`, in order.
std::vector<std::string> gromacs_include_search_path(const std::string& including_dir,
                                                     const GromacsPreprocessorOptions& options);

// Reads `path` and every file it includes. InputError (file:line) for a file that cannot be read, an #include not
// found (listing every folder searched), an #else / #endif without #ifdef, an #ifdef left open at the end, an unknown
// directive, an include nested over 64 deep.
std::vector<GromacsLine> preprocess_gromacs(const std::string& path, const GromacsPreprocessorOptions& options);

}  // namespace mdsim
