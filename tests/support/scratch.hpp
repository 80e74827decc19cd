// A fresh scratch folder for a test's files (one helper instead of a copy per test file).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace mdsim_test {

// <temp>/mdsim_<prefix>_<name>_<pid>, emptied and created again: the process id keeps the folders of
// test binaries running side by side (ctest -j) apart.
inline std::filesystem::path scratch_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("mdsim_" + prefix + "_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace mdsim_test
