#include "prepare/data_files.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"

namespace mdsim {

namespace fs = std::filesystem;

std::string find_data_file(const std::string& name) {
  // The same folders, in the same order, as bundled force fields (io/forcefield_xml bundled_dirs): an installed
  // binary takes its own share/mdsim/data, a build-tree binary the source tree's data/.
#ifdef MDSIM_SOURCE_DATA_DIR
  const std::vector<std::string> dirs = bundled_dirs("data", MDSIM_SOURCE_DATA_DIR);
#else
  const std::vector<std::string> dirs = bundled_dirs("data", "");
#endif
  std::error_code ec;
  std::string searched;
  for (const auto& dir : dirs) {
    const fs::path candidate = fs::path(dir) / name;
    if (fs::is_regular_file(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
    searched += (searched.empty() ? "" : ", ") + fs::weakly_canonical(dir, ec).string();
  }
  throw InputError(fmt::format(
      "bundled data file '{}' not found; searched the folders: {}; reinstall mdsim (it installs them under "
      "<prefix>/share/mdsim/data)",
      name, searched.empty() ? std::string("(none)") : searched));
}

}  // namespace mdsim
