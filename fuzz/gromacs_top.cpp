// libFuzzer target of the GROMACS topology reader (io/gromacs_top.hpp, with io/gromacs_preprocessor.hpp): the input is
// the text of a .top file. read_gromacs_top reads files (the preprocessor follows #include from the file's folder), so
// the input is written to topol.top in a scratch folder of this process (under $TMPDIR or /tmp); an #include finds
// only that file (itself), absolute paths and an installed GROMACS's force fields. Read with POSRES defined (the
// nonbonded settings are only copied into the System: one reading covers them).
// InputError is the documented outcome for bad input; any other exception, a sanitizer report, a crash, a timeout or
// a blow-up of memory is a finding, and so is an accepted model that breaks what the engine relies on
// (fuzz/system_checks.hpp).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.hpp"
#include "io/gromacs_top.hpp"
#include "system_checks.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() { return fs::temp_directory_path() / ("mdsim-fuzz-gromacs-top-" + std::to_string(::getpid())); }

void remove_scratch_dir() {
  std::error_code ec;
  fs::remove_all(scratch_dir(), ec);
}

const std::string& scratch_top() {
  static const std::string path = [] {
    fs::create_directories(scratch_dir());
    std::atexit(remove_scratch_dir);
    return (scratch_dir() / "topol.top").string();
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = scratch_top();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) std::abort();  // the scratch file could not be written: not the reader's fault, but stop
  }
  mdsim::TopologyFileOptions options;
  options.defines = {{"POSRES", ""}};
  options.atom_limit = 100000;  // as the engine gives the coordinates' count: no input builds more
  try {
    mdsim_fuzz::check_topology_file_model(mdsim::read_gromacs_top(path, options));
  } catch (const mdsim::InputError&) {
  }
  return 0;
}
