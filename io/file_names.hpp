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

// The formats of `system.topology`, chosen by extension (docs/config.md).
enum class TopologyFormat { Unknown, SystemXml, AmberPrmtop, GromacsTop, CharmmPsf };

inline TopologyFormat topology_format(std::string_view path) {
  if (ends_with_ci(path, ".xml") || ends_with_ci(path, ".xml.gz")) return TopologyFormat::SystemXml;
  if (ends_with_ci(path, ".prmtop") || ends_with_ci(path, ".parm7") || ends_with_ci(path, ".top.amber"))
    return TopologyFormat::AmberPrmtop;
  if (ends_with_ci(path, ".top")) return TopologyFormat::GromacsTop;
  if (ends_with_ci(path, ".psf")) return TopologyFormat::CharmmPsf;
  return TopologyFormat::Unknown;
}

}  // namespace mdsim
