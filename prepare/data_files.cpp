#include "prepare/data_files.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "common/errors.hpp"

namespace mdsim {

namespace fs = std::filesystem;

std::string find_data_file(const std::string& name) {
  // The same order as default_forcefield_dirs (io/forcefield_xml): an installed binary takes its own
  // share/mdsim/data, a build-tree binary the source tree's data/.
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path() / ".." / "share" / "mdsim" / "data");
#ifdef MDSIM_SOURCE_DATA_DIR
  dirs.emplace_back(MDSIM_SOURCE_DATA_DIR);
#endif
  std::string searched;
  for (const auto& dir : dirs) {
    const fs::path candidate = dir / name;
    if (fs::is_regular_file(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
    searched += (searched.empty() ? "" : ", ") + fs::weakly_canonical(dir, ec).string();
  }
  throw InputError(fmt::format(
      "bundled data file '{}' not found; searched the folders: {}; reinstall mdsim (it installs them under "
      "<prefix>/share/mdsim/data)",
      name, searched.empty() ? std::string("(none)") : searched));
}

}  // namespace mdsim
