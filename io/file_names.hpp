// Small checks on file names, shared by the readers that choose a format or gzip by extension.
#pragma once

#include <cctype>
#include <cstddef>
#include <string_view>

namespace mdsim {

// True when `s` ends with `suffix`, ignoring ASCII case (".PDB.GZ" ends with ".pdb.gz").
inline bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    const auto a = static_cast<unsigned char>(s[s.size() - suffix.size() + i]);
    if (std::tolower(a) != std::tolower(static_cast<unsigned char>(suffix[i]))) return false;
  }
  return true;
}

}  // namespace mdsim
