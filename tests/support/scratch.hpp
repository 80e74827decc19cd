// Scratch folders for the files a test writes, in the system's temporary folder. Their names hold the test
// program's name (MDSIM_TEST_NAME: tests/CMakeLists.txt defines it as the CTest name, unique over tests/) and the
// process id, so that programs running side by side (ctest -j) never share a folder.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#ifndef MDSIM_TEST_NAME
#error "MDSIM_TEST_NAME (the test program's name) is defined by tests/CMakeLists.txt"
#endif

namespace mdsim_test {

// <temp>/mdsim_<test program>_<name>_<pid>, emptied and created again.
inline std::filesystem::path scratch(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("mdsim_" + std::string(MDSIM_TEST_NAME) + "_" + name + "_" +
                                                    std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// One folder for the whole test program, <temp>/mdsim_<test program>_<pid>, removed at exit: for the small
// input files the tests write and read back.
class ScratchFolder {
 public:
  ScratchFolder()
      : path_(std::filesystem::temp_directory_path() /
              ("mdsim_" + std::string(MDSIM_TEST_NAME) + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  // The path of the file `name` in the folder.
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` as it is (no newline conversion) into the file `name`; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

// The test program's ScratchFolder, made on first use.
inline const ScratchFolder& scratch_folder() {
  static const ScratchFolder folder;
  return folder;
}

}  // namespace mdsim_test
